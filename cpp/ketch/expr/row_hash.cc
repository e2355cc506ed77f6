#include "ketch/expr/row_hash.h"

#include <arrow/compute/api.h>
#include <arrow/util/hashing.h>

#include <cmath>
#include <cstring>

#include "ketch/common/splitmix64.h"
#include "ketch/expr/key_storage.h"

namespace ketch {
namespace {

constexpr uint64_t kNullHash = 0x5bd1e9955bd1e995ULL;

void Combine(uint64_t* seed, uint64_t value) {
  *seed ^= value + 0x9e3779b97f4a7c15ULL + (*seed << 6) + (*seed >> 2);
}

uint64_t HashBytes(const void* data, int64_t length) {
  return static_cast<uint64_t>(arrow::internal::ComputeStringHash<0>(data, length));
}

template <typename ArrayType>
void HashIntegers(const arrow::Array& array, std::vector<uint64_t>* out) {
  const auto& a = static_cast<const ArrayType&>(array);
  for (int64_t i = 0; i < a.length(); ++i) {
    Combine(&(*out)[i],
            a.IsNull(i) ? kNullHash : Mix64(static_cast<uint64_t>(static_cast<int64_t>(a.Value(i)))));
  }
}

template <typename ArrayType>
void HashFloats(const arrow::Array& array, std::vector<uint64_t>* out) {
  const auto& a = static_cast<const ArrayType&>(array);
  for (int64_t i = 0; i < a.length(); ++i) {
    if (a.IsNull(i)) {
      Combine(&(*out)[i], kNullHash);
      continue;
    }
    double v = static_cast<double>(a.Value(i));
    if (v == 0.0) v = 0.0;                                            // -0.0 == 0.0
    if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();  // every NaN alike
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    Combine(&(*out)[i], Mix64(bits));
  }
}

template <typename ArrayType>
void HashBinary(const arrow::Array& array, std::vector<uint64_t>* out) {
  const auto& a = static_cast<const ArrayType&>(array);
  for (int64_t i = 0; i < a.length(); ++i) {
    if (a.IsNull(i)) {
      Combine(&(*out)[i], kNullHash);
      continue;
    }
    auto view = a.GetView(i);
    Combine(&(*out)[i], HashBytes(view.data(), static_cast<int64_t>(view.size())));
  }
}

arrow::Status HashColumn(const std::shared_ptr<arrow::Array>& column, const std::string& name,
                         std::vector<uint64_t>* out) {
  const arrow::DataType& type = *column->type();
  switch (type.id()) {
    case arrow::Type::NA:
      for (auto& h : *out) Combine(&h, kNullHash);
      return arrow::Status::OK();
    case arrow::Type::BOOL: {
      const auto& a = static_cast<const arrow::BooleanArray&>(*column);
      for (int64_t i = 0; i < a.length(); ++i)
        Combine(&(*out)[i], a.IsNull(i) ? kNullHash : Mix64(a.Value(i) ? 1 : 0));
      return arrow::Status::OK();
    }
    case arrow::Type::INT8:
      HashIntegers<arrow::Int8Array>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::INT16:
      HashIntegers<arrow::Int16Array>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::INT32:
    case arrow::Type::DATE32:
    case arrow::Type::TIME32: {
      ARROW_ASSIGN_OR_RAISE(auto view, column->View(arrow::int32()));
      HashIntegers<arrow::Int32Array>(*view, out);
      return arrow::Status::OK();
    }
    case arrow::Type::INT64:
    case arrow::Type::DATE64:
    case arrow::Type::TIME64:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::DURATION: {
      ARROW_ASSIGN_OR_RAISE(auto view, column->View(arrow::int64()));
      HashIntegers<arrow::Int64Array>(*view, out);
      return arrow::Status::OK();
    }
    case arrow::Type::UINT8:
      HashIntegers<arrow::UInt8Array>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::UINT16:
      HashIntegers<arrow::UInt16Array>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::UINT32:
      HashIntegers<arrow::UInt32Array>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::UINT64:
      HashIntegers<arrow::UInt64Array>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::HALF_FLOAT: {
      ARROW_ASSIGN_OR_RAISE(auto wide, arrow::compute::Cast(column, arrow::float64()));
      HashFloats<arrow::DoubleArray>(*wide.make_array(), out);
      return arrow::Status::OK();
    }
    case arrow::Type::FLOAT:
      HashFloats<arrow::FloatArray>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::DOUBLE:
      HashFloats<arrow::DoubleArray>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::STRING:
      HashBinary<arrow::StringArray>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::LARGE_STRING:
      HashBinary<arrow::LargeStringArray>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::BINARY:
      HashBinary<arrow::BinaryArray>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::LARGE_BINARY:
      HashBinary<arrow::LargeBinaryArray>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::STRING_VIEW:
      HashBinary<arrow::StringViewArray>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::BINARY_VIEW:
      HashBinary<arrow::BinaryViewArray>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256:
      HashBinary<arrow::FixedSizeBinaryArray>(*column, out);
      return arrow::Status::OK();
    case arrow::Type::DICTIONARY: {
      // By value, so a dictionary column hashes like its plain values.
      const auto& dict_type = static_cast<const arrow::DictionaryType&>(type);
      ARROW_ASSIGN_OR_RAISE(auto plain, arrow::compute::Cast(column, dict_type.value_type()));
      return HashColumn(plain.make_array(), name, out);
    }
    default:
      return arrow::Status::TypeError("cannot hash column '", name, "' of type ", type.ToString());
  }
}

}  // namespace

bool IsHashableType(const arrow::DataType& type) {
  if (type.id() == arrow::Type::EXTENSION) return false;
  if (type.id() == arrow::Type::DICTIONARY) {
    return IsHashableType(*static_cast<const arrow::DictionaryType&>(type).value_type());
  }
  if (arrow::is_integer(type.id()) || arrow::is_floating(type.id()) || arrow::is_decimal(type.id()) ||
      arrow::is_base_binary_like(type.id()) || arrow::is_binary_view_like(type.id()) ||
      arrow::is_temporal(type.id())) {
    return type.id() != arrow::Type::INTERVAL_MONTHS && type.id() != arrow::Type::INTERVAL_DAY_TIME &&
           type.id() != arrow::Type::INTERVAL_MONTH_DAY_NANO;
  }
  return type.id() == arrow::Type::BOOL || type.id() == arrow::Type::NA ||
         type.id() == arrow::Type::FIXED_SIZE_BINARY;
}

arrow::Result<std::vector<uint64_t>> RowHashes(const arrow::RecordBatch& batch,
                                               const std::vector<std::string>& keys) {
  std::vector<uint64_t> hashes(static_cast<size_t>(batch.num_rows()), 0);
  for (const auto& key : keys) {
    auto column = batch.GetColumnByName(key);
    if (!column) return arrow::Status::KeyError("no column '", key, "' to hash");
    ARROW_RETURN_NOT_OK(CheckKeyColumn("hash partitioning", "hash", key, *column->type(), KeyUse::kHash));
    // Extension columns (UUIDs) hash as their storage values.
    ARROW_RETURN_NOT_OK(HashColumn(StorageView(column), key, &hashes));
  }
  return hashes;
}

}  // namespace ketch
