#include "ketch/plan/logical/logical_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "ketch/expr/key_storage.h"
#include "ketch/plan/logical/aggregate_phases.h"
#include "ketch/plan/logical/lance_filter.h"
#include "ketch/plan/logical/more_aggregations.h"
#include "ketch/plan/logical/plan_text.h"

// The logical plan nodes: each constructor checks its inputs and derives the output schema. The
// rest of LogicalPlan lives beside it: display (logical_plan_display.cc), join specs (join_spec.cc),
// aggregation resolution (aggregate_resolution.cc), partitions and depth (plan_partitions.cc).

namespace ketch {
namespace {

arrow::Result<std::shared_ptr<arrow::Schema>> ScanOutputSchema(const ScanInfo& info) {
  if (!info.columns) return info.file_schema;
  arrow::FieldVector fields;
  for (const auto& name : *info.columns) {
    auto field = info.file_schema->GetFieldByName(name);
    if (!field) {
      return arrow::Status::KeyError("column '", name, "' is not in the ", FileFormatName(info.format),
                                     " files");
    }
    fields.push_back(field);
  }
  return arrow::schema(fields);
}

}  // namespace

arrow::Result<LogicalPlanPtr> LogicalPlan::InMemory(std::shared_ptr<arrow::Schema> schema,
                                                    std::vector<std::shared_ptr<arrow::RecordBatch>> batches,
                                                    std::vector<int64_t> partitions, int64_t first_row) {
  if (first_row < 0) return arrow::Status::Invalid("in-memory source: first row ", first_row, " is negative");
  if (!partitions.empty() && partitions.size() != batches.size()) {
    return arrow::Status::Invalid("in-memory source: ", partitions.size(), " partition numbers for ",
                                  batches.size(), " batches");
  }
  for (size_t i = 1; i < partitions.size(); ++i) {
    if (partitions[i] < partitions[i - 1]) {
      return arrow::Status::Invalid("in-memory source: partition numbers must not decrease");
    }
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kInMemorySource;
  node->schema_ = std::move(schema);
  node->batches_ = std::move(batches);
  node->batch_partitions_ = std::move(partitions);
  node->first_row_ = first_row;
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Scan(ScanInfo info) {
  if (info.files.empty()) return arrow::Status::Invalid("scan: no files to read");
  if (!info.partition_schema) info.partition_schema = arrow::schema({});
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kScan;
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
    if (ContainsWindowCall(*expr)) {
      return arrow::Status::Invalid("window expressions are computed by select / with_column(s) only: ",
                                    expr->ToString());
    }
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
  if (ContainsWindowCall(*predicate)) {
    return arrow::Status::Invalid(
        "window expressions cannot be used in a filter (compute them with with_column "
        "first): ",
        predicate->ToString());
  }
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

arrow::Result<LogicalPlanPtr> LogicalPlan::Limit(LogicalPlanPtr input, int64_t limit, int64_t offset) {
  if (limit < 0) return arrow::Status::Invalid("limit must be >= 0, got ", limit);
  if (offset < 0) return arrow::Status::Invalid("offset must be >= 0, got ", offset);
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kLimit;
  node->schema_ = input->schema();
  node->limit_ = limit;
  node->offset_ = offset;
  node->inputs_ = {std::move(input)};
  return node;
}

int64_t LogicalPlan::limit_end() const { return limit_ > kNoLimit - offset_ ? kNoLimit : limit_ + offset_; }

arrow::Result<LogicalPlanPtr> LogicalPlan::Write(LogicalPlanPtr input, WriteInfo info) {
  static const std::set<std::string> kCodecs = {"snappy", "zstd", "gzip", "lz4", "brotli", "none"};
  const std::string writer = WriterName(info.format);
  if (info.format == FileFormat::kLance) {
    return arrow::Status::NotImplemented(
        "Lance datasets are written by write_lance (pylance), not the file sink");
  }
  if (info.format == FileFormat::kVideo) return arrow::Status::NotImplemented("video files are not written");
  if (info.format == FileFormat::kParquet && !kCodecs.count(info.compression)) {
    return arrow::Status::Invalid(writer, ": unknown compression '", info.compression,
                                  "' (one of snappy, zstd, gzip, lz4, brotli, none)");
  }
  const auto& in = *input->schema();
  arrow::FieldVector fields = {arrow::field("path", arrow::utf8())};
  std::set<std::string> seen;
  for (const auto& name : info.partition_cols) {
    auto field = in.GetFieldByName(name);
    if (!field) return arrow::Status::KeyError(writer, ": partition column '", name, "' not found");
    if (!seen.insert(name).second) {
      return arrow::Status::Invalid(writer, ": partition column '", name, "' given twice");
    }
    const auto& type = *field->type();
    if (!arrow::is_primitive(type.id()) && !arrow::is_string(type.id()) &&
        type.id() != arrow::Type::DECIMAL128 && type.id() != arrow::Type::DICTIONARY) {
      return arrow::Status::Invalid(writer, ": partition column '", name, "' has type ", type.ToString(),
                                    ", which cannot be a directory name (use numbers, strings, "
                                    "booleans, dates or timestamps)");
    }
    fields.push_back(field);
  }
  if (!info.partition_cols.empty() && info.partition_cols.size() == static_cast<size_t>(in.num_fields())) {
    return arrow::Status::Invalid(writer, ": every column is a partition column; the files would be empty");
  }
  fields.push_back(arrow::field("num_rows", arrow::int64()));
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kWrite;
  node->schema_ = arrow::schema(fields);
  node->write_ = std::move(info);
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Sort(LogicalPlanPtr input, SortSpec spec) {
  if (spec.keys.empty()) return arrow::Status::Invalid("sort() needs at least one key");
  if (spec.descending.size() != spec.keys.size() || spec.nulls_first.size() != spec.keys.size()) {
    return arrow::Status::Invalid("sort(): desc and nulls_first need one value per key");
  }
  for (const auto& key : spec.keys) {
    if (key->kind() != ExprKind::kColumn) {
      return arrow::Status::NotImplemented(
          "sort keys must be columns (add computed keys with with_column), got ", key->ToString());
    }
    ARROW_ASSIGN_OR_RAISE(auto field, ResolveField(*key, *input->schema()));
    ARROW_RETURN_NOT_OK(CheckKeyColumn("sort", "sort by", field->name(), *field->type(), KeyUse::kOrder));
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kSort;
  node->schema_ = input->schema();
  node->sort_ = std::move(spec);
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Aggregate(LogicalPlanPtr input, AggregateSpec spec) {
  for (const auto& agg : spec.aggregations) {
    if (ContainsWindowCall(*agg)) {
      return arrow::Status::Invalid("window expressions cannot be used in an aggregation: ", agg->ToString());
    }
  }
  if (spec.phase != AggregatePhase::kFinal && spec.source_schema) {
    return arrow::Status::Invalid("aggregate: only a final phase takes a source schema");
  }
  if (spec.phase == AggregatePhase::kFinal && !spec.source_schema) {
    return arrow::Status::Invalid("aggregate: a final phase needs the source schema of its partial phase");
  }
  // The schema the aggregations resolve against: the partial phase's input for a final phase.
  const std::shared_ptr<arrow::Schema> source =
      spec.phase == AggregatePhase::kFinal ? spec.source_schema : input->schema();
  if (spec.phase == AggregatePhase::kFinal) {
    // The input must carry the partial states (by name; types are cast when merged).
    ARROW_ASSIGN_OR_RAISE(auto states, PartialAggregateSchema(spec, *source));
    for (const auto& field : states->fields()) {
      if (!input->schema()->GetFieldByName(field->name())) {
        return arrow::Status::Invalid("final aggregate: input has no partial-state column '", field->name(),
                                      "'");
      }
    }
  }
  // Aggregations of computed inputs ((col(a) * col(b)).sum()): the inputs become columns of a
  // projection below the aggregate; each aggregation keeps its output name. (Only for the full
  // phase: the phases are split from a full aggregate whose inputs are columns already.)
  std::vector<ExprPtr> computed;
  for (auto& agg : spec.aggregations) {
    if (spec.phase != AggregatePhase::kFull) break;
    const Expr* call = agg.get();
    if (call->kind() == ExprKind::kAlias) call = call->children()[0].get();
    if (call->kind() != ExprKind::kCall || call->name().rfind("agg_", 0) != 0 ||
        call->children().size() != 1 || call->children()[0]->kind() == ExprKind::kColumn) {
      continue;
    }
    const std::string name = "__agg_input_" + std::to_string(computed.size());
    computed.push_back(Expr::Alias(call->children()[0], name));
    agg = Expr::Alias(call->WithChildren({Expr::Column(name)}), agg->OutputName());
  }
  if (!computed.empty()) {
    std::vector<ExprPtr> exprs;
    for (const auto& field : input->schema()->fields()) exprs.push_back(Expr::Column(field->name()));
    exprs.insert(exprs.end(), computed.begin(), computed.end());
    ARROW_ASSIGN_OR_RAISE(input, Project(input, std::move(exprs)));
  }
  arrow::FieldVector fields;
  std::set<std::string> seen;
  for (const auto& key : spec.group_by) {
    ARROW_ASSIGN_OR_RAISE(
        auto field,
        ResolveField(*Expr::Column(key), spec.phase == AggregatePhase::kFinal ? *source : *input->schema()));
    const bool distinct = spec.aggregations.empty();
    ARROW_RETURN_NOT_OK(CheckKeyColumn(distinct ? "distinct" : "groupby",
                                       distinct ? "deduplicate by" : "group by", key, *field->type(),
                                       KeyUse::kHash));
    if (!seen.insert(key).second) return arrow::Status::Invalid("duplicate group-by key '", key, "'");
    fields.push_back(field);
  }
  const arrow::Schema& resolve_in = spec.phase == AggregatePhase::kFinal ? *source : *input->schema();
  for (const auto& agg : spec.aggregations) {
    ARROW_ASSIGN_OR_RAISE(auto info, ResolveAggregation(agg, resolve_in));
    if (!seen.insert(info.output).second) {
      return arrow::Status::Invalid("duplicate output column '", info.output,
                                    "' in agg(); rename with .alias()");
    }
    fields.push_back(arrow::field(info.output, info.output_type));
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kAggregate;
  if (spec.phase == AggregatePhase::kPartial) {
    ARROW_ASSIGN_OR_RAISE(node->schema_, PartialAggregateSchema(spec, *input->schema()));
  } else {
    node->schema_ = arrow::schema(fields);
  }
  node->aggregate_ = std::move(spec);
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Join(LogicalPlanPtr left, LogicalPlanPtr right, JoinSpec spec) {
  ARROW_RETURN_NOT_OK(ValidateJoinStrategy(spec.strategy, spec.how));
  if (spec.how == JoinType::kCross) {
    if (!spec.left_on.empty() || !spec.right_on.empty()) {
      return arrow::Status::Invalid("In a cross join, `on`, `left_on`, and `right_on` cannot be set");
    }
  } else if (spec.left_on.empty() || spec.left_on.size() != spec.right_on.size()) {
    return arrow::Status::Invalid("join needs the same number (>= 1) of left and right keys, got ",
                                  spec.left_on.size(), " and ", spec.right_on.size());
  }
  std::set<std::string> merged_right_keys;
  std::map<std::string, std::shared_ptr<arrow::DataType>> merged_types;
  for (size_t i = 0; i < spec.left_on.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto l, ResolveField(*Expr::Column(spec.left_on[i]), *left->schema()));
    ARROW_ASSIGN_OR_RAISE(auto r, ResolveField(*Expr::Column(spec.right_on[i]), *right->schema()));
    const bool same = l->type()->Equals(*r->type());
    const bool both_strings = arrow::is_string(l->type()->id()) && arrow::is_string(r->type()->id());
    const bool both_ints = arrow::is_integer(l->type()->id()) && arrow::is_integer(r->type()->id());
    if (!same && !both_strings && !both_ints) {
      return arrow::Status::TypeError("cannot join left column '", l->name(), "' of type ",
                                      PrettyType(*l->type()), " with right column '", r->name(), "' of type ",
                                      PrettyType(*r->type()));
    }
    ARROW_RETURN_NOT_OK(CheckKeyColumn("join", "join on", l->name(), *l->type(), KeyUse::kHash));
    if (spec.left_on[i] == spec.right_on[i]) {
      merged_right_keys.insert(spec.right_on[i]);
      if (auto common = JoinKeyCast(*l->type(), *r->type())) merged_types[l->name()] = common;
    }
  }
  arrow::FieldVector fields = left->schema()->fields();
  // A merged key carries values of both sides: output it in the common type.
  for (auto& field : fields) {
    auto it = merged_types.find(field->name());
    if (it != merged_types.end()) field = field->WithType(it->second);
  }
  if (spec.how == JoinType::kRight) {
    // Merged keys take the right side's values; nullability follows the kept side.
    for (auto& field : fields) {
      if (merged_right_keys.count(field->name())) field = field->WithNullable(true);
    }
  }
  if (spec.how != JoinType::kSemi && spec.how != JoinType::kAnti) {
    std::set<std::string> names;
    for (const auto& f : fields) names.insert(f->name());
    for (const auto& field : right->schema()->fields()) {
      if (merged_right_keys.count(field->name())) continue;
      std::string name = field->name();
      if (names.count(name) && spec.prefix.empty() && spec.suffix.empty()) {
        return arrow::Status::Invalid("join output would have two columns named '", name, "'");
      }
      // Daft's rule: prefix/suffix again until the name is new ("right.right.x").
      while (names.count(name)) name = spec.prefix + name + spec.suffix;
      names.insert(name);
      fields.push_back(field->WithName(name));
    }
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kJoin;
  node->schema_ = arrow::schema(fields);
  node->join_ = std::move(spec);
  node->inputs_ = {std::move(left), std::move(right)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Explode(LogicalPlanPtr input, std::vector<std::string> columns) {
  if (columns.empty()) return arrow::Status::Invalid("explode() needs at least one column");
  arrow::FieldVector fields = input->schema()->fields();
  for (const auto& name : columns) {
    int index = input->schema()->GetFieldIndex(name);
    if (index < 0) {
      ARROW_RETURN_NOT_OK(ResolveField(*Expr::Column(name), *input->schema()).status());
    }
    const auto& type = fields[index]->type();
    if (!arrow::is_list(type->id()) && type->id() != arrow::Type::FIXED_SIZE_LIST) {
      return arrow::Status::TypeError("explode() needs list columns, but '", name, "' has type ",
                                      PrettyType(*type));
    }
    fields[index] = arrow::field(name, type->field(0)->type());
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kExplode;
  node->schema_ = arrow::schema(fields);
  node->explode_columns_ = std::move(columns);
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Concat(LogicalPlanPtr first, LogicalPlanPtr second) {
  if (!first->schema()->Equals(*second->schema(), /*check_metadata=*/false)) {
    return arrow::Status::TypeError("concat() needs equal schemas, got ", SchemaString(*first->schema()),
                                    " and ", SchemaString(*second->schema()));
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kConcat;
  node->schema_ = first->schema();
  node->inputs_ = {std::move(first), std::move(second)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Sample(LogicalPlanPtr input, SampleSpec spec) {
  if (spec.size < -1 || spec.size > kMaxSampleSizeRows) {
    return arrow::Status::Invalid("sample() size must be in [0, ", kMaxSampleSizeRows, "], got ", spec.size);
  }
  if (spec.size < 0 && (!(spec.fraction >= 0.0) || (!spec.with_replacement && spec.fraction > 1.0))) {
    return arrow::Status::Invalid("sample() fraction must be in [0, 1] without replacement, got ",
                                  spec.fraction);
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kSample;
  node->schema_ = input->schema();
  node->sample_ = spec;
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::Repartition(LogicalPlanPtr input, PartitionSpec spec) {
  if (spec.num_partitions < 1 && spec.num_partitions != -1) {
    return arrow::Status::Invalid("repartition(): num must be a positive integer or None, got ",
                                  spec.num_partitions);
  }
  if (spec.num_partitions > kMaxPartitions) {
    return arrow::Status::Invalid("repartition(): ", spec.num_partitions,
                                  " partitions is more than Ketch supports (at most ", kMaxPartitions,
                                  "; every partition costs memory and a task even when empty)");
  }
  for (const auto& name : spec.by) {
    auto field = input->schema()->GetFieldByName(name);
    if (!field) {
      return arrow::Status::KeyError("repartition(): partition_by names no column '", name, "'; columns are ",
                                     SchemaString(*input->schema()));
    }
    ARROW_RETURN_NOT_OK(CheckKeyColumn("repartition()", "partition by", name, *field->type(), KeyUse::kHash));
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kRepartition;
  node->schema_ = input->schema();
  node->partitioning_ = std::move(spec);
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::IntoPartitions(LogicalPlanPtr input, int64_t num_partitions) {
  if (num_partitions < 1) {
    return arrow::Status::Invalid("into_partitions(): num must be a positive integer, got ", num_partitions);
  }
  if (num_partitions > kMaxPartitions) {
    return arrow::Status::Invalid("into_partitions(): ", num_partitions,
                                  " partitions is more than Ketch supports (at most ", kMaxPartitions,
                                  "; every partition costs memory and a task even when empty)");
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kIntoPartitions;
  node->schema_ = input->schema();
  node->partitioning_.num_partitions = num_partitions;
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::IntoBatches(LogicalPlanPtr input, int64_t batch_size) {
  if (batch_size < 1) {
    return arrow::Status::Invalid("into_batches(): batch_size must be a positive integer, got ", batch_size);
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kIntoBatches;
  node->schema_ = input->schema();
  node->partitioning_.batch_size = batch_size;
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::MonotonicId(LogicalPlanPtr input, std::string column) {
  if (input->schema()->GetFieldIndex(column) >= 0) {
    return arrow::Status::Invalid("monotonically_increasing_id(): the input already has a column named '",
                                  column, "'");
  }
  auto node = std::make_shared<LogicalPlan>();
  node->kind_ = LogicalKind::kMonotonicId;
  ARROW_ASSIGN_OR_RAISE(
      node->schema_,
      input->schema()->AddField(input->schema()->num_fields(), arrow::field(column, arrow::uint64(), false)));
  node->id_column_ = std::move(column);
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> LogicalPlan::WithInputs(std::vector<LogicalPlanPtr> inputs) const {
  switch (kind_) {
    case LogicalKind::kRepartition:
      return Repartition(inputs[0], partitioning_);
    case LogicalKind::kIntoPartitions:
      return IntoPartitions(inputs[0], partitioning_.num_partitions);
    case LogicalKind::kIntoBatches:
      return IntoBatches(inputs[0], partitioning_.batch_size);
    case LogicalKind::kMonotonicId:
      return MonotonicId(inputs[0], id_column_);
    case LogicalKind::kInMemorySource:
      return InMemory(schema_, batches_, batch_partitions_, first_row_);
    case LogicalKind::kScan:
      return Scan(scan_);
    case LogicalKind::kProject:
      return Project(inputs[0], exprs_);
    case LogicalKind::kFilter:
      return Filter(inputs[0], predicate_);
    case LogicalKind::kLimit:
      return Limit(inputs[0], limit_, offset_);
    case LogicalKind::kWrite:
      return Write(inputs[0], write_);
    case LogicalKind::kSort:
      return Sort(inputs[0], sort_);
    case LogicalKind::kWindow:
      return Window(inputs[0], exprs_);
    case LogicalKind::kAggregate:
      return Aggregate(inputs[0], aggregate_);
    case LogicalKind::kJoin:
      return Join(inputs[0], inputs[1], join_);
    case LogicalKind::kExplode:
      return Explode(inputs[0], explode_columns_);
    case LogicalKind::kConcat:
      return Concat(inputs[0], inputs[1]);
    case LogicalKind::kSample:
      return Sample(inputs[0], sample_);
  }
  return arrow::Status::NotImplemented("unknown plan node");
}

}  // namespace ketch
