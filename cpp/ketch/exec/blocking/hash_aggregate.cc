#include "ketch/exec/blocking/hash_aggregate.h"

#include <arrow/acero/exec_plan.h>
#include <arrow/acero/options.h>
#include <arrow/compute/api.h>
#include <arrow/compute/row/grouper.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "ketch/exec/blocking/aggregate_state_merge.h"
#include "ketch/exec/blocking/global_aggregate.h"
#include "ketch/exec/blocking/more_aggregates.h"
#include "ketch/expr/function_registry.h"
#include "ketch/expr/key_storage.h"
#include "ketch/expr/row_hash.h"
#include "ketch/plan/logical/aggregate_phases.h"
#include "ketch/plan/logical/more_aggregations.h"

namespace ketch {
namespace {

namespace ac = arrow::acero;
namespace cp = arrow::compute;

constexpr const char* kAllRowsKey = kAggregateAllRowsKey;

std::string Col(size_t i, const char* part) { return AggregateStateColumn(i, part); }

// Arrow's grouped distinct kernels crash on a Null-typed input (GroupedDistinctImpl::Finalize
// dereferences the values of an array that has none), and hash_all / hash_any have no Null
// kernel: such an input is given to them as an all-null Int8 (distinct) or Boolean (all / any)
// column. Returns the output names of the hash_distinct aggregates moved so.
arrow::Result<std::vector<std::string>> DistinctOverNullAsInt8(std::shared_ptr<arrow::Table>* table,
                                                               std::vector<cp::Aggregate>* aggregates) {
  std::vector<std::string> moved;
  for (auto& aggregate : *aggregates) {
    const bool distinct =
        aggregate.function == "hash_distinct" || aggregate.function == "hash_count_distinct";
    const bool logical = aggregate.function == "hash_all" || aggregate.function == "hash_any";
    if (!distinct && !logical) continue;
    if (aggregate.target.size() != 1 || aggregate.target[0].name() == nullptr) continue;
    const std::string name = *aggregate.target[0].name();
    auto column = (*table)->GetColumnByName(name);
    if (!column || column->type()->id() != arrow::Type::NA) continue;
    const auto type = distinct ? arrow::int8() : arrow::boolean();
    const std::string typed_name = name + "#" + type->ToString();
    if (!(*table)->GetColumnByName(typed_name)) {
      ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(type, (*table)->num_rows()));
      ARROW_ASSIGN_OR_RAISE(*table,
                            (*table)->AddColumn((*table)->num_columns(), arrow::field(typed_name, type),
                                                std::make_shared<arrow::ChunkedArray>(nulls)));
    }
    aggregate.target = {arrow::FieldRef(typed_name)};
    if (aggregate.function == "hash_distinct") moved.push_back(aggregate.name);
  }
  return moved;
}

// string_agg's result per group: the list's non-null strings joined by `delimiter` (Daft's
// "xy" / "x, y"), null for a group without one.
arrow::Result<arrow::Datum> JoinNonNull(const arrow::Datum& lists, const std::string& delimiter) {
  ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(lists, arrow::large_list(arrow::large_utf8())));
  const auto array = cast.make_array();
  const auto& list = static_cast<const arrow::LargeListArray&>(*array);
  const auto& values = static_cast<const arrow::LargeStringArray&>(*list.values());
  arrow::LargeStringBuilder builder;
  ARROW_RETURN_NOT_OK(builder.Reserve(list.length()));
  std::string joined;
  for (int64_t g = 0; g < list.length(); ++g) {
    joined.clear();
    bool any = false;
    if (list.IsValid(g)) {
      for (int64_t j = list.value_offset(g); j < list.value_offset(g + 1); ++j) {
        if (values.IsNull(j)) continue;
        if (any) joined += delimiter;
        joined.append(values.GetView(j));
        any = true;
      }
    }
    ARROW_RETURN_NOT_OK(any ? builder.Append(joined) : builder.AppendNull());
  }
  ARROW_ASSIGN_OR_RAISE(auto out, builder.Finish());
  return arrow::Datum(out);
}

// The distinct lists of a Null-typed input (computed over Int8 nulls) as List<Null>.
arrow::Result<std::shared_ptr<arrow::Table>> AsNullLists(std::shared_ptr<arrow::Table> table,
                                                         const std::vector<std::string>& names) {
  for (const auto& name : names) {
    const int index = table->schema()->GetFieldIndex(name);
    if (index < 0) continue;
    ARROW_ASSIGN_OR_RAISE(auto combined, arrow::Concatenate(table->column(index)->chunks()));
    const auto& lists = static_cast<const arrow::ListArray&>(*combined);
    auto values = std::make_shared<arrow::NullArray>(lists.values()->length());
    auto as_null =
        std::make_shared<arrow::ListArray>(arrow::list(arrow::null()), lists.length(), lists.value_offsets(),
                                           values, lists.null_bitmap(), lists.null_count(), lists.offset());
    ARROW_ASSIGN_OR_RAISE(table, table->SetColumn(index, arrow::field(name, as_null->type()),
                                                  std::make_shared<arrow::ChunkedArray>(as_null)));
  }
  return table;
}

// Keys of extension types (UUIDs) group as their storage; the output keys get their types back.
arrow::Result<std::shared_ptr<arrow::Table>> GroupBy(std::shared_ptr<arrow::Table> table,
                                                     const std::vector<std::string>& keys,
                                                     std::vector<cp::Aggregate> aggregates,
                                                     bool use_threads) {
  const std::shared_ptr<arrow::Schema> input_schema = table->schema();
  ARROW_ASSIGN_OR_RAISE(auto null_distinct, DistinctOverNullAsInt8(&table, &aggregates));
  ARROW_ASSIGN_OR_RAISE(table, WithStorageColumns(table, keys));
  const bool viewed = table->schema() != input_schema;
  std::vector<arrow::FieldRef> key_refs(keys.begin(), keys.end());
  ac::Declaration plan = ac::Declaration::Sequence(
      {{"table_source", ac::TableSourceNodeOptions(std::move(table))},
       {"aggregate", ac::AggregateNodeOptions(std::move(aggregates), std::move(key_refs))}});
  ARROW_ASSIGN_OR_RAISE(auto grouped, ac::DeclarationToTable(std::move(plan), use_threads));
  ARROW_ASSIGN_OR_RAISE(grouped, AsNullLists(grouped, null_distinct));
  if (!viewed) return grouped;
  for (const auto& key : keys) {
    const auto& type = input_schema->GetFieldByName(key)->type();
    const int index = grouped->schema()->GetFieldIndex(key);
    if (index < 0 || type->id() != arrow::Type::EXTENSION) continue;
    ARROW_ASSIGN_OR_RAISE(grouped, grouped->SetColumn(index, grouped->schema()->field(index)->WithType(type),
                                                      WrapStorage(grouped->column(index), type)));
  }
  return grouped;
}

bool ByRowPosition(const AggregationInfo& info) { return AggregationByRowPosition(info); }
bool SinglePhase(const AggregateSpec& spec, const arrow::Schema& schema) {
  return AggregateIsSinglePhase(spec, schema);
}

// any_value(ignore_nulls=True): the smallest non-null value of the group (hash_min skips nulls),
// which is deterministic too; plain any_value takes Arrow's hash_one.
bool IgnoreNulls(const AggregationInfo& info) {
  auto it = info.options.find("ignore_nulls");
  return it != info.options.end() && it->second && it->second->is_valid &&
         static_cast<const arrow::BooleanScalar&>(*it->second).value;
}

// Arrow's hash_sum wraps around on 64-bit integer overflow; a float64 sum beside it shows when the
// exact sum left the type's range, and the query then fails instead of returning a wrong number.
bool ChecksOverflow(const AggregationInfo& info) {
  const auto id = info.input_type->id();
  return info.function == "agg_sum" && (id == arrow::Type::INT64 || id == arrow::Type::UINT64);
}

// The values at `positions` (int64, nulls allowed) of a chunked column, as one array.
arrow::Result<std::shared_ptr<arrow::Array>> Gather(const std::shared_ptr<arrow::ChunkedArray>& values,
                                                    const arrow::Datum& positions) {
  ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(values, positions));
  auto chunked = taken.chunked_array();
  if (chunked->num_chunks() == 1) return chunked->chunk(0);
  return arrow::Concatenate(chunked->chunks());
}

std::vector<std::string> Keys(const AggregateSpec& spec) {
  return spec.group_by.empty() ? std::vector<std::string>{kAllRowsKey} : spec.group_by;
}

std::shared_ptr<cp::CountOptions> CountMode(const AggregationInfo& info) {
  std::string mode = "valid";
  auto it = info.options.find("mode");
  if (it != info.options.end() && it->second && it->second->is_valid) {
    mode = std::string(static_cast<const arrow::BaseBinaryScalar&>(*it->second).view());
  }
  auto m = mode == "all"    ? cp::CountOptions::ALL
           : mode == "null" ? cp::CountOptions::ONLY_NULL
                            : cp::CountOptions::ONLY_VALID;
  return std::make_shared<cp::CountOptions>(m);
}

// Exact number of distinct non-null values in each list of a list<T> array.
arrow::Result<std::shared_ptr<arrow::Array>> DistinctCountPerList(
    const std::shared_ptr<arrow::Array>& lists) {
  ARROW_ASSIGN_OR_RAISE(auto parents, cp::CallFunction("list_parent_indices", {lists}));
  ARROW_ASSIGN_OR_RAISE(auto values, cp::CallFunction("list_flatten", {lists}));
  ARROW_ASSIGN_OR_RAISE(auto valid, cp::IsValid(values));
  ARROW_ASSIGN_OR_RAISE(auto kept_parents, cp::Filter(parents, valid));
  ARROW_ASSIGN_OR_RAISE(auto kept_values, cp::Filter(values, valid));
  std::vector<uint64_t> counts(lists->length(), 0);
  if (kept_values.length() > 0) {
    ARROW_ASSIGN_OR_RAISE(auto grouper, cp::Grouper::Make({kept_parents.type(), kept_values.type()}));
    cp::ExecBatch batch({kept_parents, kept_values}, kept_values.length());
    ARROW_RETURN_NOT_OK(grouper->Populate(cp::ExecSpan(batch)));
    ARROW_ASSIGN_OR_RAISE(auto uniques, grouper->GetUniques());
    auto unique_parents = uniques.values[0].make_array();
    ARROW_ASSIGN_OR_RAISE(auto as_int64, cp::Cast(unique_parents, arrow::int64()));
    auto ids_array = as_int64.make_array();
    const auto& ids = static_cast<const arrow::Int64Array&>(*ids_array);
    for (int64_t i = 0; i < ids.length(); ++i) ++counts[ids.Value(i)];
  }
  arrow::UInt64Builder out;
  ARROW_RETURN_NOT_OK(out.AppendValues(counts));
  return out.Finish();
}

// `batch`'s columns named by `schema`, in its order, cast to its types.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> Conform(const arrow::RecordBatch& batch,
                                                           const std::shared_ptr<arrow::Schema>& schema) {
  arrow::ArrayVector columns;
  for (const auto& field : schema->fields()) {
    ARROW_ASSIGN_OR_RAISE(auto column, GetColumn(batch, field->name()));
    if (!column->type()->Equals(*field->type())) {
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(column, field->type()));
      column = cast.make_array();
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(schema, batch.num_rows(), std::move(columns));
}

arrow::Result<std::shared_ptr<arrow::Array>> ValidAsInt64(const std::shared_ptr<arrow::Array>& values,
                                                          bool valid) {
  ARROW_ASSIGN_OR_RAISE(auto flags, valid ? cp::IsValid(values) : cp::IsNull(values));
  ARROW_ASSIGN_OR_RAISE(auto counts, cp::Cast(flags, arrow::int64()));
  return counts.make_array();
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatch>> AggregatePartialOperator::Execute(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const {
  // Columns the partial aggregates read: keys, then each aggregation's derived inputs.
  arrow::FieldVector fields;
  arrow::ArrayVector columns;
  const auto add = [&](const std::string& name, std::shared_ptr<arrow::Array> array) {
    fields.push_back(arrow::field(name, array->type()));
    columns.push_back(std::move(array));
  };
  if (spec_.group_by.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto zeros, ZerosInt8(morsel->num_rows()));
    add(kAllRowsKey, zeros);
  }
  for (const auto& key : spec_.group_by) {
    ARROW_ASSIGN_OR_RAISE(auto column, GetColumn(*morsel, key));
    if (arrow::is_floating(column->type()->id())) {
      // Group by IEEE equality: -0.0 and 0.0 are one key (x + 0.0 turns -0.0 into 0.0).
      ARROW_ASSIGN_OR_RAISE(auto normalized, cp::Add(column, arrow::Datum(0.0)));
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(normalized, column->type()));
      column = cast.make_array();
    }
    add(key, column);
  }
  // No group keys and mergeable states: a plain reduction (GlobalAggregate) rather than hashing.
  const bool reduce = spec_.group_by.empty() && !no_reduction_.load() && !SinglePhase(spec_, *input_schema_);
  std::vector<cp::Aggregate> aggs;
  for (size_t i = 0; i < spec_.aggregations.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto info, ResolveAggregation(spec_.aggregations[i], *input_schema_));
    ARROW_ASSIGN_OR_RAISE(auto input, GetColumn(*morsel, info.input));
    const std::string v = Col(i, "v");
    const auto& f = info.function;
    if (f == "agg_mean" || f == "agg_stddev" || MoreAggregationInputAsDouble(info)) {
      auto to_double = cp::CastOptions::Safe(arrow::float64());
      to_double.allow_float_truncate = true;  // integers beyond 2**53: nearest float
      ARROW_ASSIGN_OR_RAISE(auto as_double, cp::Cast(input, to_double));
      input = as_double.make_array();
    }
    add(v, input);
    if (ChecksOverflow(info) && reduce) {
      aggs.emplace_back(kGlobalFloat64Sum, v, Col(i, "fsum"));  // no float64 copy of the column
    } else if (ChecksOverflow(info)) {
      auto to_double = cp::CastOptions::Safe(arrow::float64());
      to_double.allow_float_truncate = true;
      ARROW_ASSIGN_OR_RAISE(auto as_double, cp::Cast(input, to_double));
      add(Col(i, "fv"), as_double.make_array());
      if (!SinglePhase(spec_, *input_schema_)) aggs.emplace_back("hash_sum", Col(i, "fv"), Col(i, "fsum"));
    }
    if (f == "agg_sum") {
      aggs.emplace_back("hash_sum", v, Col(i, "sum"));
    } else if (f == "agg_count") {
      aggs.emplace_back("hash_count", CountMode(info), v, Col(i, "count"));
    } else if (f == "agg_mean") {
      aggs.emplace_back("hash_sum", v, Col(i, "sum"));
      aggs.emplace_back("hash_count", std::make_shared<cp::CountOptions>(cp::CountOptions::ONLY_VALID), v,
                        Col(i, "count"));
    } else if (f == "agg_min") {
      aggs.emplace_back("hash_min", v, Col(i, "min"));
    } else if (f == "agg_max") {
      aggs.emplace_back("hash_max", v, Col(i, "max"));
    } else if (f == "agg_any_value" && !ByRowPosition(info)) {
      aggs.emplace_back(IgnoreNulls(info) ? "hash_min" : "hash_one", v, Col(i, "one"));
    } else if (IsMoreAggregation(f)) {
      ARROW_ASSIGN_OR_RAISE(auto more, MorePartialAggregates(info, i));
      for (auto& agg : more) aggs.push_back(std::move(agg));
    }  // value-collecting aggregations run in one phase (see SinglePhase)
  }
  if (SinglePhase(spec_, *input_schema_)) {
    return arrow::RecordBatch::Make(arrow::schema(fields), morsel->num_rows(), columns);
  }
  const bool partial_phase = spec_.phase == AggregatePhase::kPartial && skip_;
  std::shared_ptr<arrow::Schema> states_schema;
  if (partial_phase) {
    ARROW_ASSIGN_OR_RAISE(states_schema, PartialAggregateSchema(spec_, *input_schema_));
  }
  if (partial_phase && skip_->load()) {
    // One state row per input row: no hashing (see kSkipRatio).
    auto rows = arrow::RecordBatch::Make(arrow::schema(fields), morsel->num_rows(), columns);
    arrow::FieldVector state_fields;
    arrow::ArrayVector states;
    const auto state = [&](const std::string& name, std::shared_ptr<arrow::Array> array) {
      state_fields.push_back(arrow::field(name, array->type()));
      states.push_back(std::move(array));
    };
    for (const auto& key : Keys(spec_)) {
      ARROW_ASSIGN_OR_RAISE(auto column, GetColumn(*rows, key));
      state(key, column);
    }
    for (size_t i = 0; i < spec_.aggregations.size(); ++i) {
      ARROW_ASSIGN_OR_RAISE(auto info, ResolveAggregation(spec_.aggregations[i], *input_schema_));
      ARROW_ASSIGN_OR_RAISE(auto v, GetColumn(*rows, Col(i, "v")));
      const auto& f = info.function;
      if (f == "agg_sum") {
        state(Col(i, "sum"), v);
        if (ChecksOverflow(info)) {
          ARROW_ASSIGN_OR_RAISE(auto fv, GetColumn(*rows, Col(i, "fv")));
          state(Col(i, "fsum"), fv);
        }
      } else if (f == "agg_count") {
        const std::string mode = CountMode(info)->mode == cp::CountOptions::ALL         ? "all"
                                 : CountMode(info)->mode == cp::CountOptions::ONLY_NULL ? "null"
                                                                                        : "valid";
        if (mode == "all") {
          ARROW_ASSIGN_OR_RAISE(auto ones, arrow::MakeArrayFromScalar(arrow::Int64Scalar(1), v->length()));
          state(Col(i, "count"), ones);
        } else {
          ARROW_ASSIGN_OR_RAISE(auto counts, ValidAsInt64(v, mode == "valid"));
          state(Col(i, "count"), counts);
        }
      } else if (f == "agg_mean") {
        state(Col(i, "sum"), v);
        ARROW_ASSIGN_OR_RAISE(auto counts, ValidAsInt64(v, true));
        state(Col(i, "count"), counts);
      } else if (f == "agg_min") {
        state(Col(i, "min"), v);
      } else if (f == "agg_max") {
        state(Col(i, "max"), v);
      } else if (f == "agg_any_value") {
        state(Col(i, "one"), v);
      } else if (f == "agg_product") {
        state(Col(i, "prod"), v);
      } else if (f == "agg_bool_and" || f == "agg_bool_or") {
        state(Col(i, "bool"), v);
      } else if (IsMomentAggregation(f)) {
        ARROW_RETURN_NOT_OK(MomentStatesOfRows(info, i, v, &state_fields, &states));
      } else if (f == "agg_count_distinct" || f == "agg_set" || f == "agg_percentile") {
        ARROW_ASSIGN_OR_RAISE(auto lists, SingletonLists(v));
        state(Col(i, f == "agg_percentile" ? "vlist" : "dlist"), lists);
      }
    }
    return Conform(*arrow::RecordBatch::Make(arrow::schema(state_fields), morsel->num_rows(), states),
                   states_schema);
  }
  auto table = arrow::Table::Make(arrow::schema(fields), columns, morsel->num_rows());
  std::shared_ptr<arrow::RecordBatch> combined;
  if (reduce) {
    ARROW_ASSIGN_OR_RAISE(auto reduced, GlobalAggregate(*table, aggs, kAllRowsKey));
    if (!reduced) {
      // No scalar kernel for an input type (the same for every morsel): hash from now on.
      no_reduction_.store(true);
      return Execute(morsel, ctx);
    }
    combined = std::move(*reduced);
  } else {
    // Already one of many workers on the compute pool: single-threaded.
    ARROW_ASSIGN_OR_RAISE(auto partial, GroupBy(table, Keys(spec_), std::move(aggs), /*use_threads=*/false));
    ARROW_ASSIGN_OR_RAISE(combined, partial->CombineChunksToBatch());
  }
  for (size_t i = 0; i < spec_.aggregations.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto info, ResolveAggregation(spec_.aggregations[i], *input_schema_));
    if (IsMomentAggregation(info.function)) {
      ARROW_ASSIGN_OR_RAISE(combined, AddMomentStates(combined, info, i));
    }
  }
  if (!partial_phase) return combined;
  const int64_t rows = probe_rows_.fetch_add(morsel->num_rows()) + morsel->num_rows();
  const int64_t groups = probe_groups_.fetch_add(combined->num_rows()) + combined->num_rows();
  if (!spec_.group_by.empty() && rows >= kProbeRows &&
      static_cast<double>(groups) > kSkipRatio * static_cast<double>(rows)) {
    skip_->store(true);
  }
  return Conform(*combined, states_schema);
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> AggregateFinalSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (morsel->num_rows() == 0) return std::optional<std::shared_ptr<arrow::RecordBatch>>();
  if (spilled()) {
    ARROW_RETURN_NOT_OK(SpillBatch(morsel));
  } else {
    held_.Add(memory_, BatchBytes(*morsel), memory_tracker_);
    partials_.push_back(std::move(morsel));
    positions_.push_back(next_position_);
    if (held_.bytes() > memory_->budget() / 2) ARROW_RETURN_NOT_OK(StartSpilling());
  }
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

std::vector<std::shared_ptr<arrow::RecordBatch>> AggregateFinalSink::InStreamOrder() {
  std::vector<size_t> order(partials_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return positions_[a] < positions_[b]; });
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  out.reserve(order.size());
  for (size_t i : order) out.push_back(std::move(partials_[i]));
  partials_.clear();
  positions_.clear();
  return out;
}

arrow::Status AggregateFinalSink::StartSpilling() {
  const auto& schema = partials_[0]->schema();
  for (int p = 0; p < kSpillPartitions; ++p) {
    ARROW_ASSIGN_OR_RAISE(auto file, SpillFile::Create(spill_dir_, schema));
    partitions_.push_back(std::move(file));
  }
  auto held = InStreamOrder();
  for (const auto& batch : held) ARROW_RETURN_NOT_OK(SpillBatch(batch));
  held_.Clear();
  return arrow::Status::OK();
}

arrow::Status AggregateFinalSink::SpillBatch(const std::shared_ptr<arrow::RecordBatch>& batch) {
  ARROW_ASSIGN_OR_RAISE(auto hashes, RowHashes(*batch, Keys(spec_)));
  arrow::Int32Builder partition;
  ARROW_RETURN_NOT_OK(partition.Reserve(batch->num_rows()));
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    // The top bits of a multiplicative remix: an upstream shuffle took hash % buckets.
    const uint64_t mixed = hashes[static_cast<size_t>(i)] * 0x9E3779B97F4A7C15ULL;
    partition.UnsafeAppend(static_cast<int32_t>((mixed >> 32) % kSpillPartitions));
  }
  std::shared_ptr<arrow::Int32Array> partition_array;
  ARROW_RETURN_NOT_OK(partition.Finish(&partition_array));
  ARROW_ASSIGN_OR_RAISE(auto parts, SplitByPartition(batch, partition_array, kSpillPartitions));
  for (int p = 0; p < kSpillPartitions; ++p) {
    if (parts[p]->num_rows() > 0) ARROW_RETURN_NOT_OK(partitions_[p]->Write(*parts[p]));
  }
  return arrow::Status::OK();
}

arrow::Status AggregateFinalSink::ProduceOutput(const Source::Emit& emit) {
  int64_t row = 0;
  auto emit_table = [&](const std::shared_ptr<arrow::Table>& table) {
    return EmitTable(*table, morsel_rows_, &row, emit);
  };
  if (!spilled() && !finish_ && skip_merge_ && skip_merge_->load()) {
    // Partial phase over high-cardinality keys: the states as they are (the final phase merges).
    for (const auto& partial : InStreamOrder()) {
      ARROW_ASSIGN_OR_RAISE(auto conformed, Conform(*partial, output_schema_));
      ARROW_RETURN_NOT_OK(
          emit_table(arrow::Table::Make(output_schema_, conformed->columns(), conformed->num_rows())));
    }
    partials_.clear();
    held_.Clear();
    return arrow::Status::OK();
  }
  if (!spilled()) {
    ARROW_ASSIGN_OR_RAISE(auto table, Merge(InStreamOrder()));
    held_.Clear();
    return emit_table(table);
  }
  for (auto& file : partitions_) {
    ARROW_RETURN_NOT_OK(file->FinishWriting());
    if (file->num_batches() == 0) continue;
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    for (int64_t i = 0; i < file->num_batches(); ++i) {
      ARROW_ASSIGN_OR_RAISE(auto batch, file->ReadBatch(i));
      batches.push_back(std::move(batch));
    }
    ARROW_ASSIGN_OR_RAISE(auto table, Merge(std::move(batches)));
    ARROW_RETURN_NOT_OK(emit_table(table));
    file.reset();  // deletes the partition's file
  }
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Table>> AggregateFinalSink::Merge(
    std::vector<std::shared_ptr<arrow::RecordBatch>> partials) {
  std::vector<AggregationInfo> infos;
  for (const auto& agg : spec_.aggregations) {
    ARROW_ASSIGN_OR_RAISE(auto info, ResolveAggregation(agg, *input_schema_));
    infos.push_back(std::move(info));
  }
  const bool global = spec_.group_by.empty();
  if (!finish_ && partials.empty()) return arrow::Table::MakeEmpty(output_schema_);
  if (partials.empty()) {
    if (!global) return arrow::Table::MakeEmpty(output_schema_);
    // One row over no input: counts are 0, everything else null.
    arrow::ArrayVector columns;
    for (size_t i = 0; i < infos.size(); ++i) {
      const auto& type = output_schema_->field(static_cast<int>(i))->type();
      const std::string& fn = infos[i].function;
      const bool is_list = type->id() == arrow::Type::LIST || type->id() == arrow::Type::LARGE_LIST;
      if (fn == "agg_count" || fn == "agg_approx_count_distinct" || fn == "agg_count_distinct") {
        ARROW_ASSIGN_OR_RAISE(auto zero, arrow::MakeArrayFromScalar(arrow::UInt64Scalar(0), 1));
        columns.push_back(zero);
      } else if ((fn == "agg_list" || fn == "agg_set" || fn == "agg_concat") && is_list) {
        // Daft: a list aggregation of no rows is one empty list, not null.
        std::unique_ptr<arrow::ArrayBuilder> builder;
        ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), type, &builder));
        if (type->id() == arrow::Type::LIST) {
          ARROW_RETURN_NOT_OK(static_cast<arrow::ListBuilder&>(*builder).Append());
        } else {
          ARROW_RETURN_NOT_OK(static_cast<arrow::LargeListBuilder&>(*builder).Append());
        }
        ARROW_ASSIGN_OR_RAISE(auto empty_list, builder->Finish());
        columns.push_back(empty_list);
      } else if (fn == "agg_concat" && arrow::is_base_binary_like(type->id()) &&
                 !HasOption(infos[i].options, "delimiter")) {
        // Daft: string_agg() of no rows is the empty string (with a delimiter: null).
        ARROW_ASSIGN_OR_RAISE(auto empty_text, arrow::MakeArrayFromScalar(*arrow::MakeScalar(""), 1));
        ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*empty_text, type));
        columns.push_back(cast);
      } else {
        ARROW_ASSIGN_OR_RAISE(auto null, arrow::MakeArrayOfNull(type, 1));
        columns.push_back(null);
      }
    }
    return arrow::Table::Make(output_schema_, columns, 1);
  }
  ARROW_ASSIGN_OR_RAISE(auto table,
                        arrow::Table::FromRecordBatches(partials[0]->schema(), std::move(partials)));
  const bool single_phase = SinglePhase(spec_, *input_schema_);
  bool by_position = false;
  for (const auto& info : infos) by_position = by_position || ByRowPosition(info);
  bool fold = false;  // states merged over each group's row positions (aggregate_state_merge.h)
  for (const auto& info : infos) fold = fold || (!single_phase && MergesByFold(info.function));
  const std::shared_ptr<arrow::Table> values_table = table;
  if (fold && !by_position) {
    arrow::Int64Builder positions;
    ARROW_RETURN_NOT_OK(positions.Reserve(table->num_rows()));
    for (int64_t r = 0; r < table->num_rows(); ++r) positions.UnsafeAppend(r);
    ARROW_ASSIGN_OR_RAISE(auto position_array, positions.Finish());
    ARROW_ASSIGN_OR_RAISE(table,
                          table->AddColumn(table->num_columns(), arrow::field("__position", arrow::int64()),
                                           std::make_shared<arrow::ChunkedArray>(position_array)));
  }
  if (by_position) {
    // Row positions 0..n-1 of the concatenated input, aggregated in place of nested values.
    arrow::Int64Builder positions;
    ARROW_RETURN_NOT_OK(positions.Reserve(table->num_rows()));
    for (int64_t r = 0; r < table->num_rows(); ++r) positions.UnsafeAppend(r);
    ARROW_ASSIGN_OR_RAISE(auto position_array, positions.Finish());
    // The values of by-position aggregations leave the table (the hash kernels cannot take
    // them; they are gathered afterwards); other aggregations' inputs stay, nested or not (a
    // count of a list column beside an any_value of a struct column).
    std::set<std::string> by_position_values;
    for (size_t i = 0; i < infos.size(); ++i) {
      if (ByRowPosition(infos[i])) by_position_values.insert(Col(i, "v"));
    }
    arrow::FieldVector fields;
    arrow::ChunkedArrayVector columns;
    for (int c = 0; c < table->num_columns(); ++c) {
      if (by_position_values.count(table->schema()->field(c)->name()) == 0) {
        fields.push_back(table->schema()->field(c));
        columns.push_back(table->column(c));
      }
    }
    fields.push_back(arrow::field("__position", arrow::int64()));
    columns.push_back(std::make_shared<arrow::ChunkedArray>(position_array));
    for (size_t i = 0; i < infos.size(); ++i) {
      if (!ByRowPosition(infos[i]) || !IgnoreNulls(infos[i])) continue;
      // Positions of the non-null values only.
      ARROW_ASSIGN_OR_RAISE(auto valid, cp::IsValid(values_table->GetColumnByName(Col(i, "v"))));
      ARROW_ASSIGN_OR_RAISE(
          auto masked, cp::CallFunction("if_else", {valid, arrow::Datum(position_array),
                                                    arrow::Datum(arrow::MakeNullScalar(arrow::int64()))}));
      fields.push_back(arrow::field(Col(i, "pos"), arrow::int64()));
      columns.push_back(masked.chunked_array());
    }
    table = arrow::Table::Make(arrow::schema(fields), columns, table->num_rows());
  }
  std::vector<cp::Aggregate> aggs;
  for (size_t i = 0; i < infos.size(); ++i) {
    const auto& f = infos[i].function;
    // Two-phase: merge partial states (same column in and out). Single phase: aggregate the raw
    // values in Col(i, "v") (and Col(i, "sq")) into the same output names.
    auto merge = [&](const char* function, const char* part, const char* raw_function = nullptr,
                     std::shared_ptr<cp::FunctionOptions> raw_options = nullptr, const char* raw_part = "v") {
      if (single_phase) {
        aggs.emplace_back(raw_function ? raw_function : function, std::move(raw_options), Col(i, raw_part),
                          Col(i, part));
      } else {
        aggs.emplace_back(function, Col(i, part), Col(i, part));
      }
    };
    auto valid = std::make_shared<cp::CountOptions>(cp::CountOptions::ONLY_VALID);
    if (f == "agg_sum") {
      merge("hash_sum", "sum");
      if (ChecksOverflow(infos[i])) merge("hash_sum", "fsum", nullptr, nullptr, "fv");
    } else if (f == "agg_count") {
      merge("hash_sum", "count", "hash_count", CountMode(infos[i]));
    } else if (f == "agg_mean" || f == "agg_stddev") {
      if (f == "agg_stddev") {  // always single phase (see CollectsValues): stable hash_stddev
        ARROW_ASSIGN_OR_RAISE(int ddof, AggregationDdof(infos[i].options, 1));
        aggs.emplace_back("hash_stddev", std::make_shared<cp::VarianceOptions>(ddof), Col(i, "v"),
                          Col(i, "stddev"));
      } else {
        merge("hash_sum", "sum");
        merge("hash_sum", "count", "hash_count", valid);
      }
    } else if (f == "agg_min") {
      merge("hash_min", "min");
    } else if (f == "agg_max") {
      merge("hash_max", "max");
    } else if (IsMoreAggregation(f)) {
      ARROW_ASSIGN_OR_RAISE(auto more, MoreMergeAggregates(infos[i], i, single_phase));
      for (auto& agg : more) aggs.push_back(std::move(agg));
    } else if (ByRowPosition(infos[i])) {
      const bool one = f == "agg_any_value";
      if (one && IgnoreNulls(infos[i])) {
        aggs.emplace_back("hash_min", Col(i, "pos"), Col(i, "one"));
      } else {
        aggs.emplace_back(one ? "hash_one" : "hash_list", "__position", Col(i, one ? "one" : "list"));
      }
    } else if (f == "agg_any_value") {
      merge(IgnoreNulls(infos[i]) ? "hash_min" : "hash_one", "one");
    } else {
      merge("hash_list", "list");
    }
  }
  if (fold) aggs.emplace_back("hash_list", "__position", "__fold_positions");
  // One thread: Acero's threaded aggregation adds a group's states in the order its threads
  // happen to take batches, so a float sum changed in its last bits from run to run (TPC-H Q15,
  // which compares a sum with its own maximum, then lost its row); lists and concatenations need
  // input order too. The partials come in stream order (InStreamOrder), so the result is the same
  // on every run. Measured: no slower on TPC-H SF1 Q1-Q21 or the 4M-row group-by (2 cores).
  std::shared_ptr<arrow::RecordBatch> batch;
  if (global) {
    // No group keys: one plain reduction over all partial states (or raw rows), no hashing.
    ARROW_ASSIGN_OR_RAISE(auto reduced, GlobalAggregate(*table, aggs, kAllRowsKey));
    if (reduced) batch = std::move(*reduced);
  }
  if (!batch) {
    ARROW_ASSIGN_OR_RAISE(auto merged, GroupBy(table, Keys(spec_), std::move(aggs), /*use_threads=*/false));
    ARROW_ASSIGN_OR_RAISE(batch, merged->CombineChunksToBatch());
  }
  if (fold) {
    ARROW_ASSIGN_OR_RAISE(auto positions, GetColumn(*batch, "__fold_positions"));
    for (size_t i = 0; i < infos.size(); ++i) {
      if (MergesByFold(infos[i].function)) {
        ARROW_ASSIGN_OR_RAISE(batch, FoldStates(batch, *table, positions, infos[i], i));
      }
    }
  }
  if (!finish_) {
    // Partial phase: the merged states themselves, in the order and types of the partial schema.
    arrow::ArrayVector states;
    for (const auto& field : output_schema_->fields()) {
      ARROW_ASSIGN_OR_RAISE(auto state, GetColumn(*batch, field->name()));
      if (!state->type()->Equals(*field->type())) {
        ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(state, field->type()));
        state = cast.make_array();
      }
      states.push_back(std::move(state));
    }
    return arrow::Table::Make(output_schema_, states, batch->num_rows());
  }
  auto column = [&](const std::string& name) -> arrow::Result<arrow::Datum> {
    ARROW_ASSIGN_OR_RAISE(auto array, GetColumn(*batch, name));
    return arrow::Datum(array);
  };
  arrow::ArrayVector out;
  for (const auto& key : spec_.group_by) {
    ARROW_ASSIGN_OR_RAISE(auto k, column(key));
    out.push_back(k.make_array());
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    const auto& f = infos[i].function;
    arrow::Datum result;
    if (f == "agg_sum") {
      ARROW_ASSIGN_OR_RAISE(result, column(Col(i, "sum")));
      if (ChecksOverflow(infos[i])) {
        // A wrapped sum differs from the exact one by a multiple of 2**64; the float64 sum is
        // within far less of the exact one, so a gap over 2**62 means the sum left the type.
        ARROW_ASSIGN_OR_RAISE(auto fsum, column(Col(i, "fsum")));
        auto to_double = cp::CastOptions::Safe(arrow::float64());
        to_double.allow_float_truncate = true;
        ARROW_ASSIGN_OR_RAISE(auto isum, cp::Cast(result, to_double));
        ARROW_ASSIGN_OR_RAISE(auto gap, cp::Subtract(fsum, isum));
        ARROW_ASSIGN_OR_RAISE(auto magnitude, cp::AbsoluteValue(gap));
        ARROW_ASSIGN_OR_RAISE(auto largest, cp::MinMax(magnitude));
        const auto& max = largest.scalar_as<arrow::StructScalar>().value[1];
        if (max->is_valid && static_cast<const arrow::DoubleScalar&>(*max).value > std::ldexp(1.0, 62)) {
          ARROW_ASSIGN_OR_RAISE(auto over,
                                cp::CallFunction("greater", {magnitude, arrow::Datum(std::ldexp(1.0, 62))}));
          ARROW_ASSIGN_OR_RAISE(auto over_sums, cp::Filter(fsum, over));
          ARROW_ASSIGN_OR_RAISE(auto first, over_sums.make_array()->GetScalar(0));
          char approx[32];
          std::snprintf(approx, sizeof(approx), "%.3g",
                        static_cast<const arrow::DoubleScalar&>(*first).value);
          return arrow::Status::Invalid(spec_.aggregations[i]->ToString(), " overflows ",
                                        infos[i].input_type->ToString(), " (a group's sum is about ", approx,
                                        "); cast the column to float64 or decimal first");
        }
      }
    } else if (f == "agg_count") {
      ARROW_ASSIGN_OR_RAISE(result, column(Col(i, "count")));
    } else if (f == "agg_stddev") {
      ARROW_ASSIGN_OR_RAISE(result, column(Col(i, "stddev")));
    } else if (f == "agg_mean") {
      ARROW_ASSIGN_OR_RAISE(auto sum, column(Col(i, "sum")));
      ARROW_ASSIGN_OR_RAISE(auto count, column(Col(i, "count")));
      ARROW_ASSIGN_OR_RAISE(auto count_f, cp::Cast(count, arrow::float64()));
      // count 0 → null (not NaN).
      ARROW_ASSIGN_OR_RAISE(auto empty, cp::CallFunction("equal", {count_f, arrow::Datum(0.0)}));
      ARROW_ASSIGN_OR_RAISE(result, cp::Divide(sum, count_f));
      ARROW_ASSIGN_OR_RAISE(
          result, cp::CallFunction("if_else",
                                   {empty, arrow::Datum(arrow::MakeNullScalar(arrow::float64())), result}));
    } else if (f == "agg_min") {
      ARROW_ASSIGN_OR_RAISE(result, column(Col(i, "min")));
    } else if (f == "agg_max") {
      ARROW_ASSIGN_OR_RAISE(result, column(Col(i, "max")));
    } else if (fold && MergesByFold(f)) {
      ARROW_ASSIGN_OR_RAISE(result, FinishFolded(*batch, infos[i], i));
    } else if (IsMoreAggregation(f)) {
      ARROW_ASSIGN_OR_RAISE(result, FinishMoreAggregation(infos[i], i, column));
    } else if (ByRowPosition(infos[i])) {
      auto values = values_table->GetColumnByName(Col(i, "v"));
      if (f == "agg_any_value") {
        ARROW_ASSIGN_OR_RAISE(auto positions, column(Col(i, "one")));
        ARROW_ASSIGN_OR_RAISE(auto gathered, Gather(values, positions));
        result = gathered;
      } else {
        ARROW_ASSIGN_OR_RAISE(auto lists, column(Col(i, "list")));
        const auto list_array = lists.make_array();  // keep alive: `list` refers into it
        const auto& list = static_cast<const arrow::ListArray&>(*list_array);
        ARROW_ASSIGN_OR_RAISE(auto gathered, Gather(values, list.values()));
        ARROW_ASSIGN_OR_RAISE(auto offsets, cp::Cast(list.offsets(), arrow::int64()));
        ARROW_ASSIGN_OR_RAISE(result, arrow::LargeListArray::FromArrays(
                                          *offsets.make_array(), *gathered, arrow::default_memory_pool(),
                                          list.null_bitmap(), list.null_count()));
      }
    } else if (f == "agg_any_value") {
      ARROW_ASSIGN_OR_RAISE(result, column(Col(i, "one")));
    } else {
      ARROW_ASSIGN_OR_RAISE(auto flat, column(Col(i, "list")));
      if (f == "agg_list") {
        result = flat;
      } else if (f == "agg_concat") {
        std::string delimiter;
        if (HasOption(infos[i].options, "delimiter")) {
          ARROW_ASSIGN_OR_RAISE(delimiter, GetStringOption(infos[i].options, "delimiter", f));
        }
        ARROW_ASSIGN_OR_RAISE(result, JoinNonNull(flat, delimiter));
      } else {
        ARROW_ASSIGN_OR_RAISE(auto counts, DistinctCountPerList(flat.make_array()));
        result = counts;
      }
    }
    const auto& type = output_schema_->field(static_cast<int>(spec_.group_by.size() + i))->type();
    if (!result.type()->Equals(*type)) {
      ARROW_ASSIGN_OR_RAISE(result, cp::Cast(result, type));
    }
    out.push_back(result.make_array());
  }
  return arrow::Table::Make(output_schema_, out, batch->num_rows());
}

}  // namespace ketch
