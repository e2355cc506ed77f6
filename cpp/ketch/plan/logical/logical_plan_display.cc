#include <sstream>

#include "ketch/plan/logical/lance_filter.h"
#include "ketch/plan/logical/logical_plan.h"
#include "ketch/plan/logical/plan_text.h"

// How a logical plan prints (explain): each node's label and details, and the tree.

namespace ketch {
namespace {

// Seconds as Python's repr of a float prints them (0.5, 2.0, 1e-06), for explain.
std::string FormatDouble(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  std::string text = out.str();
  // The shortest text that reads back as the same double.
  for (int digits = 1; digits <= 17; ++digits) {
    std::ostringstream shorter;
    shorter.precision(digits);
    shorter << value;
    if (std::stod(shorter.str()) == value) {
      text = shorter.str();
      break;
    }
  }
  if (text.find_first_of(".eni") == std::string::npos) text += ".0";
  return text;
}

}  // namespace

std::string JoinNames(const std::vector<std::string>& names) {
  std::ostringstream out;
  for (size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << names[i];
  return out.str();
}

std::string SchemaString(const arrow::Schema& schema) {
  std::ostringstream out;
  out << "{";
  for (int i = 0; i < schema.num_fields(); ++i) {
    out << (i ? ", " : "") << schema.field(i)->name() << ": " << schema.field(i)->type()->ToString();
  }
  out << "}";
  return out.str();
}

std::string PrettyType(const arrow::DataType& type) { return type.ToString(); }

std::string FileFormatName(FileFormat format) {
  switch (format) {
    case FileFormat::kParquet:
      return "Parquet";
    case FileFormat::kCsv:
      return "CSV";
    case FileFormat::kJson:
      return "JSON";
    case FileFormat::kLance:
      return "Lance";
    case FileFormat::kVideo:
      return "Video";
  }
  return "?";
}

std::string WriterName(FileFormat format) {
  switch (format) {
    case FileFormat::kParquet:
      return "write_parquet";
    case FileFormat::kCsv:
      return "write_csv";
    case FileFormat::kJson:
      return "write_json";
    case FileFormat::kLance:
      return "write_lance";
    case FileFormat::kVideo:
      break;
  }
  return "write";
}

std::string LogicalPlan::Label() const {
  switch (kind_) {
    case LogicalKind::kInMemorySource: {
      int64_t rows = 0;
      for (const auto& b : batches_) rows += b->num_rows();
      return "InMemorySource: " + std::to_string(batches_.size()) + " batches, " + std::to_string(rows) +
             " rows";
    }
    case LogicalKind::kScan:
      return "Scan" + FileFormatName(scan_.format) + ":";
    case LogicalKind::kProject: {
      std::vector<std::string> parts;
      for (const auto& e : exprs_) parts.push_back(e->ToString());
      return "Project: " + JoinNames(parts);
    }
    case LogicalKind::kFilter:
      return "Filter: " + predicate_->ToString();
    case LogicalKind::kLimit:
      if (offset_ == 0) return "Limit: " + std::to_string(limit_);
      if (limit_ == kNoLimit) return "Offset: " + std::to_string(offset_);
      return "Limit: " + std::to_string(limit_) + ", offset " + std::to_string(offset_);
    case LogicalKind::kWrite:
      return "Write" + FileFormatName(write_.format) + ":";
    case LogicalKind::kSort: {
      std::vector<std::string> parts;
      for (size_t i = 0; i < sort_.keys.size(); ++i) {
        parts.push_back(sort_.keys[i]->ToString() + (sort_.descending[i] ? " desc" : " asc") +
                        (sort_.nulls_first[i] ? " nulls first" : " nulls last"));
      }
      return "Sort: " + JoinNames(parts);
    }
    case LogicalKind::kWindow: {
      std::vector<std::string> parts;
      for (size_t i = 0; i < window_functions_.size(); ++i) {
        parts.push_back(window_functions_[i].function + "(" + window_functions_[i].input + ") as " +
                        window_functions_[i].output);
      }
      return "Window: " + JoinNames(parts) + " over (" + window_spec_.ToString() + ")";
    }
    case LogicalKind::kAggregate: {
      std::vector<std::string> aggs;
      for (const auto& e : aggregate_.aggregations) aggs.push_back(e->ToString());
      const char* phase = aggregate_.phase == AggregatePhase::kPartial ? " (partial)"
                          : aggregate_.phase == AggregatePhase::kFinal ? " (final)"
                                                                       : "";
      return std::string("Aggregate") + phase + ": " + JoinNames(aggs) +
             (aggregate_.group_by.empty() ? "" : ", Group by = " + JoinNames(aggregate_.group_by));
    }
    case LogicalKind::kJoin:
      return "Join: Type = " + JoinTypeName(join_.how) +
             (join_.how == JoinType::kCross
                  ? std::string()
                  : ", On = [" + JoinNames(join_.left_on) + "] = [" + JoinNames(join_.right_on) + "]") +
             (join_.strategy.empty() ? std::string() : ", Strategy = " + join_.strategy);
    case LogicalKind::kExplode:
      return "Explode: " + JoinNames(explode_columns_);
    case LogicalKind::kConcat:
      return "Concat";
    case LogicalKind::kSample:
      if (sample_.size >= 0) return "Sample: " + std::to_string(sample_.size) + " rows";
      return "Sample: fraction = " + std::to_string(sample_.fraction);
    case LogicalKind::kRepartition: {
      const std::string num =
          partitioning_.num_partitions < 0 ? "None (as input)" : std::to_string(partitioning_.num_partitions);
      if (partitioning_.by.empty()) return "Repartition: Scheme = Random, Num partitions = " + num;
      return "Repartition: Scheme = Hash, Num partitions = " + num + ", By = [" +
             JoinNames(partitioning_.by) + "]";
    }
    case LogicalKind::kIntoPartitions:
      return "IntoPartitions: Num partitions = " + std::to_string(partitioning_.num_partitions);
    case LogicalKind::kIntoBatches:
      return "IntoBatches: Batch size = " + std::to_string(partitioning_.batch_size);
    case LogicalKind::kMonotonicId:
      return "MonotonicallyIncreasingId: Column = " + id_column_;
  }
  return "?";
}

std::vector<std::string> LogicalPlan::Details() const {
  std::vector<std::string> out;
  if (kind_ == LogicalKind::kScan && scan_.format == FileFormat::kLance) {
    out.push_back("Dataset = " + scan_.lance.uri);
    out.push_back("Version = " + std::to_string(scan_.lance.version));
    out.push_back("Num fragments = " + std::to_string(scan_.files.size()));
    out.push_back("Projection pushdown = " +
                  (scan_.columns ? "[" + JoinNames(*scan_.columns) + "]" : "None"));
    const int num_data = scan_.file_schema->num_fields() - scan_.partition_schema->num_fields();
    arrow::FieldVector data_fields(scan_.file_schema->fields().begin(),
                                   scan_.file_schema->fields().begin() + num_data);
    const auto lance = TranslateLanceFilter(scan_.filter, arrow::Schema(data_fields));
    out.push_back("Lance filter = " + (lance.sql.empty() ? std::string("None") : lance.sql));
    std::vector<std::string> residual;
    for (const auto& conjunct : lance.residual) residual.push_back(conjunct->ToString());
    out.push_back("Filter after the scan = " +
                  (residual.empty() ? std::string("None") : JoinNames(residual)));
    out.push_back(
        "Limit pushdown = " + (scan_.limit >= 0 ? std::to_string(scan_.limit) : std::string("None")) +
        (scan_.limit >= 0 && !lance.residual.empty() ? " (applied by Ketch after the filter)" : ""));
    if (const auto& nearest = scan_.lance.nearest) {
      out.push_back("Nearest pushdown = ANN via index " + nearest->index_name + " (" + nearest->index_type +
                    ", " + nearest->metric + "): the " + std::to_string(nearest->k) + " rows nearest to a " +
                    std::to_string(nearest->query.size()) + "-dim query in '" + nearest->column +
                    "', nprobes " + std::to_string(nearest->nprobes) + ", refine factor " +
                    std::to_string(nearest->refine_factor) +
                    (lance.sql.empty() ? std::string() : ", after the Lance filter (prefilter)"));
    } else if (!scan_.lance.nearest_note.empty()) {
      out.push_back("Nearest pushdown = " + scan_.lance.nearest_note);
    }
    if (scan_.tasks) {
      out.push_back("Scan tasks = " + std::to_string(scan_.tasks->num_tasks()) + " (" + scan_.tasks->reason +
                    ")");
    }
    out.push_back("Output schema = " + SchemaString(*schema_));
  } else if (kind_ == LogicalKind::kScan) {
    out.push_back("Num files = " + std::to_string(scan_.files.size()));
    std::vector<std::string> shown;
    for (size_t i = 0; i < std::min<size_t>(3, scan_.files.size()); ++i) shown.push_back(scan_.files[i].path);
    if (scan_.files.size() > 3) shown.push_back("...");
    out.push_back("Paths = [" + JoinNames(shown) + "]");
    if (scan_.partition_schema->num_fields() > 0) {
      out.push_back("Partition columns = " + SchemaString(*scan_.partition_schema));
    }
    if (scan_.format == FileFormat::kVideo) {
      const VideoScanOptions& video = scan_.video;
      std::string frames =
          video.is_key_frame
              ? (*video.is_key_frame ? "key frames only (the others are not decoded)" : "non-key frames only")
              : "all";
      if (video.start_time > 0 || video.end_time) {
        frames += ", from " + FormatDouble(video.start_time) + " s (seek)" +
                  (video.end_time ? " to " + FormatDouble(*video.end_time) + " s" : std::string());
      }
      if (video.sample_interval_seconds) {
        frames += ", one every " + FormatDouble(*video.sample_interval_seconds) + " s";
      }
      out.push_back("Frames = " + frames);
      const bool pixels = !scan_.columns || std::find(scan_.columns->begin(), scan_.columns->end(), "data") !=
                                                scan_.columns->end();
      out.push_back(
          "Image size = " + std::to_string(video.image_height) + " x " + std::to_string(video.image_width) +
          (pixels ? " RGB (resized by the decoder's scaler)" : " (data not read: no RGB conversion)"));
    }
    out.push_back("Projection pushdown = " +
                  (scan_.columns ? "[" + JoinNames(*scan_.columns) + "]" : "None"));
    out.push_back("Filter pushdown = " + (scan_.filter ? scan_.filter->ToString() : "None"));
    out.push_back("Limit pushdown = " +
                  (scan_.limit >= 0 ? std::to_string(scan_.limit) : std::string("None")));
    if (scan_.tasks) {
      out.push_back("Scan tasks = " + std::to_string(scan_.tasks->num_tasks()) + " (" + scan_.tasks->reason +
                    ")");
      if (scan_.format == FileFormat::kParquet) {
        out.push_back(
            "Row groups = " + std::to_string(scan_.tasks->row_groups_total - scan_.tasks->row_groups_pruned) +
            " of " + std::to_string(scan_.tasks->row_groups_total) + " (" +
            std::to_string(scan_.tasks->row_groups_pruned) + " pruned by statistics)");
      }
      if (scan_.tasks->files_pruned > 0) {
        out.push_back("Files pruned by partition values = " + std::to_string(scan_.tasks->files_pruned));
      }
    }
    out.push_back("Output schema = " + SchemaString(*schema_));
  } else if (kind_ == LogicalKind::kWrite) {
    out.push_back("Root dir = " + write_.root_dir);
    if (write_.format == FileFormat::kParquet) out.push_back("Compression = " + write_.compression);
    if (!write_.partition_cols.empty()) {
      out.push_back("Partition cols = " + JoinNames(write_.partition_cols));
    }
  } else if (kind_ == LogicalKind::kInMemorySource) {
    out.push_back("Schema = " + SchemaString(*schema_));
    const auto partitions = NumPartitions(*this).count;
    if (partitions > 1) out.push_back("Num partitions = " + std::to_string(partitions));
  }
  return out;
}

std::string RenderPlanNode(const std::string& label, const std::vector<std::string>& details,
                           const std::vector<std::string>& inputs) {
  std::string out = "* " + label + "\n";
  for (const auto& detail : details) out += "|   " + detail + "\n";
  if (inputs.size() == 1) return out + "|\n" + inputs[0];
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += "|\n|--- input " + std::to_string(i) + ":\n";
    size_t start = 0;
    while (start < inputs[i].size()) {
      size_t end = inputs[i].find('\n', start);
      out += "|    " + inputs[i].substr(start, end - start) + "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return out;
}

std::string LogicalPlan::ToString() const {
  std::vector<std::string> inputs;
  for (const auto& input : inputs_) inputs.push_back(input->ToString());
  return RenderPlanNode(Label(), Details(), inputs);
}

}  // namespace ketch
