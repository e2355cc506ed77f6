#include "ketch/exec/blocking/hash_join.h"

#include <arrow/acero/exec_plan.h>
#include <arrow/acero/options.h>
#include <arrow/compute/api.h>

#include <set>

#include "ketch/exec/morsel.h"
#include "ketch/expr/key_storage.h"

namespace ketch {
namespace {

namespace ac = arrow::acero;
namespace cp = arrow::compute;

constexpr const char* kLeftRow = "__ketch_left_row";
constexpr int64_t kProbeChunkRows = 256 * 1024;
constexpr const char* kRightRow = "__ketch_right_row";

std::string KeyName(const char* side, size_t i) {
  return std::string("__ketch_") + side + "_key" + std::to_string(i);
}

// keys (cast to a common type) + row index of one side, as a table Acero can join.
arrow::Result<std::shared_ptr<arrow::Table>> KeyTable(
    const arrow::Table& table, const std::vector<std::string>& keys,
    const std::vector<std::shared_ptr<arrow::DataType>>& casts, const char* side, const char* row_name) {
  arrow::FieldVector fields;
  arrow::ChunkedArrayVector columns;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto column = StorageView(table.GetColumnByName(keys[i]));  // UUIDs join by their bytes
    if (casts[i]) {
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(column, casts[i]));
      column = cast.chunked_array();
    }
    if (arrow::is_floating(column->type()->id())) {
      // IEEE equality: -0.0 == 0.0 (x + 0.0 turns -0.0 into 0.0).
      ARROW_ASSIGN_OR_RAISE(auto normalized, cp::Add(column, arrow::Datum(0.0)));
      column = normalized.chunked_array();
    }
    fields.push_back(arrow::field(KeyName(side, i), column->type()));
    columns.push_back(column);
  }
  arrow::Int64Builder rows;
  ARROW_RETURN_NOT_OK(rows.Reserve(table.num_rows()));
  for (int64_t i = 0; i < table.num_rows(); ++i) rows.UnsafeAppend(i);
  ARROW_ASSIGN_OR_RAISE(auto row_array, rows.Finish());
  fields.push_back(arrow::field(row_name, arrow::int64()));
  columns.push_back(std::make_shared<arrow::ChunkedArray>(row_array));
  return arrow::Table::Make(arrow::schema(fields), columns, table.num_rows());
}

// Key columns of a batch in the join's common types, -0.0 normalized (as KeyTable does).
arrow::Result<std::vector<arrow::Datum>> PrepareKeys(
    const arrow::RecordBatch& batch, const std::vector<std::string>& keys,
    const std::vector<std::shared_ptr<arrow::DataType>>& types) {
  std::vector<arrow::Datum> out;
  for (size_t i = 0; i < keys.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto column, GetColumn(batch, keys[i]));
    column = StorageView(column);
    arrow::Datum key(column);
    if (!column->type()->Equals(*types[i])) {
      ARROW_ASSIGN_OR_RAISE(key, cp::Cast(key, types[i]));
    }
    if (arrow::is_floating(types[i]->id())) {
      ARROW_ASSIGN_OR_RAISE(key, cp::Add(key, arrow::Datum(0.0)));
    }
    out.push_back(std::move(key));
  }
  return out;
}

// Rows whose key columns are all valid.
std::vector<bool> ValidKeys(const std::vector<arrow::Datum>& keys, int64_t n) {
  std::vector<bool> valid(n, true);
  for (const auto& key : keys) {
    const auto array = key.make_array();  // keep the shared_ptr alive
    if (array->null_count() == 0) continue;
    for (int64_t i = 0; i < n; ++i) valid[i] = valid[i] && array->IsValid(i);
  }
  return valid;
}

ac::JoinType AceroType(JoinType how, bool swapped) {
  switch (how) {
    case JoinType::kInner:
    case JoinType::kCross:  // never hash-joined: CrossJoinOperator
      return ac::JoinType::INNER;
    case JoinType::kLeft:
      return swapped ? ac::JoinType::RIGHT_OUTER : ac::JoinType::LEFT_OUTER;
    case JoinType::kRight:
      return swapped ? ac::JoinType::LEFT_OUTER : ac::JoinType::RIGHT_OUTER;
    case JoinType::kOuter:
      return ac::JoinType::FULL_OUTER;
    case JoinType::kSemi:
      return swapped ? ac::JoinType::RIGHT_SEMI : ac::JoinType::LEFT_SEMI;
    case JoinType::kAnti:
      return swapped ? ac::JoinType::RIGHT_ANTI : ac::JoinType::LEFT_ANTI;
  }
  return ac::JoinType::INNER;
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Table>> JoinTables(const std::shared_ptr<arrow::Table>& left,
                                                        const std::shared_ptr<arrow::Table>& right,
                                                        const JoinTablesOptions& o) {
  const JoinSpec& spec_ = o.spec;
  const auto& left_schema_ = o.left_schema;
  const auto& right_schema_ = o.right_schema;
  std::vector<std::shared_ptr<arrow::DataType>> casts;
  for (size_t i = 0; i < spec_.left_on.size(); ++i) {
    casts.push_back(JoinKeyCast(*left_schema_->GetFieldByName(spec_.left_on[i])->type(),
                                *right_schema_->GetFieldByName(spec_.right_on[i])->type()));
  }
  ARROW_ASSIGN_OR_RAISE(auto left_keys, KeyTable(*left, spec_.left_on, casts, "l", kLeftRow));
  ARROW_ASSIGN_OR_RAISE(auto right_keys, KeyTable(*right, spec_.right_on, casts, "r", kRightRow));
  // Acero builds its hash table on the right input: give it the smaller side.
  const bool swapped = o.build_on_smaller_side && left->num_rows() < right->num_rows();
  std::vector<arrow::FieldRef> lk, rk;
  for (size_t i = 0; i < spec_.left_on.size(); ++i) {
    lk.emplace_back(KeyName("l", i));
    rk.emplace_back(KeyName("r", i));
  }
  ac::Declaration probe{"table_source", ac::TableSourceNodeOptions(swapped ? right_keys : left_keys)};
  ac::Declaration build{"table_source", ac::TableSourceNodeOptions(swapped ? left_keys : right_keys)};
  ac::HashJoinNodeOptions options(AceroType(spec_.how, swapped), swapped ? rk : lk, swapped ? lk : rk);
  ac::Declaration join{"hashjoin", {std::move(probe), std::move(build)}, std::move(options)};
  // The join runs alone (both inputs are complete): let Acero use Arrow's CPU pool.
  ARROW_ASSIGN_OR_RAISE(auto matches, ac::DeclarationToTable(std::move(join), o.use_threads));

  const bool semi_or_anti = spec_.how == JoinType::kSemi || spec_.how == JoinType::kAnti;
  auto left_rows = matches->GetColumnByName(kLeftRow);
  auto right_rows = semi_or_anti ? nullptr : matches->GetColumnByName(kRightRow);
  std::shared_ptr<arrow::Table> left_taken;
  ARROW_ASSIGN_OR_RAISE(auto lt, cp::Take(arrow::Datum(left), arrow::Datum(left_rows)));
  left_taken = lt.table();
  std::shared_ptr<arrow::Table> right_taken;
  if (right_rows) {
    ARROW_ASSIGN_OR_RAISE(auto rt, cp::Take(arrow::Datum(right), arrow::Datum(right_rows)));
    right_taken = rt.table();
  }

  ARROW_ASSIGN_OR_RAISE(auto out, AssembleJoinOutput(left_taken, right_taken, o));
  return out;
}

arrow::Result<std::shared_ptr<arrow::Table>> AssembleJoinOutput(
    const std::shared_ptr<arrow::Table>& left_taken, const std::shared_ptr<arrow::Table>& right_taken,
    const JoinTablesOptions& o) {
  const JoinSpec& spec_ = o.spec;
  const auto& left_schema_ = o.left_schema;
  const auto& right_schema_ = o.right_schema;
  const auto& output_schema_ = o.output_schema;
  std::set<std::string> merged;
  std::map<std::string, std::string> right_key_for;
  for (size_t i = 0; i < spec_.left_on.size(); ++i) {
    if (spec_.left_on[i] == spec_.right_on[i]) {
      merged.insert(spec_.left_on[i]);
      right_key_for[spec_.left_on[i]] = spec_.right_on[i];
    }
  }
  arrow::ChunkedArrayVector columns;
  int field_index = 0;
  for (const auto& field : left_schema_->fields()) {
    const auto& out_type = output_schema_->field(field_index++)->type();
    arrow::Datum column(left_taken->GetColumnByName(field->name()));
    if (merged.count(field->name()) && right_taken) {
      arrow::Datum right_key(right_taken->GetColumnByName(right_key_for[field->name()]));
      // Both sides in the output (common) type first, so no value is narrowed.
      if (!column.type()->Equals(*out_type)) {
        ARROW_ASSIGN_OR_RAISE(column, cp::Cast(column, out_type));
      }
      if (!right_key.type()->Equals(*out_type)) {
        ARROW_ASSIGN_OR_RAISE(right_key, cp::Cast(right_key, out_type));
      }
      if (spec_.how == JoinType::kRight) {
        column = right_key;
      } else if (spec_.how == JoinType::kOuter) {
        ARROW_ASSIGN_OR_RAISE(column,
                              cp::CallFunction("coalesce", {StorageView(column), StorageView(right_key)}));
        column = WrapStorage(column.chunked_array(), out_type);
      }
    }
    columns.push_back(column.chunked_array());
  }
  if (right_taken) {
    for (const auto& field : right_schema_->fields()) {
      if (merged.count(field->name())) continue;
      columns.push_back(right_taken->GetColumnByName(field->name()));
    }
  }
  // Output fields may be nullable where the input was not (outer sides): rebuild with the plan's schema.
  for (size_t i = 0; i < columns.size(); ++i) {
    const auto& type = output_schema_->field(static_cast<int>(i))->type();
    if (!columns[i]->type()->Equals(*type)) {
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(columns[i], type));
      columns[i] = cast.chunked_array();
    }
  }
  return arrow::Table::Make(output_schema_, columns, left_taken->num_rows());
}

arrow::Status HashJoinSource::Produce(const Emit& emit) {
  const JoinTablesOptions options{spec_,
                                  left_schema_,
                                  right_schema_,
                                  output_schema_,
                                  /*use_threads=*/true,
                                  /*build_on_smaller_side=*/true};
  int64_t row = 0;
  auto emit_table = [&](const arrow::Table& table) { return EmitTable(table, morsel_rows_, &row, emit); };
  // Inner, left, semi and anti joins treat each left row on its own, so when the right input is the
  // smaller (build) side the left side is probed in chunks: the output streams out chunk by chunk
  // instead of materializing at once, and a hot key's rows never all sit in memory together.
  const bool chunk_left = CanProbeInChunks(spec_.how);
  auto join_and_emit = [&](const std::shared_ptr<arrow::Table>& left,
                           const std::shared_ptr<arrow::Table>& right) -> arrow::Status {
    if (!chunk_left || left->num_rows() <= std::max<int64_t>(right->num_rows(), kProbeChunkRows)) {
      ARROW_ASSIGN_OR_RAISE(auto joined, JoinTables(left, right, options));
      return emit_table(*joined);
    }
    for (int64_t start = 0; start < left->num_rows(); start += kProbeChunkRows) {
      ARROW_ASSIGN_OR_RAISE(auto joined, JoinTables(left->Slice(start, kProbeChunkRows), right, options));
      ARROW_RETURN_NOT_OK(emit_table(*joined));
    }
    return arrow::Status::OK();
  };
  if (!left_->spilled() && !right_->spilled()) {
    ARROW_ASSIGN_OR_RAISE(auto left, left_->All());
    ARROW_ASSIGN_OR_RAISE(auto right, right_->All());
    return join_and_emit(left, right);
  }
  // Grace hash join: equal keys share a partition on both sides.
  for (int p = 0; p < JoinPartitioner::kPartitions; ++p) {
    ARROW_ASSIGN_OR_RAISE(auto left, left_->Partition(p));
    ARROW_ASSIGN_OR_RAISE(auto right, right_->Partition(p));
    if (left->num_rows() == 0 && right->num_rows() == 0) continue;
    ARROW_RETURN_NOT_OK(join_and_emit(left, right));
  }
  return arrow::Status::OK();
}

JoinPartitioner::JoinPartitioner(std::vector<std::shared_ptr<arrow::DataType>> key_types) {
  for (const auto& type : key_types) key_types_.push_back(StorageType(type));
}

arrow::Result<std::shared_ptr<arrow::Int32Array>> JoinPartitioner::Partition(
    const arrow::RecordBatch& batch, const std::vector<std::string>& keys) {
  std::vector<arrow::Datum> columns;
  for (size_t i = 0; i < keys.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto column, GetColumn(batch, keys[i]));
    column = StorageView(column);
    arrow::Datum key(column);
    if (!column->type()->Equals(*key_types_[i])) {
      ARROW_ASSIGN_OR_RAISE(key, cp::Cast(key, key_types_[i]));
    }
    columns.push_back(std::move(key));
  }
  cp::ExecBatch key_batch(columns, batch.num_rows());
  std::shared_ptr<arrow::Array> ids;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!grouper_) {
      std::vector<arrow::TypeHolder> types(key_types_.begin(), key_types_.end());
      ARROW_ASSIGN_OR_RAISE(grouper_, cp::Grouper::Make(types));
    }
    ARROW_ASSIGN_OR_RAISE(auto datum, grouper_->Consume(cp::ExecSpan(key_batch)));
    ids = datum.make_array();
  }
  const auto& group_ids = static_cast<const arrow::UInt32Array&>(*ids);
  arrow::Int32Builder out;
  ARROW_RETURN_NOT_OK(out.Reserve(batch.num_rows()));
  for (int64_t i = 0; i < batch.num_rows(); ++i)
    out.UnsafeAppend(static_cast<int32_t>(group_ids.Value(i) % kPartitions));
  std::shared_ptr<arrow::Int32Array> result;
  ARROW_RETURN_NOT_OK(out.Finish(&result));
  return result;
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> JoinInputSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (morsel->num_rows() == 0) return std::optional<std::shared_ptr<arrow::RecordBatch>>();
  if (spilled()) {
    ARROW_RETURN_NOT_OK(SpillBatch(morsel));
    return std::optional<std::shared_ptr<arrow::RecordBatch>>();
  }
  held_.Add(memory_, BatchBytes(*morsel), memory_tracker_);
  batches_.push_back(std::move(morsel));
  if (held_.bytes() > memory_->budget() / 2) {
    for (int p = 0; p < JoinPartitioner::kPartitions; ++p) {
      ARROW_ASSIGN_OR_RAISE(auto file, SpillFile::Create(spill_dir_, schema_));
      partitions_.push_back(std::move(file));
    }
    auto held = std::move(batches_);
    batches_.clear();
    for (const auto& batch : held) ARROW_RETURN_NOT_OK(SpillBatch(batch));
    held_.Clear();
  }
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

arrow::Status JoinInputSink::SpillBatch(const std::shared_ptr<arrow::RecordBatch>& batch) {
  ARROW_ASSIGN_OR_RAISE(auto partition, partitioner_->Partition(*batch, keys_));
  ARROW_ASSIGN_OR_RAISE(auto parts, SplitByPartition(batch, partition, JoinPartitioner::kPartitions));
  for (int p = 0; p < JoinPartitioner::kPartitions; ++p) {
    if (parts[p]->num_rows() > 0) ARROW_RETURN_NOT_OK(partitions_[p]->Write(*parts[p]));
  }
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Table>> JoinInputSink::All() {
  return arrow::Table::FromRecordBatches(schema_, batches_);
}

arrow::Result<std::shared_ptr<arrow::Table>> JoinInputSink::Partition(int p) {
  if (!spilled()) {
    std::vector<std::shared_ptr<arrow::RecordBatch>> parts;
    for (const auto& batch : batches_) {
      ARROW_ASSIGN_OR_RAISE(auto partition, partitioner_->Partition(*batch, keys_));
      ARROW_ASSIGN_OR_RAISE(auto mask, cp::CallFunction("equal", {partition, arrow::Datum(p)}));
      ARROW_ASSIGN_OR_RAISE(auto part, cp::Filter(batch, mask));
      parts.push_back(part.record_batch());
    }
    return arrow::Table::FromRecordBatches(schema_, parts);
  }
  if (!finished_writing_) {
    for (auto& file : partitions_) ARROW_RETURN_NOT_OK(file->FinishWriting());
    finished_writing_ = true;
  }
  std::vector<std::shared_ptr<arrow::RecordBatch>> parts;
  for (int64_t i = 0; i < partitions_[p]->num_batches(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto batch, partitions_[p]->ReadBatch(i));
    parts.push_back(std::move(batch));
  }
  auto table = arrow::Table::FromRecordBatches(schema_, parts);
  partitions_[p].reset();  // the partition is consumed: delete its file
  return table;
}

arrow::Result<std::shared_ptr<JoinHashTable>> JoinHashTable::Build(
    const std::shared_ptr<arrow::Table>& build, const std::vector<std::string>& keys,
    const std::vector<std::shared_ptr<arrow::DataType>>& key_types) {
  auto table = std::make_shared<JoinHashTable>();
  for (const auto& type : key_types) table->key_types_.push_back(StorageType(type));
  ARROW_ASSIGN_OR_RAISE(table->rows_, build->CombineChunksToBatch());
  const int64_t n = table->rows_->num_rows();
  ARROW_ASSIGN_OR_RAISE(auto key_columns, PrepareKeys(*table->rows_, keys, table->key_types_));
  std::vector<arrow::TypeHolder> types(table->key_types_.begin(), table->key_types_.end());
  ARROW_ASSIGN_OR_RAISE(table->grouper_, cp::Grouper::Make(types));
  cp::ExecBatch key_batch(key_columns, n);
  ARROW_ASSIGN_OR_RAISE(auto ids_datum, table->grouper_->Consume(cp::ExecSpan(key_batch)));
  auto ids_array = ids_datum.make_array();
  const auto& ids = static_cast<const arrow::UInt32Array&>(*ids_array);
  const auto valid = ValidKeys(key_columns, n);
  const uint32_t groups = table->grouper_->num_groups();
  table->offsets_.assign(groups + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (valid[i]) table->offsets_[ids.Value(i) + 1]++;
  }
  for (uint32_t g = 0; g < groups; ++g) {
    table->max_matches_ = std::max(table->max_matches_, table->offsets_[g + 1]);
    table->offsets_[g + 1] += table->offsets_[g];
  }
  table->row_ids_.resize(table->offsets_[groups]);
  std::vector<int64_t> fill(table->offsets_.begin(), table->offsets_.end() - 1);
  for (int64_t i = 0; i < n; ++i) {
    if (valid[i]) table->row_ids_[fill[ids.Value(i)]++] = i;
  }
  return table;
}

arrow::Result<JoinHashTable::Matches> JoinHashTable::Probe(const arrow::RecordBatch& batch,
                                                           const std::vector<std::string>& keys,
                                                           JoinType how) const {
  const int64_t n = batch.num_rows();
  ARROW_ASSIGN_OR_RAISE(auto key_columns, PrepareKeys(batch, keys, key_types_));
  std::shared_ptr<arrow::Array> ids_array;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cp::ExecBatch key_batch(key_columns, n);
    ARROW_ASSIGN_OR_RAISE(auto ids_datum, grouper_->Lookup(cp::ExecSpan(key_batch)));
    ids_array = ids_datum.make_array();
  }
  const auto& ids = static_cast<const arrow::UInt32Array&>(*ids_array);
  const auto valid = ValidKeys(key_columns, n);
  arrow::Int64Builder probe, build;
  ARROW_RETURN_NOT_OK(probe.Reserve(n));
  const bool with_build = how == JoinType::kInner || how == JoinType::kLeft;
  if (with_build) ARROW_RETURN_NOT_OK(build.Reserve(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t begin = 0, end = 0;
    if (valid[i] && ids.IsValid(i)) {
      const uint32_t g = ids.Value(i);
      if (g + 1 < offsets_.size()) {
        begin = offsets_[g];
        end = offsets_[g + 1];
      }
    }
    switch (how) {
      case JoinType::kSemi:
        if (end > begin) ARROW_RETURN_NOT_OK(probe.Append(i));
        break;
      case JoinType::kAnti:
        if (end == begin) ARROW_RETURN_NOT_OK(probe.Append(i));
        break;
      case JoinType::kLeft:
        if (end == begin) {
          ARROW_RETURN_NOT_OK(probe.Append(i));
          ARROW_RETURN_NOT_OK(build.AppendNull());
          break;
        }
        [[fallthrough]];
      default:
        for (int64_t k = begin; k < end; ++k) {
          ARROW_RETURN_NOT_OK(probe.Append(i));
          ARROW_RETURN_NOT_OK(build.Append(row_ids_[k]));
        }
    }
  }
  Matches out;
  std::shared_ptr<arrow::Array> probe_ids;
  ARROW_RETURN_NOT_OK(probe.Finish(&probe_ids));
  out.probe = std::static_pointer_cast<arrow::Int64Array>(probe_ids);
  if (with_build) {
    std::shared_ptr<arrow::Array> build_ids;
    ARROW_RETURN_NOT_OK(build.Finish(&build_ids));
    out.build = std::static_pointer_cast<arrow::Int64Array>(build_ids);
  }
  return out;
}

bool CanProbeInChunks(JoinType how) {
  return how == JoinType::kInner || how == JoinType::kLeft || how == JoinType::kSemi ||
         how == JoinType::kAnti;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> HashJoinProbeOperator::Execute(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const {
  const auto& probe_keys = build_is_left_ ? options_.spec.right_on : options_.spec.left_on;
  ARROW_ASSIGN_OR_RAISE(auto matches, table_->Probe(*morsel, probe_keys, options_.spec.how));
  ARROW_ASSIGN_OR_RAISE(auto probed, cp::Take(arrow::Datum(morsel), arrow::Datum(matches.probe)));
  ARROW_ASSIGN_OR_RAISE(auto probe_table, arrow::Table::FromRecordBatches({probed.record_batch()}));
  std::shared_ptr<arrow::Table> build_table;
  if (matches.build) {
    ARROW_ASSIGN_OR_RAISE(auto built, cp::Take(arrow::Datum(table_->rows()), arrow::Datum(matches.build)));
    ARROW_ASSIGN_OR_RAISE(build_table, arrow::Table::FromRecordBatches({built.record_batch()}));
  }
  ARROW_ASSIGN_OR_RAISE(auto joined, build_is_left_ ? AssembleJoinOutput(build_table, probe_table, options_)
                                                    : AssembleJoinOutput(probe_table, build_table, options_));
  // Output rows are probe rows (repeated per match): their source rows follow along.
  {
    arrow::Int64Builder rows;
    ARROW_RETURN_NOT_OK(rows.Reserve(matches.probe->length()));
    for (int64_t i = 0; i < matches.probe->length(); ++i)
      rows.UnsafeAppend(ctx->SourceRow(matches.probe->Value(i)));
    std::shared_ptr<arrow::Array> source_rows;
    ARROW_RETURN_NOT_OK(rows.Finish(&source_rows));
    ctx->source_rows = std::static_pointer_cast<arrow::Int64Array>(source_rows);
  }
  return joined->CombineChunksToBatch();
}

}  // namespace ketch
