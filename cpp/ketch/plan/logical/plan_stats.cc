#include "ketch/plan/logical/plan_stats.h"

#include <arrow/extension_type.h>
#include <arrow/util/byte_size.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

namespace ketch {
namespace {

constexpr double kFilterSelectivity = 0.25;        // DuckDB-like default
constexpr double kTextBytesPerRow = 100;           // CSV/JSON rows from file bytes
constexpr double kVideoBytesPerFrame = 16 * 1024;  // video frames from compressed bytes (a guess)
constexpr double kVariableWidthBytes = 20;         // an offset and 16 bytes of data
constexpr double kListElements = 4;

double TypeWidth(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::NA:
      return 0;
    case arrow::Type::BOOL:
      return 1.0 / 8;
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::STRING_VIEW:
    case arrow::Type::BINARY_VIEW:
      return kVariableWidthBytes;
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::LIST_VIEW:
    case arrow::Type::LARGE_LIST_VIEW:
    case arrow::Type::MAP:
      return 4 + kListElements * TypeWidth(*type.field(0)->type());
    case arrow::Type::FIXED_SIZE_LIST: {
      const auto& list = static_cast<const arrow::FixedSizeListType&>(type);
      return list.list_size() * TypeWidth(*list.value_type());
    }
    case arrow::Type::STRUCT: {
      double width = 0;
      for (const auto& field : type.fields()) width += TypeWidth(*field->type()) + 1.0 / 8;
      return width;
    }
    case arrow::Type::DICTIONARY:
      return TypeWidth(*static_cast<const arrow::DictionaryType&>(type).index_type());
    case arrow::Type::EXTENSION:
      return TypeWidth(*static_cast<const arrow::ExtensionType&>(type).storage_type());
    default:
      if (arrow::is_fixed_width(type.id())) {
        return std::max(1, type.byte_width());
      }
      return kVariableWidthBytes;
  }
}

// Bytes per row of a node's input: its own average, or the schema's guess when it has no rows.
double RowWidth(const PlanStats& stats, const arrow::Schema& schema) {
  return stats.rows > 0 && stats.bytes > 0 ? stats.bytes / stats.rows : EstimatedRowWidth(schema);
}

// The scan's rows and bytes from its scan tasks (Parquet footers: rows and uncompressed sizes of
// the column chunks read; CSV/JSON: file bytes), or from its files before there are tasks.
// Without `with_bytes` only the rows (EstimateRows: no walk over the footers' column chunks).
void ScanStats(const LogicalPlan& plan, bool with_bytes, PlanStats* out) {
  const ScanInfo& scan = plan.scan();
  const int file_columns = scan.file_schema ? scan.file_schema->num_fields() : 0;
  // The share of a text file's bytes the projection reads.
  const double column_share = scan.columns && file_columns > 0
                                  ? std::min(1.0, static_cast<double>(scan.columns->size()) / file_columns)
                                  : 1.0;
  std::set<std::string> wanted;
  if (scan.columns) wanted.insert(scan.columns->begin(), scan.columns->end());
  std::map<const parquet::FileMetaData*, std::vector<int>> leaves;
  out->exact = scan.format == FileFormat::kParquet && scan.tasks != nullptr;
  double rows = 0, bytes = 0;
  if (scan.tasks) {
    for (const auto& task : scan.tasks->tasks) {
      const auto* metadata = task.file >= 0 && static_cast<size_t>(task.file) < scan.tasks->metadata.size()
                                 ? scan.tasks->metadata[task.file].get()
                                 : nullptr;
      if (scan.format == FileFormat::kVideo) {
        // Frames from compressed bytes (a guess: H.264 at a few Mbit/s), each as wide as the
        // decoded row (the schema knows the fixed image size).
        out->exact = false;
        const double frames = std::max(1.0, static_cast<double>(task.size_bytes) / kVideoBytesPerFrame);
        rows += frames;
        bytes += frames * EstimatedRowWidth(*plan.schema());
        continue;
      }
      if (task.num_rows < 0) {
        out->exact = false;
        rows += static_cast<double>(task.size_bytes) / kTextBytesPerRow;
        bytes += static_cast<double>(task.size_bytes) * column_share;
        continue;
      }
      rows += static_cast<double>(task.num_rows);
      if (!metadata) {
        bytes += static_cast<double>(task.num_rows) * EstimatedRowWidth(*plan.schema());
        continue;
      }
      if (!with_bytes) continue;
      // The leaf columns read, found once per file.
      auto [it, inserted] = leaves.try_emplace(metadata);
      if (inserted && scan.columns) {
        const auto* schema = metadata->schema();
        for (int c = 0; c < schema->num_columns(); ++c) {
          const auto path = schema->Column(c)->path()->ToDotVector();
          if (!path.empty() && wanted.count(path[0])) it->second.push_back(c);
        }
      }
      for (int rg : task.row_groups) {
        if (rg < 0 || rg >= metadata->num_row_groups()) continue;
        auto row_group = metadata->RowGroup(rg);
        if (!scan.columns) {
          bytes += static_cast<double>(row_group->total_byte_size());
          continue;
        }
        for (int c : it->second) {
          if (c < row_group->num_columns()) {
            bytes += static_cast<double>(row_group->ColumnChunk(c)->total_uncompressed_size());
          }
        }
      }
    }
  } else {
    out->exact = false;
    for (const auto& file : scan.files) {
      const double size = static_cast<double>(std::max<int64_t>(file.size_bytes, 0));
      if (scan.format == FileFormat::kVideo) {
        const double frames = std::max(1.0, size / kVideoBytesPerFrame);
        rows += frames;
        bytes += frames * EstimatedRowWidth(*plan.schema());
        continue;
      }
      rows += size / kTextBytesPerRow;
      bytes += size * column_share;
    }
  }
  if (scan.filter) {
    out->exact = false;
    out->has_selectivity = true;
    out->selectivity = kFilterSelectivity;
    rows *= kFilterSelectivity;
    bytes *= kFilterSelectivity;
  }
  if (scan.lance.nearest && rows > 0) {  // k rows (its one task's count), the filter applied before
    const double k = static_cast<double>(scan.lance.nearest->k);
    bytes *= k / rows;
    rows = k;
  }
  if (scan.limit >= 0 && rows > static_cast<double>(scan.limit)) {
    bytes *= static_cast<double>(scan.limit) / rows;
    rows = static_cast<double>(scan.limit);
  }
  out->rows = rows;
  out->bytes = bytes;
}

// `rows` rows of `plan`'s output, at its (first) input's bytes per row scaled by the ratio of the
// estimated widths of the output and input schemas.
double ScaledBytes(const LogicalPlan& plan, const PlanStats& input, double rows) {
  const arrow::Schema& in_schema = *plan.inputs()[0]->schema();
  const double ratio = EstimatedRowWidth(*plan.schema()) / EstimatedRowWidth(in_schema);
  return rows * RowWidth(input, in_schema) * ratio;
}

std::string WithThousands(double value) {
  const auto rounded = static_cast<int64_t>(std::llround(std::max(0.0, value)));
  std::string digits = std::to_string(rounded);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

double EstimatedRowWidth(const arrow::Schema& schema) {
  double width = 0;
  for (const auto& field : schema.fields()) width += TypeWidth(*field->type()) + 1.0 / 8;
  return std::max(1.0, width);
}

namespace {

// EstimateStats; without `full` only rows and bytes of the nodes above scans (no partition counts,
// no Parquet column sizes): what EstimateRows needs, cheaply.
PlanStats Estimate(const LogicalPlan& plan, bool full) {
  PlanStats out;
  if (full) {
    const auto partitions = NumPartitions(plan);
    out.num_partitions = partitions.count;
    out.partitions_exact = partitions.exact;
  }
  auto input = [&](size_t i) { return Estimate(*plan.inputs()[i], full); };
  switch (plan.kind()) {
    case LogicalKind::kInMemorySource:
      for (const auto& batch : plan.batches()) {
        out.rows += static_cast<double>(batch->num_rows());
        auto size = arrow::util::ReferencedBufferSize(*batch);
        out.bytes += static_cast<double>(size.ok() ? *size : arrow::util::TotalBufferSize(*batch));
      }
      out.exact = out.bytes_exact = true;
      return out;
    case LogicalKind::kScan:
      ScanStats(plan, full, &out);
      return out;
    case LogicalKind::kFilter: {
      const auto in = input(0);
      out.has_selectivity = true;
      out.selectivity = kFilterSelectivity;
      out.rows = in.rows * kFilterSelectivity;
      out.bytes = in.bytes * kFilterSelectivity;
      return out;
    }
    case LogicalKind::kLimit: {
      const auto in = input(0);
      out.rows = std::min(std::max(0.0, in.rows - static_cast<double>(plan.offset())),
                          static_cast<double>(plan.limit()));
      out.bytes = out.rows * RowWidth(in, *plan.schema());
      out.exact = in.exact;
      return out;
    }
    case LogicalKind::kAggregate: {
      const auto in = input(0);
      const bool global = plan.aggregate().group_by.empty();
      out.rows = global ? 1.0 : in.rows / 10;
      out.exact = global;
      out.bytes = ScaledBytes(plan, in, out.rows);
      return out;
    }
    case LogicalKind::kSample: {
      const auto in = input(0);
      if (plan.sample().size >= 0) {
        out.rows = static_cast<double>(plan.sample().size);
        out.bytes = in.rows > 0 ? in.bytes * std::min(1.0, out.rows / in.rows) : 0.0;
        return out;
      }
      out.rows = in.rows * plan.sample().fraction;
      out.bytes = in.bytes * plan.sample().fraction;
      return out;
    }
    case LogicalKind::kConcat: {
      const auto a = input(0), b = input(1);
      out.rows = a.rows + b.rows;
      out.bytes = a.bytes + b.bytes;
      out.exact = a.exact && b.exact;
      return out;
    }
    case LogicalKind::kJoin: {
      const auto left = input(0), right = input(1);
      switch (plan.join().how) {
        case JoinType::kInner:
          out.rows = std::max(left.rows, right.rows);
          break;
        case JoinType::kRight:
          out.rows = right.rows;
          break;
        case JoinType::kOuter:
          out.rows = left.rows + right.rows;
          break;
        case JoinType::kCross:
          out.rows = left.rows * right.rows;
          out.exact = left.exact && right.exact;
          break;
        default:
          out.rows = left.rows;
      }
      const double width =
          plan.join().how == JoinType::kSemi || plan.join().how == JoinType::kAnti
              ? RowWidth(left, *plan.inputs()[0]->schema())
              : RowWidth(left, *plan.inputs()[0]->schema()) + RowWidth(right, *plan.inputs()[1]->schema());
      out.bytes = out.rows * width;
      return out;
    }
    case LogicalKind::kProject: {
      const auto in = input(0);
      out.rows = in.rows;
      out.exact = in.exact;
      out.bytes = ScaledBytes(plan, in, out.rows);
      return out;
    }
    case LogicalKind::kSort:
    case LogicalKind::kWindow:
    case LogicalKind::kRepartition:
    case LogicalKind::kIntoPartitions:
    case LogicalKind::kIntoBatches: {
      const auto in = input(0);
      out.rows = in.rows;
      out.bytes = in.bytes;
      out.exact = in.exact;
      return out;
    }
    case LogicalKind::kMonotonicId: {
      const auto in = input(0);
      out.rows = in.rows;
      out.bytes = in.bytes + 8 * in.rows;
      out.exact = in.exact;
      return out;
    }
    case LogicalKind::kExplode:
    case LogicalKind::kWrite: {
      const auto in = input(0);
      out.rows = in.rows;
      out.bytes = in.bytes;
      return out;
    }
  }
  return out;
}

}  // namespace

PlanStats EstimateStats(const LogicalPlan& plan) { return Estimate(plan, true); }

double EstimateRows(const LogicalPlan& plan) { return Estimate(plan, false).rows; }

std::string FormatBytes(double bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  bytes = std::max(0.0, bytes);
  if (bytes < 1024) return std::to_string(static_cast<int64_t>(std::llround(bytes))) + " B";
  int unit = -1;
  while (bytes >= 1024 && unit < 3) {
    bytes /= 1024;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f %s", bytes, kUnits[unit]);
  return buffer;
}

std::string StatsLine(const PlanStats& stats) {
  std::string out = "Stats = { ";
  out += (stats.exact ? "Num rows = " : "Approx num rows = ") + WithThousands(stats.rows);
  out += (stats.bytes_exact ? ", Size bytes = " : ", Approx size bytes = ") + FormatBytes(stats.bytes);
  if (stats.has_selectivity) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.2f", stats.selectivity);
    out += ", Selectivity = " + std::string(buffer);
  }
  out += (stats.partitions_exact ? ", Num partitions = " : ", Approx num partitions = ") +
         std::to_string(stats.num_partitions) + " }";
  return out;
}

std::string PlanToStringWithStats(const LogicalPlan& plan) {
  std::vector<std::string> inputs;
  for (const auto& input : plan.inputs()) inputs.push_back(PlanToStringWithStats(*input));
  auto details = plan.Details();
  details.push_back(StatsLine(EstimateStats(plan)));
  return RenderPlanNode(plan.Label(), details, inputs);
}

}  // namespace ketch
