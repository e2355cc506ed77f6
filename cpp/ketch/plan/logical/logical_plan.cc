#include "ketch/plan/logical/logical_plan.h"

#include <set>
#include <sstream>

namespace ketch {
namespace {

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

arrow::Result<std::shared_ptr<arrow::Schema>> ScanOutputSchema(const ParquetScanInfo& info) {
  if (!info.columns) return info.file_schema;
  arrow::FieldVector fields;
  for (const auto& name : *info.columns) {
    auto field = info.file_schema->GetFieldByName(name);
    if (!field) return arrow::Status::KeyError("column '", name, "' is not in the Parquet files");
    fields.push_back(field);
  }
  return arrow::schema(fields);
}

}  // namespace

arrow::Result<LogicalPlanPtr> LogicalPlan::InMemory(
    std::shared_ptr<arrow::Schema> schema, std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kInMemorySource;
  node->schema_ = std::move(schema);
  node->batches_ = std::move(batches);
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::ParquetScan(ParquetScanInfo info) {
  if (info.paths.empty()) return arrow::Status::Invalid("read_parquet: no files to read");
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kParquetScan;
  ARROW_ASSIGN_OR_RAISE(node->schema_, ScanOutputSchema(info));
  if (info.filter) {
    ARROW_ASSIGN_OR_RAISE(auto field, ResolveField(*info.filter, *info.file_schema));
    if (field->type()->id() != arrow::Type::BOOL) {
      return arrow::Status::TypeError("scan filter must be Boolean, got ", field->type()->ToString());
    }
  }
  node->scan_ = std::move(info);
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Project(LogicalPlanPtr input, std::vector<ExprPtr> exprs) {
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kProject;
  arrow::FieldVector fields;
  std::set<std::string> seen;
  for (const auto& expr : exprs) {
    ARROW_ASSIGN_OR_RAISE(auto field, ResolveField(*expr, *input->schema()));
    if (!seen.insert(field->name()).second) {
      return arrow::Status::Invalid("duplicate column name '", field->name(),
                                    "' in select; rename one with .alias()");
    }
    fields.push_back(field);
  }
  node->schema_ = arrow::schema(fields);
  node->exprs_ = std::move(exprs);
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Filter(LogicalPlanPtr input, ExprPtr predicate) {
  ARROW_ASSIGN_OR_RAISE(auto field, ResolveField(*predicate, *input->schema()));
  if (field->type()->id() != arrow::Type::BOOL) {
    return arrow::Status::TypeError("where() needs a Boolean predicate, but ", predicate->ToString(),
                                    " has type ", field->type()->ToString());
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kFilter;
  node->schema_ = input->schema();
  node->predicate_ = std::move(predicate);
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Limit(LogicalPlanPtr input, int64_t limit) {
  if (limit < 0) return arrow::Status::Invalid("limit must be >= 0, got ", limit);
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kLimit;
  node->schema_ = input->schema();
  node->limit_ = limit;
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::WriteParquet(LogicalPlanPtr input, WriteParquetInfo info) {
  static const std::set<std::string> kCodecs = {"snappy", "zstd", "gzip", "lz4", "brotli", "none"};
  if (!kCodecs.count(info.compression)) {
    return arrow::Status::Invalid("write_parquet: unknown compression '", info.compression,
                                  "' (one of snappy, zstd, gzip, lz4, brotli, none)");
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kWriteParquet;
  node->schema_ = arrow::schema({arrow::field("path", arrow::utf8())});
  node->write_ = std::move(info);
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::WithInputs(std::vector<LogicalPlanPtr> inputs) const {
  switch (kind_) {
    case LogicalKind::kInMemorySource:
      return InMemory(schema_, batches_);
    case LogicalKind::kParquetScan:
      return ParquetScan(scan_);
    case LogicalKind::kProject:
      return Project(inputs[0], exprs_);
    case LogicalKind::kFilter:
      return Filter(inputs[0], predicate_);
    case LogicalKind::kLimit:
      return Limit(inputs[0], limit_);
    case LogicalKind::kWriteParquet:
      return WriteParquet(inputs[0], write_);
  }
  return arrow::Status::NotImplemented("unknown plan node");
}

std::string LogicalPlan::Label() const {
  switch (kind_) {
    case LogicalKind::kInMemorySource: {
      int64_t rows = 0;
      for (const auto& b : batches_) rows += b->num_rows();
      return "InMemorySource: " + std::to_string(batches_.size()) + " batches, " + std::to_string(rows) +
             " rows";
    }
    case LogicalKind::kParquetScan:
      return "ParquetScan:";
    case LogicalKind::kProject: {
      std::vector<std::string> parts;
      for (const auto& e : exprs_) parts.push_back(e->ToString());
      return "Project: " + JoinNames(parts);
    }
    case LogicalKind::kFilter:
      return "Filter: " + predicate_->ToString();
    case LogicalKind::kLimit:
      return "Limit: " + std::to_string(limit_);
    case LogicalKind::kWriteParquet:
      return "WriteParquet:";
  }
  return "?";
}

std::vector<std::string> LogicalPlan::Details() const {
  std::vector<std::string> out;
  if (kind_ == LogicalKind::kParquetScan) {
    out.push_back("Num files = " + std::to_string(scan_.paths.size()));
    std::vector<std::string> shown(scan_.paths.begin(),
                                   scan_.paths.begin() + std::min<size_t>(3, scan_.paths.size()));
    if (scan_.paths.size() > 3) shown.push_back("...");
    out.push_back("Paths = [" + JoinNames(shown) + "]");
    out.push_back("Projection pushdown = " +
                  (scan_.columns ? "[" + JoinNames(*scan_.columns) + "]" : "None"));
    out.push_back("Filter pushdown = " + (scan_.filter ? scan_.filter->ToString() : "None"));
    out.push_back("Output schema = " + SchemaString(*schema_));
  } else if (kind_ == LogicalKind::kWriteParquet) {
    out.push_back("Root dir = " + write_.root_dir);
    out.push_back("Compression = " + write_.compression);
  } else if (kind_ == LogicalKind::kInMemorySource) {
    out.push_back("Schema = " + SchemaString(*schema_));
  }
  return out;
}

std::string RenderPlanTree(const std::vector<std::pair<std::string, std::vector<std::string>>>& nodes) {
  std::ostringstream out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i) out << "|\n";
    out << "* " << nodes[i].first << "\n";
    for (const auto& detail : nodes[i].second) out << "|   " << detail << "\n";
  }
  return out.str();
}

std::string LogicalPlan::ToString() const {
  std::vector<std::pair<std::string, std::vector<std::string>>> nodes;
  for (const LogicalPlan* node = this; node != nullptr;
       node = node->inputs_.empty() ? nullptr : node->inputs_[0].get()) {
    nodes.emplace_back(node->Label(), node->Details());
  }
  return RenderPlanTree(nodes);
}

}  // namespace ketch
