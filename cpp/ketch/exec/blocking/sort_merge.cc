#include "ketch/exec/blocking/sort_merge.h"

#include <arrow/compute/api.h>
#include <arrow/extension_type.h>

#include <cmath>
#include <queue>
#include <string_view>

#include "ketch/expr/key_storage.h"

namespace ketch {

namespace cp = arrow::compute;

arrow::compute::SortOptions ToSortOptions(const SortSpec& spec) {
  std::vector<cp::SortKey> keys;
  for (size_t i = 0; i < spec.keys.size(); ++i) {
    keys.emplace_back(arrow::FieldRef(spec.keys[i]->name()),
                      spec.descending[i] ? cp::SortOrder::Descending : cp::SortOrder::Ascending,
                      spec.nulls_first[i] ? cp::NullPlacement::AtStart : cp::NullPlacement::AtEnd);
  }
  return cp::SortOptions(keys);
}

arrow::Result<std::shared_ptr<arrow::Array>> SortIndicesBy(const arrow::Datum& rows, const SortSpec& spec) {
  std::vector<std::string> names;
  for (const auto& key : spec.keys) names.push_back(key->name());
  if (rows.kind() == arrow::Datum::TABLE) {
    ARROW_ASSIGN_OR_RAISE(auto viewed, WithStorageColumns(rows.table(), names));
    return cp::SortIndices(arrow::Datum(viewed), ToSortOptions(spec));
  }
  ARROW_ASSIGN_OR_RAISE(auto viewed, WithStorageColumns(rows.record_batch(), names));
  return cp::SortIndices(arrow::Datum(viewed), ToSortOptions(spec));
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> SortRunOperator::Execute(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const {
  ARROW_ASSIGN_OR_RAISE(auto indices, SortIndicesBy(arrow::Datum(morsel), spec_));
  ARROW_ASSIGN_OR_RAISE(auto sorted, cp::Take(arrow::Datum(morsel), arrow::Datum(indices)));
  ctx->source_rows = nullptr;
  return sorted.record_batch();
}

namespace {

enum class KeyKind { kInt, kFloat, kString };

KeyKind KindOf(const arrow::DataType& type) {
  if (arrow::is_floating(type.id())) return KeyKind::kFloat;
  if (arrow::is_string(type.id()) || arrow::is_binary(type.id()) ||
      type.id() == arrow::Type::FIXED_SIZE_BINARY) {
    return KeyKind::kString;
  }
  return KeyKind::kInt;
}

bool Mergeable(const arrow::DataType& type) {
  if (type.id() == arrow::Type::EXTENSION) {
    const auto& extension = static_cast<const arrow::ExtensionType&>(type);
    return CanBeKey(type, KeyUse::kOrder) && Mergeable(*extension.storage_type());
  }
  return arrow::is_integer(type.id()) || type.id() == arrow::Type::FIXED_SIZE_BINARY ||
         arrow::is_floating(type.id()) || arrow::is_string(type.id()) || arrow::is_binary(type.id()) ||
         type.id() == arrow::Type::BOOL || type.id() == arrow::Type::DATE32 ||
         type.id() == arrow::Type::DATE64 || type.id() == arrow::Type::TIMESTAMP;
}

// One key column of a run's current batch, in a canonical physical type.
struct KeyColumn {
  KeyKind kind;
  std::shared_ptr<arrow::Array> array;  // int64 / double / large_binary-like
  const int64_t* ints = nullptr;
  const double* floats = nullptr;
};

arrow::Result<KeyColumn> Canonical(const std::shared_ptr<arrow::Array>& key_column) {
  const std::shared_ptr<arrow::Array> column = StorageView(key_column);  // UUIDs: their bytes
  KeyColumn key{KindOf(*column->type()), nullptr};
  switch (key.kind) {
    case KeyKind::kFloat: {
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(column, arrow::float64()));
      key.array = cast.make_array();
      key.floats = static_cast<const arrow::DoubleArray&>(*key.array).raw_values();
      break;
    }
    case KeyKind::kString: {
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(column, arrow::large_binary()));
      key.array = cast.make_array();
      break;
    }
    case KeyKind::kInt: {
      std::shared_ptr<arrow::Array> input = column;
      if (column->type()->id() == arrow::Type::DATE32) {
        ARROW_ASSIGN_OR_RAISE(input, column->View(arrow::int32()));
      } else if (column->type()->id() == arrow::Type::DATE64 ||
                 column->type()->id() == arrow::Type::TIMESTAMP) {
        ARROW_ASSIGN_OR_RAISE(input, column->View(arrow::int64()));
      } else if (column->type()->id() == arrow::Type::UINT64) {
        // Keep the order of values >= 2**63: compare as float (exact below 2**53, monotonic above).
        ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(column, arrow::float64(), cp::CastOptions::Unsafe()));
        key.kind = KeyKind::kFloat;
        key.array = cast.make_array();
        key.floats = static_cast<const arrow::DoubleArray&>(*key.array).raw_values();
        return key;
      }
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(input, arrow::int64()));
      key.array = cast.make_array();
      key.ints = static_cast<const arrow::Int64Array&>(*key.array).raw_values();
      break;
    }
  }
  return key;
}

struct Cursor {
  RunReader reader;
  std::shared_ptr<arrow::RecordBatch> batch;
  std::vector<KeyColumn> keys;
  int64_t row = 0;
  int32_t chunk = -1;  // index of `batch` in the current output block, -1 when not referenced yet
};

}  // namespace

bool CanMergeSortKeys(const SortSpec& spec, const arrow::Schema& schema) {
  for (const auto& key : spec.keys) {
    auto field = schema.GetFieldByName(key->name());
    if (!field || !Mergeable(*field->type())) return false;
  }
  return true;
}

arrow::Status MergeSortedRuns(const SortSpec& spec, const std::shared_ptr<arrow::Schema>& schema,
                              std::vector<RunReader> runs, int64_t morsel_rows, const Source::Emit& emit) {
  std::vector<Cursor> cursors(runs.size());
  std::vector<int> key_index;
  for (const auto& key : spec.keys) key_index.push_back(schema->GetFieldIndex(key->name()));
  // Loads the cursor's next non-empty batch; false at the end of the run.
  auto advance_batch = [&](Cursor& c) -> arrow::Result<bool> {
    while (true) {
      ARROW_ASSIGN_OR_RAISE(c.batch, c.reader());
      if (!c.batch) return false;
      if (c.batch->num_rows() == 0) continue;
      c.keys.clear();
      for (int index : key_index) {
        ARROW_ASSIGN_OR_RAISE(auto key, Canonical(c.batch->column(index)));
        c.keys.push_back(std::move(key));
      }
      c.row = 0;
      c.chunk = -1;
      return true;
    }
  };
  // Negative when cursor a's row sorts before b's; ties by run index (stability).
  auto compare = [&](size_t a, size_t b) {
    const Cursor& x = cursors[a];
    const Cursor& y = cursors[b];
    for (size_t k = 0; k < spec.keys.size(); ++k) {
      const KeyColumn& kx = x.keys[k];
      const KeyColumn& ky = y.keys[k];
      const bool nx = kx.array->IsNull(x.row), ny = ky.array->IsNull(y.row);
      if (nx || ny) {
        if (nx && ny) continue;
        return (nx ? -1 : 1) * (spec.nulls_first[k] ? 1 : -1);
      }
      int c = 0;
      switch (kx.kind) {
        case KeyKind::kInt: {
          const int64_t vx = kx.ints[x.row], vy = ky.ints[y.row];
          c = vx < vy ? -1 : (vx > vy ? 1 : 0);
          break;
        }
        case KeyKind::kFloat: {
          const double vx = kx.floats[x.row], vy = ky.floats[y.row];
          const bool nanx = std::isnan(vx), nany = std::isnan(vy);
          // Arrow's rule: NaN sits between the numbers and the nulls, on the nulls' side, whatever
          // the direction.
          if (nanx || nany) {
            if (nanx && nany) continue;
            return (nanx ? 1 : -1) * (spec.nulls_first[k] ? -1 : 1);
          }
          c = vx < vy ? -1 : (vx > vy ? 1 : 0);
          break;
        }
        case KeyKind::kString: {
          auto vx = static_cast<const arrow::LargeBinaryArray&>(*kx.array).GetView(x.row);
          auto vy = static_cast<const arrow::LargeBinaryArray&>(*ky.array).GetView(y.row);
          c = vx.compare(vy);
          c = c < 0 ? -1 : (c > 0 ? 1 : 0);
          break;
        }
      }
      if (c != 0) return spec.descending[k] ? -c : c;
    }
    return a < b ? -1 : (a > b ? 1 : 0);
  };
  auto greater = [&](size_t a, size_t b) { return compare(a, b) > 0; };
  std::priority_queue<size_t, std::vector<size_t>, decltype(greater)> heap(greater);
  for (size_t r = 0; r < runs.size(); ++r) {
    cursors[r].reader = std::move(runs[r]);
    ARROW_ASSIGN_OR_RAISE(bool has_rows, advance_batch(cursors[r]));
    if (has_rows) heap.push(r);
  }
  // Output block: the batches rows are taken from, and global indices into their concatenation.
  std::vector<std::shared_ptr<arrow::RecordBatch>> chunks;
  std::vector<int64_t> chunk_offsets;
  arrow::Int64Builder indices;
  int64_t next_row = 0;
  auto flush = [&]() -> arrow::Status {
    if (indices.length() == 0) return arrow::Status::OK();
    ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema, chunks));
    ARROW_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
    ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(arrow::Datum(table), arrow::Datum(index_array)));
    ARROW_ASSIGN_OR_RAISE(auto batch, taken.table()->CombineChunksToBatch());
    const int64_t n = batch->num_rows();
    ARROW_RETURN_NOT_OK(emit(std::move(batch), next_row, nullptr, 0));
    next_row += n;
    chunks.clear();
    chunk_offsets.clear();
    for (auto& c : cursors) c.chunk = -1;
    return arrow::Status::OK();
  };
  while (!heap.empty()) {
    const size_t r = heap.top();
    heap.pop();
    Cursor& c = cursors[r];
    if (c.chunk < 0) {
      c.chunk = static_cast<int32_t>(chunks.size());
      chunk_offsets.push_back(chunks.empty() ? 0 : chunk_offsets.back() + chunks.back()->num_rows());
      chunks.push_back(c.batch);
    }
    ARROW_RETURN_NOT_OK(indices.Append(chunk_offsets[c.chunk] + c.row));
    bool alive = true;
    if (++c.row == c.batch->num_rows()) {
      // The block still references the old batch (kept alive by `chunks`).
      ARROW_ASSIGN_OR_RAISE(alive, advance_batch(c));
    }
    if (alive) heap.push(r);
    if (indices.length() >= morsel_rows) ARROW_RETURN_NOT_OK(flush());
  }
  return flush();
}

}  // namespace ketch
