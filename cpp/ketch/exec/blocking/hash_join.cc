#include "ketch/exec/blocking/hash_join.h"

#include <arrow/acero/exec_plan.h>
#include <arrow/acero/options.h>
#include <arrow/compute/api.h>

#include <set>

#include "ketch/exec/blocking/sort_sink.h"

namespace ketch {
namespace {

namespace ac = arrow::acero;
namespace cp = arrow::compute;

constexpr const char* kLeftRow = "__ketch_left_row";
constexpr const char* kRightRow = "__ketch_right_row";

std::string KeyName(const char* side, size_t i) {
  return std::string("__ketch_") + side + "_key" + std::to_string(i);
}

std::shared_ptr<arrow::DataType> KeyType(const arrow::DataType& l, const arrow::DataType& r) {
  if (l.Equals(r)) return nullptr;
  if (arrow::is_string(l.id())) return arrow::large_utf8();
  return arrow::int64();
}

// keys (cast to a common type) + row index of one side, as a table Acero can join.
arrow::Result<std::shared_ptr<arrow::Table>> KeyTable(
    const arrow::Table& table, const std::vector<std::string>& keys,
    const std::vector<std::shared_ptr<arrow::DataType>>& casts, const char* side, const char* row_name) {
  arrow::FieldVector fields;
  arrow::ChunkedArrayVector columns;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto column = table.GetColumnByName(keys[i]);
    if (casts[i]) {
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(column, casts[i]));
      column = cast.chunked_array();
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

ac::JoinType AceroType(JoinType how, bool swapped) {
  switch (how) {
    case JoinType::kInner:
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

arrow::Status HashJoinSource::Produce(const Emit& emit) {
  ARROW_ASSIGN_OR_RAISE(auto left, arrow::Table::FromRecordBatches(left_schema_, left_->batches));
  ARROW_ASSIGN_OR_RAISE(auto right, arrow::Table::FromRecordBatches(right_schema_, right_->batches));
  std::vector<std::shared_ptr<arrow::DataType>> casts;
  for (size_t i = 0; i < spec_.left_on.size(); ++i) {
    casts.push_back(KeyType(*left_schema_->GetFieldByName(spec_.left_on[i])->type(),
                            *right_schema_->GetFieldByName(spec_.right_on[i])->type()));
  }
  ARROW_ASSIGN_OR_RAISE(auto left_keys, KeyTable(*left, spec_.left_on, casts, "l", kLeftRow));
  ARROW_ASSIGN_OR_RAISE(auto right_keys, KeyTable(*right, spec_.right_on, casts, "r", kRightRow));
  // Acero builds its hash table on the right input: give it the smaller side.
  const bool swapped = left->num_rows() < right->num_rows();
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
  ARROW_ASSIGN_OR_RAISE(auto matches, ac::DeclarationToTable(std::move(join), /*use_threads=*/true));

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

  std::set<std::string> merged;
  std::map<std::string, std::string> right_key_for;
  for (size_t i = 0; i < spec_.left_on.size(); ++i) {
    if (spec_.left_on[i] == spec_.right_on[i]) {
      merged.insert(spec_.left_on[i]);
      right_key_for[spec_.left_on[i]] = spec_.right_on[i];
    }
  }
  arrow::ChunkedArrayVector columns;
  for (const auto& field : left_schema_->fields()) {
    arrow::Datum column(left_taken->GetColumnByName(field->name()));
    if (merged.count(field->name()) && right_taken) {
      arrow::Datum right_key(right_taken->GetColumnByName(right_key_for[field->name()]));
      if (!right_key.type()->Equals(*column.type())) {
        ARROW_ASSIGN_OR_RAISE(right_key, cp::Cast(right_key, column.type()));
      }
      if (spec_.how == JoinType::kRight) {
        column = right_key;
      } else if (spec_.how == JoinType::kOuter) {
        ARROW_ASSIGN_OR_RAISE(column, cp::CallFunction("coalesce", {column, right_key}));
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
  auto output = arrow::Table::Make(output_schema_, columns, matches->num_rows());
  ARROW_ASSIGN_OR_RAISE(auto batches, TableToBatches(*output, 128 * 1024));
  int64_t row = 0;
  for (auto& batch : batches) {
    const int64_t n = batch->num_rows();
    ARROW_RETURN_NOT_OK(emit(std::move(batch), row, nullptr));
    row += n;
  }
  return arrow::Status::OK();
}

}  // namespace ketch
