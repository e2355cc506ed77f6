#include "ketch/expr/uuid_cast.h"

#include <arrow/extension_type.h>

#include <string>
#include <string_view>

namespace ketch {
namespace {

bool IsText(const arrow::DataType& type) { return arrow::is_string(type.id()); }

bool IsBytes(const arrow::DataType& type) {
  return type.id() == arrow::Type::BINARY || type.id() == arrow::Type::LARGE_BINARY ||
         (type.id() == arrow::Type::FIXED_SIZE_BINARY &&
          static_cast<const arrow::FixedSizeBinaryType&>(type).byte_width() == 16);
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// 32 hex digits, hyphenated 8-4-4-4-12 or not, into 16 bytes; false for anything else.
bool ParseUuid(std::string_view text, uint8_t out[16]) {
  const bool hyphenated = text.size() == 36;
  if (!hyphenated && text.size() != 32) return false;
  int byte = 0;
  for (size_t i = 0; i < text.size();) {
    if (hyphenated && (i == 8 || i == 13 || i == 18 || i == 23)) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    const int high = HexDigit(text[i]), low = HexDigit(text[i + 1]);
    if (high < 0 || low < 0) return false;
    out[byte++] = static_cast<uint8_t>(high * 16 + low);
    i += 2;
  }
  return byte == 16;
}

std::string FormatUuid(const uint8_t* bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 15]);
  }
  return out;
}

arrow::Result<std::shared_ptr<arrow::Array>> ToText(const arrow::FixedSizeBinaryArray& storage,
                                                    const std::shared_ptr<arrow::DataType>& to) {
  arrow::LargeStringBuilder builder;
  ARROW_RETURN_NOT_OK(builder.Reserve(storage.length()));
  ARROW_RETURN_NOT_OK(builder.ReserveData(storage.length() * 36));
  for (int64_t i = 0; i < storage.length(); ++i) {
    if (storage.IsNull(i)) {
      builder.UnsafeAppendNull();
    } else {
      builder.UnsafeAppend(FormatUuid(storage.GetValue(i)));
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto text, builder.Finish());
  if (to->id() == arrow::Type::LARGE_STRING) return text;
  ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*text, to));
  return cast;
}

template <typename ArrayType>
arrow::Result<std::shared_ptr<arrow::Array>> FromText(const ArrayType& text) {
  arrow::FixedSizeBinaryBuilder builder(arrow::fixed_size_binary(16));
  ARROW_RETURN_NOT_OK(builder.Reserve(text.length()));
  uint8_t bytes[16];
  for (int64_t i = 0; i < text.length(); ++i) {
    if (text.IsNull(i)) {
      builder.UnsafeAppendNull();
      continue;
    }
    const auto value = text.GetView(i);
    if (!ParseUuid(value, bytes)) {
      return arrow::Status::Invalid("'", std::string(value.substr(0, 64)), "' (row ", i,
                                    " of the morsel) is not a UUID: expected 32 hex digits, "
                                    "optionally hyphenated 8-4-4-4-12");
    }
    builder.UnsafeAppend(bytes);
  }
  return builder.Finish();
}

template <typename ArrayType>
arrow::Result<std::shared_ptr<arrow::Array>> FromBytes(const ArrayType& data) {
  arrow::FixedSizeBinaryBuilder builder(arrow::fixed_size_binary(16));
  ARROW_RETURN_NOT_OK(builder.Reserve(data.length()));
  for (int64_t i = 0; i < data.length(); ++i) {
    if (data.IsNull(i)) {
      builder.UnsafeAppendNull();
      continue;
    }
    const auto value = data.GetView(i);
    if (value.size() != 16) {
      return arrow::Status::Invalid("a UUID is 16 bytes; row ", i, " of the morsel holds ", value.size());
    }
    builder.UnsafeAppend(reinterpret_cast<const uint8_t*>(value.data()));
  }
  return builder.Finish();
}

arrow::Result<std::shared_ptr<arrow::Array>> CastArray(const std::shared_ptr<arrow::Array>& input,
                                                       const std::shared_ptr<arrow::DataType>& to) {
  if (IsUuidType(*input->type())) {
    const auto storage = std::static_pointer_cast<arrow::ExtensionArray>(input)->storage();
    const auto& fixed = static_cast<const arrow::FixedSizeBinaryArray&>(*storage);
    if (IsText(*to)) return ToText(fixed, to);
    if (to->id() == arrow::Type::FIXED_SIZE_BINARY) return storage;
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*storage, to));
    return cast;
  }
  std::shared_ptr<arrow::Array> storage;
  switch (input->type_id()) {
    case arrow::Type::STRING: {
      ARROW_ASSIGN_OR_RAISE(storage, FromText(static_cast<const arrow::StringArray&>(*input)));
      break;
    }
    case arrow::Type::LARGE_STRING: {
      ARROW_ASSIGN_OR_RAISE(storage, FromText(static_cast<const arrow::LargeStringArray&>(*input)));
      break;
    }
    case arrow::Type::BINARY: {
      ARROW_ASSIGN_OR_RAISE(storage, FromBytes(static_cast<const arrow::BinaryArray&>(*input)));
      break;
    }
    case arrow::Type::LARGE_BINARY: {
      ARROW_ASSIGN_OR_RAISE(storage, FromBytes(static_cast<const arrow::LargeBinaryArray&>(*input)));
      break;
    }
    default:
      storage = input;  // fixed_size_binary(16)
  }
  return arrow::ExtensionType::WrapArray(to, storage);
}

}  // namespace

bool IsUuidType(const arrow::DataType& type) {
  return type.id() == arrow::Type::EXTENSION &&
         static_cast<const arrow::ExtensionType&>(type).extension_name() == "arrow.uuid";
}

bool IsUuidCast(const arrow::DataType& from, const arrow::DataType& to) {
  if (IsUuidType(from)) return IsText(to) || IsBytes(to);
  if (IsUuidType(to)) return IsText(from) || IsBytes(from);
  return false;
}

arrow::Result<arrow::Datum> CastUuid(const arrow::Datum& input, const std::shared_ptr<arrow::DataType>& to,
                                     int64_t num_rows) {
  if (input.is_scalar()) {
    ARROW_ASSIGN_OR_RAISE(auto one, arrow::MakeArrayFromScalar(*input.scalar(), 1));
    ARROW_ASSIGN_OR_RAISE(auto cast, CastArray(one, to));
    ARROW_ASSIGN_OR_RAISE(auto scalar, cast->GetScalar(0));
    return arrow::Datum(std::move(scalar));
  }
  ARROW_ASSIGN_OR_RAISE(auto cast, CastArray(input.make_array(), to));
  return arrow::Datum(std::move(cast));
}

}  // namespace ketch
