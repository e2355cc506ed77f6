#include "ketch/plan/logical/logical_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "ketch/expr/key_storage.h"
#include "ketch/plan/logical/aggregate_phases.h"
#include "ketch/plan/logical/lance_filter.h"
#include "ketch/plan/logical/more_aggregations.h"

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

bool IsNumeric(const arrow::DataType& type) {
  return arrow::is_integer(type.id()) || arrow::is_floating(type.id());
}

bool IsOrderable(const arrow::DataType& type) {
  return IsNumeric(type) || arrow::is_string(type.id()) || arrow::is_binary(type.id()) ||
         arrow::is_temporal(type.id()) || type.id() == arrow::Type::BOOL;
}

std::string Pretty(const arrow::DataType& type) { return type.ToString(); }

}  // namespace

arrow::Result<JoinType> ParseJoinType(const std::string& how) {
  if (how == "inner") return JoinType::kInner;
  if (how == "left") return JoinType::kLeft;
  if (how == "right") return JoinType::kRight;
  if (how == "outer") return JoinType::kOuter;
  if (how == "semi") return JoinType::kSemi;
  if (how == "anti") return JoinType::kAnti;
  if (how == "cross") return JoinType::kCross;
  return arrow::Status::Invalid("unknown join type '", how,
                                "' (one of inner, left, right, outer, semi, anti)");
}

std::string JoinTypeName(JoinType type) {
  switch (type) {
    case JoinType::kInner:
      return "inner";
    case JoinType::kLeft:
      return "left";
    case JoinType::kRight:
      return "right";
    case JoinType::kOuter:
      return "outer";
    case JoinType::kSemi:
      return "semi";
    case JoinType::kAnti:
      return "anti";
    case JoinType::kCross:
      return "cross";
  }
  return "?";
}

arrow::Status ValidateJoinStrategy(const std::string& strategy, JoinType how) {
  if (strategy.empty()) return arrow::Status::OK();
  if (strategy != "hash" && strategy != "sort_merge" && strategy != "broadcast") {
    return arrow::Status::Invalid("join strategy '", strategy,
                                  "' is not supported; choose one of hash, sort_merge, broadcast");
  }
  if (how == JoinType::kCross) return arrow::Status::Invalid("In a cross join, `strategy` cannot be set");
  if (strategy == "sort_merge" && how != JoinType::kInner) {
    return arrow::Status::Invalid("Sort merge join only supports inner joins");
  }
  if (strategy == "broadcast" && how == JoinType::kOuter) {
    return arrow::Status::Invalid("Broadcast join does not support outer joins");
  }
  return arrow::Status::OK();
}

std::shared_ptr<arrow::DataType> JoinKeyCast(const arrow::DataType& l, const arrow::DataType& r) {
  if (l.Equals(r)) return nullptr;
  if (arrow::is_string(l.id())) return arrow::large_utf8();
  if (arrow::is_unsigned_integer(l.id()) && arrow::is_unsigned_integer(r.id())) return arrow::uint64();
  return arrow::int64();
}

arrow::Result<AggregationInfo> ResolveAggregation(const ExprPtr& expr, const arrow::Schema& schema) {
  AggregationInfo info;
  const Expr* call = expr.get();
  if (call->kind() == ExprKind::kAlias) call = call->children()[0].get();
  if (call->kind() != ExprKind::kCall || call->name().rfind("agg_", 0) != 0) {
    return arrow::Status::Invalid("agg() takes aggregation expressions such as col(\"x\").sum(), got ",
                                  expr->ToString());
  }
  if (call->children().size() != 1 || call->children()[0]->kind() != ExprKind::kColumn) {
    return arrow::Status::NotImplemented(call->name(),
                                         " needs a column as its input (add the computed column ",
                                         "with with_column first), got ", call->ToString());
  }
  info.function = call->name();
  info.input = call->children()[0]->name();
  info.output = expr->OutputName();
  info.options = call->options();
  ARROW_ASSIGN_OR_RAISE(auto field, ResolveField(*call->children()[0], schema));
  info.input_type = field->type();
  const auto& type = *info.input_type;
  auto unsupported = [&]() {
    return arrow::Status::TypeError(info.function, " is not supported for column '", info.input, "' of type ",
                                    Pretty(type), " (in ", expr->ToString(), ")");
  };
  const std::string& f = info.function;
  if (f == "agg_sum") {
    if (!IsNumeric(type)) return unsupported();
    // Daft's sum types: float32 stays float32 (summed in float64, rounded once at the end).
    info.output_type = type.id() == arrow::Type::FLOAT         ? arrow::float32()
                       : arrow::is_floating(type.id())         ? arrow::float64()
                       : arrow::is_unsigned_integer(type.id()) ? arrow::uint64()
                                                               : arrow::int64();
  } else if (f == "agg_mean" || f == "agg_stddev") {
    if (!IsNumeric(type)) return unsupported();
    info.output_type = arrow::float64();
  } else if (f == "agg_min" || f == "agg_max") {
    if (!IsOrderable(type)) return unsupported();
    info.output_type = info.input_type;
  } else if (f == "agg_count" || f == "agg_approx_count_distinct") {
    if (type.id() == arrow::Type::EXTENSION && f == "agg_approx_count_distinct") return unsupported();
    info.output_type = arrow::uint64();
  } else if (f == "agg_any_value") {
    info.output_type = info.input_type;
  } else if (f == "agg_list") {
    info.output_type = arrow::large_list(info.input_type);
  } else if (f == "agg_concat") {
    if (!arrow::is_string(type.id())) return unsupported();
    info.output_type = arrow::large_utf8();
  } else if (IsMoreAggregation(f)) {
    ARROW_ASSIGN_OR_RAISE(info.output_type, MoreAggregationOutputType(f, type, info.options));
    if (!info.output_type) return unsupported();
  } else {
    return arrow::Status::Invalid("unknown aggregation '", f, "'");
  }
  return info;
}

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
                                      Pretty(*l->type()), " with right column '", r->name(), "' of type ",
                                      Pretty(*r->type()));
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
                                      Pretty(*type));
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

int32_t LogicalPlan::depth() const {
  int32_t known = depth_.load(std::memory_order_relaxed);
  if (known > 0) return known;
  // Iterative post-order over the nodes whose depth is not known yet (no recursion: this is what
  // guards the recursive walks against deep plans).
  std::vector<std::pair<const LogicalPlan*, bool>> stack{{this, false}};
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    stack.pop_back();
    if (node->depth_.load(std::memory_order_relaxed) > 0) continue;
    if (!expanded) {
      stack.emplace_back(node, true);
      for (const auto& input : node->inputs_) {
        if (input->depth_.load(std::memory_order_relaxed) == 0) stack.emplace_back(input.get(), false);
      }
      continue;
    }
    int32_t d = 1;
    for (const auto& input : node->inputs_)
      d = std::max(d, input->depth_.load(std::memory_order_relaxed) + 1);
    node->depth_.store(d, std::memory_order_relaxed);
  }
  return depth_.load(std::memory_order_relaxed);
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

namespace {

// The exact number of rows a plan produces when known without running it (in-memory data, Parquet
// footers of an unfiltered scan, and what keeps or caps row counts above them).
std::optional<int64_t> KnownRows(const LogicalPlan& plan) {
  switch (plan.kind()) {
    case LogicalKind::kInMemorySource: {
      int64_t rows = 0;
      for (const auto& batch : plan.batches()) rows += batch->num_rows();
      return rows;
    }
    case LogicalKind::kScan: {
      const auto& scan = plan.scan();
      if (!scan.tasks || scan.filter ||
          (scan.format != FileFormat::kParquet && scan.format != FileFormat::kLance)) {
        return std::nullopt;
      }
      int64_t rows = 0;
      for (const auto& task : scan.tasks->tasks) {
        if (task.num_rows < 0) return std::nullopt;
        rows += task.num_rows;
      }
      return scan.limit >= 0 ? std::min(rows, scan.limit) : rows;
    }
    case LogicalKind::kProject:
    case LogicalKind::kSort:
    case LogicalKind::kWindow:
    case LogicalKind::kRepartition:
    case LogicalKind::kIntoPartitions:
    case LogicalKind::kIntoBatches:
    case LogicalKind::kMonotonicId:
      return KnownRows(*plan.inputs()[0]);
    case LogicalKind::kLimit: {
      auto rows = KnownRows(*plan.inputs()[0]);
      return rows ? std::min(std::max<int64_t>(0, *rows - plan.offset()), plan.limit())
                  : std::optional<int64_t>(std::nullopt);
    }
    case LogicalKind::kConcat: {
      auto a = KnownRows(*plan.inputs()[0]);
      auto b = KnownRows(*plan.inputs()[1]);
      return a && b ? std::optional<int64_t>(*a + *b) : std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

PartitionCount NumPartitions(const LogicalPlan& plan) {
  switch (plan.kind()) {
    case LogicalKind::kInMemorySource: {
      const auto& partitions = plan.batch_partitions();
      return {partitions.empty() ? 1 : partitions.back() + 1, true};
    }
    case LogicalKind::kScan:
      if (plan.scan().tasks) return {std::max<int64_t>(1, plan.scan().tasks->num_partitions()), true};
      return {std::max<int64_t>(1, static_cast<int64_t>(plan.scan().files.size())), false};
    case LogicalKind::kProject:
    case LogicalKind::kFilter:
    case LogicalKind::kExplode:
    case LogicalKind::kMonotonicId:
      return NumPartitions(*plan.inputs()[0]);
    case LogicalKind::kSample:
      if (plan.sample().size >= 0) return {1, true};  // one reservoir over all partitions
      return NumPartitions(*plan.inputs()[0]);
    case LogicalKind::kLimit:
    case LogicalKind::kSort:
    case LogicalKind::kWindow:
    case LogicalKind::kAggregate:
    case LogicalKind::kJoin:
    case LogicalKind::kWrite:
      return {1, true};
    case LogicalKind::kConcat: {
      const auto a = NumPartitions(*plan.inputs()[0]);
      const auto b = NumPartitions(*plan.inputs()[1]);
      return {a.count + b.count, a.exact && b.exact};
    }
    case LogicalKind::kRepartition:
      if (plan.partitioning().num_partitions < 0) return NumPartitions(*plan.inputs()[0]);
      return {plan.partitioning().num_partitions, true};
    case LogicalKind::kIntoPartitions:
      return {plan.partitioning().num_partitions, true};
    case LogicalKind::kIntoBatches: {
      const auto rows = KnownRows(*plan.inputs()[0]);
      const int64_t b = plan.partitioning().batch_size;
      if (rows) return {std::max<int64_t>(1, (*rows + b - 1) / b), true};
      return {1, false};
    }
  }
  return {1, false};
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
