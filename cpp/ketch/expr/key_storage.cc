#include "ketch/expr/key_storage.h"

#include <arrow/extension_type.h>

#include <type_traits>

#include "ketch/expr/row_hash.h"

namespace ketch {
namespace {

bool IsExtension(const arrow::DataType& type) { return type.id() == arrow::Type::EXTENSION; }

const arrow::ExtensionType& AsExtension(const arrow::DataType& type) {
  return static_cast<const arrow::ExtensionType&>(type);
}

// Pickled Python objects: equal objects need not pickle to equal bytes ({1, 2} and {2, 1},
// 1 and 1.0), so their bytes are no key.
bool IsPythonObjects(const arrow::DataType& type) {
  return IsExtension(type) && AsExtension(type).extension_name() == "ketch.python";
}

const arrow::DataType& StorageOf(const arrow::DataType& type) {
  const arrow::DataType* current = &type;
  while (IsExtension(*current)) current = AsExtension(*current).storage_type().get();
  return *current;
}

bool IsOrderableStorage(const arrow::DataType& type) {
  const auto id = type.id();
  return arrow::is_integer(id) || arrow::is_floating(id) || arrow::is_string(id) || arrow::is_binary(id) ||
         id == arrow::Type::FIXED_SIZE_BINARY || arrow::is_temporal(id) || id == arrow::Type::BOOL;
}

template <typename Batch, typename Column>
arrow::Result<std::shared_ptr<Batch>> ViewColumns(const std::shared_ptr<Batch>& batch,
                                                  const std::vector<std::string>& names,
                                                  std::vector<std::shared_ptr<Column>> columns) {
  arrow::FieldVector fields = batch->schema()->fields();
  bool changed = false;
  for (const auto& name : names) {
    const int index = batch->schema()->GetFieldIndex(name);
    if (index < 0)
      return arrow::Status::KeyError("no key column '", name, "' in ", batch->schema()->ToString());
    if (!IsExtension(*fields[index]->type())) continue;
    columns[index] = StorageView(columns[index]);
    fields[index] = fields[index]->WithType(columns[index]->type());
    changed = true;
  }
  if (!changed) return batch;
  auto schema = arrow::schema(std::move(fields), batch->schema()->metadata());
  if constexpr (std::is_same_v<Batch, arrow::RecordBatch>) {
    return arrow::RecordBatch::Make(std::move(schema), batch->num_rows(), std::move(columns));
  } else {
    return arrow::Table::Make(std::move(schema), std::move(columns), batch->num_rows());
  }
}

}  // namespace

std::shared_ptr<arrow::DataType> StorageType(const std::shared_ptr<arrow::DataType>& type) {
  std::shared_ptr<arrow::DataType> current = type;
  while (current && IsExtension(*current)) current = AsExtension(*current).storage_type();
  return current;
}

std::shared_ptr<arrow::Array> StorageView(const std::shared_ptr<arrow::Array>& array) {
  std::shared_ptr<arrow::Array> current = array;
  while (current && IsExtension(*current->type())) {
    current = static_cast<const arrow::ExtensionArray&>(*current).storage();
  }
  return current;
}

std::shared_ptr<arrow::ChunkedArray> StorageView(const std::shared_ptr<arrow::ChunkedArray>& array) {
  if (!array || !IsExtension(*array->type())) return array;
  arrow::ArrayVector chunks;
  chunks.reserve(array->chunks().size());
  for (const auto& chunk : array->chunks()) chunks.push_back(StorageView(chunk));
  return std::make_shared<arrow::ChunkedArray>(std::move(chunks), StorageType(array->type()));
}

arrow::Datum StorageView(const arrow::Datum& value) {
  if (!value.type() || !IsExtension(*value.type())) return value;
  switch (value.kind()) {
    case arrow::Datum::ARRAY:
      return arrow::Datum(StorageView(value.make_array()));
    case arrow::Datum::CHUNKED_ARRAY:
      return arrow::Datum(StorageView(value.chunked_array()));
    case arrow::Datum::SCALAR: {
      std::shared_ptr<arrow::Scalar> scalar = value.scalar();
      while (IsExtension(*scalar->type)) {
        const auto& extension = static_cast<const arrow::ExtensionScalar&>(*scalar);
        scalar = extension.is_valid && extension.value
                     ? extension.value
                     : arrow::MakeNullScalar(AsExtension(*scalar->type).storage_type());
      }
      return arrow::Datum(std::move(scalar));
    }
    default:
      return value;
  }
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> WithStorageColumns(
    const std::shared_ptr<arrow::RecordBatch>& batch, const std::vector<std::string>& columns) {
  return ViewColumns<arrow::RecordBatch, arrow::Array>(batch, columns, batch->columns());
}

arrow::Result<std::shared_ptr<arrow::Table>> WithStorageColumns(const std::shared_ptr<arrow::Table>& table,
                                                                const std::vector<std::string>& columns) {
  return ViewColumns<arrow::Table, arrow::ChunkedArray>(table, columns, table->columns());
}

std::shared_ptr<arrow::Array> WrapStorage(const std::shared_ptr<arrow::Array>& array,
                                          const std::shared_ptr<arrow::DataType>& type) {
  if (!IsExtension(*type) || array->type()->Equals(*type)) return array;
  // Nested extension types wrap from the innermost storage outwards.
  const auto& extension = AsExtension(*type);
  return arrow::ExtensionType::WrapArray(type, WrapStorage(array, extension.storage_type()));
}

std::shared_ptr<arrow::ChunkedArray> WrapStorage(const std::shared_ptr<arrow::ChunkedArray>& array,
                                                 const std::shared_ptr<arrow::DataType>& type) {
  if (!IsExtension(*type) || array->type()->Equals(*type)) return array;
  arrow::ArrayVector chunks;
  chunks.reserve(array->chunks().size());
  for (const auto& chunk : array->chunks()) chunks.push_back(WrapStorage(chunk, type));
  return std::make_shared<arrow::ChunkedArray>(std::move(chunks), type);
}

bool CanBeKey(const arrow::DataType& type, KeyUse use) {
  if (IsPythonObjects(type)) return false;
  const arrow::DataType& storage = StorageOf(type);
  return use == KeyUse::kHash ? IsHashableType(storage) : IsOrderableStorage(storage);
}

bool ComparesAsStorage(const arrow::DataType& type) {
  return IsExtension(type) && CanBeKey(type, KeyUse::kHash) && CanBeKey(type, KeyUse::kOrder);
}

arrow::Status CheckKeyColumn(std::string_view operation, std::string_view action, std::string_view column,
                             const arrow::DataType& type, KeyUse use) {
  if (CanBeKey(type, use)) return arrow::Status::OK();
  std::string why;
  if (IsPythonObjects(type)) {
    why =
        " (Python objects are stored pickled and have no equality or order the engine can use; "
        "convert the column to a comparable type first)";
  } else if (IsExtension(type)) {
    why = std::string(" (an extension type stored as ") + StorageOf(type).ToString() +
          (use == KeyUse::kHash ? ", which cannot be hashed)" : ", which has no order)");
  } else {
    why = use == KeyUse::kHash ? " (it cannot be hashed)" : " (it has no order)";
  }
  // Python's names for the extension types whose ToString is Arrow's generic one.
  const std::string name = IsPythonObjects(type) ? "Python" : type.ToString();
  return arrow::Status::TypeError(operation, ": cannot ", action, " column '", column, "' of type ", name,
                                  why);
}

}  // namespace ketch
