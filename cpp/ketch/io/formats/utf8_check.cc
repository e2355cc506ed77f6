#include "ketch/io/formats/utf8_check.h"

#include <arrow/util/utf8.h>

#include <vector>

namespace ketch::io {
namespace {

bool HasStrings(const arrow::DataType& type) {
  if (type.id() == arrow::Type::STRING || type.id() == arrow::Type::LARGE_STRING ||
      type.id() == arrow::Type::STRING_VIEW) {
    return true;
  }
  if (type.id() == arrow::Type::DICTIONARY) {
    return HasStrings(*static_cast<const arrow::DictionaryType&>(type).value_type());
  }
  if (type.id() == arrow::Type::EXTENSION) {
    return HasStrings(*static_cast<const arrow::ExtensionType&>(type).storage_type());
  }
  for (const auto& field : type.fields()) {
    if (HasStrings(*field->type())) return true;
  }
  return false;
}

template <typename ArrayType>
bool BinaryValid(const ArrayType& array) {
  if (array.length() == 0) return true;
  // Every value's bytes lie between the first and the last offset: one pass over them all.
  const int64_t begin = array.value_offset(0);
  const int64_t end = array.value_offset(array.length());
  const uint8_t* data = array.raw_data();
  if (arrow::util::ValidateUTF8(data + begin, end - begin)) {
    // The bytes are valid together; each value is valid alone unless a value boundary cuts a
    // multi-byte sequence ("\xC3" then "\xA9"), which puts a continuation byte (10xxxxxx) at
    // the start or just past the end of a value.
    auto continuation = [&](int64_t at) { return at < end && (data[at] & 0xC0) == 0x80; };
    for (int64_t i = 0; i < array.length(); ++i) {
      if (array.IsNull(i)) continue;
      const int64_t start = array.value_offset(i), stop = array.value_offset(i + 1);
      if (stop > start && (continuation(start) || continuation(stop))) return false;
    }
    return true;
  }
  // Some value is invalid: check each.
  for (int64_t i = 0; i < array.length(); ++i) {
    if (array.IsNull(i)) continue;
    const auto view = array.GetView(i);
    if (!arrow::util::ValidateUTF8(reinterpret_cast<const uint8_t*>(view.data()), view.size())) return false;
  }
  return true;
}

/// The first row (index into `array`) holding an invalid string, or -1.
int64_t FirstInvalidRow(const arrow::Array& array);

/// Whether every string in `array` (any nesting) is valid UTF-8.
bool AllValid(const arrow::Array& array) {
  const auto& type = *array.type();
  switch (type.id()) {
    case arrow::Type::STRING:
      return BinaryValid(static_cast<const arrow::StringArray&>(array));
    case arrow::Type::LARGE_STRING:
      return BinaryValid(static_cast<const arrow::LargeStringArray&>(array));
    case arrow::Type::STRING_VIEW: {
      const auto& views = static_cast<const arrow::StringViewArray&>(array);
      for (int64_t i = 0; i < views.length(); ++i) {
        if (views.IsNull(i)) continue;
        const auto view = views.GetView(i);
        if (!arrow::util::ValidateUTF8(reinterpret_cast<const uint8_t*>(view.data()), view.size()))
          return false;
      }
      return true;
    }
    case arrow::Type::DICTIONARY:
      return AllValid(*static_cast<const arrow::DictionaryArray&>(array).dictionary());
    case arrow::Type::EXTENSION:
      return AllValid(*static_cast<const arrow::ExtensionArray&>(array).storage());
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST:
    case arrow::Type::MAP: {
      if (!HasStrings(type)) return true;
      // The values the slice covers (a sliced list's child holds more).
      return FirstInvalidRow(array) < 0;
    }
    case arrow::Type::STRUCT: {
      const auto& structs = static_cast<const arrow::StructArray&>(array);
      for (int i = 0; i < structs.num_fields(); ++i) {
        auto field = structs.GetFlattenedField(i);
        if (!field.ok() || !AllValid(**field)) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

int64_t FirstInvalidRow(const arrow::Array& array) {
  for (int64_t i = 0; i < array.length(); ++i) {
    if (array.IsNull(i)) continue;
    const auto& type = *array.type();
    std::shared_ptr<arrow::Array> value;
    switch (type.id()) {
      case arrow::Type::LIST:
        value = static_cast<const arrow::ListArray&>(array).value_slice(i);
        break;
      case arrow::Type::LARGE_LIST:
        value = static_cast<const arrow::LargeListArray&>(array).value_slice(i);
        break;
      case arrow::Type::FIXED_SIZE_LIST:
        value = static_cast<const arrow::FixedSizeListArray&>(array).value_slice(i);
        break;
      case arrow::Type::MAP:
        value = static_cast<const arrow::MapArray&>(array).value_slice(i);
        break;
      default:
        value = array.Slice(i, 1);
        break;
    }
    if (!AllValid(*value)) return i;
  }
  return -1;
}

}  // namespace

std::optional<InvalidUtf8> FindInvalidUtf8(const arrow::RecordBatch& batch) {
  for (int c = 0; c < batch.num_columns(); ++c) {
    const auto& column = *batch.column(c);
    if (!HasStrings(*column.type()) || AllValid(column)) continue;
    if (column.type_id() == arrow::Type::DICTIONARY) {
      // The first row whose index points at an invalid dictionary value.
      const auto& dict_array = static_cast<const arrow::DictionaryArray&>(column);
      const auto& dictionary = *dict_array.dictionary();
      std::vector<int8_t> invalid(static_cast<size_t>(dictionary.length()), -1);
      for (int64_t i = 0; i < column.length(); ++i) {
        if (column.IsNull(i)) continue;
        const int64_t index = dict_array.GetValueIndex(i);
        if (index < 0 || index >= dictionary.length()) continue;
        auto& known = invalid[static_cast<size_t>(index)];
        if (known < 0) known = AllValid(*dictionary.Slice(index, 1)) ? 0 : 1;
        if (known == 1) return InvalidUtf8{c, i};
      }
      continue;  // only unused dictionary values are invalid
    }
    // Narrow down to the row, value by value.
    for (int64_t i = 0; i < column.length(); ++i) {
      if (!column.IsNull(i) && !AllValid(*column.Slice(i, 1))) return InvalidUtf8{c, i};
    }
    return InvalidUtf8{c, 0};
  }
  return std::nullopt;
}

}  // namespace ketch::io
