#include "ketch/io/formats/ndjson_writer.h"

#include <arrow/util/decimal.h>
#include <arrow/util/float16.h>
#include <arrow/util/formatting.h>

#include <charconv>
#include <cmath>

namespace ketch::io {

namespace {

// Why a type cannot be written as JSON ("" when it can).
std::string Unsupported(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::BINARY_VIEW:
    case arrow::Type::FIXED_SIZE_BINARY:
      return type.ToString();
    case arrow::Type::EXTENSION:
      return Unsupported(*static_cast<const arrow::ExtensionType&>(type).storage_type()).empty()
                 ? std::string()
                 : type.ToString();
    case arrow::Type::DICTIONARY:
      return Unsupported(*static_cast<const arrow::DictionaryType&>(type).value_type());
    case arrow::Type::DENSE_UNION:
    case arrow::Type::SPARSE_UNION:
    case arrow::Type::INTERVAL_MONTHS:
    case arrow::Type::INTERVAL_DAY_TIME:
    case arrow::Type::INTERVAL_MONTH_DAY_NANO:
    case arrow::Type::RUN_END_ENCODED:
      return type.ToString();
    default:
      break;
  }
  for (const auto& child : type.fields()) {
    if (!Unsupported(*child->type()).empty()) return type.ToString();
  }
  return {};
}

template <typename T>
void AppendNumber(T value, std::string* out) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, end);
}

template <typename T>
void AppendFloat(T value, std::string* out) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  const size_t start = out->size();
  AppendNumber(value, out);  // shortest round-trip form, e.g. "0.1", "1e+300", "3"
  // "3" would read back as an integer: keep it a float.
  if (out->find_first_of(".eE", start) == std::string::npos) out->append(".0");
}

template <typename Formatter, typename Value>
void AppendFormatted(Formatter& formatter, Value value, std::string* out, bool iso_t) {
  out->push_back('"');
  const size_t start = out->size();
  formatter(value, [&](std::string_view text) { out->append(text); });
  if (iso_t && out->size() > start + 10 && (*out)[start + 10] == ' ') (*out)[start + 10] = 'T';
  out->push_back('"');
}

arrow::Status AppendValue(const arrow::Array& array, int64_t i, std::string* out);

arrow::Status AppendList(const arrow::Array& values, int64_t begin, int64_t end, std::string* out) {
  out->push_back('[');
  for (int64_t j = begin; j < end; ++j) {
    if (j > begin) out->push_back(',');
    ARROW_RETURN_NOT_OK(AppendValue(values, j, out));
  }
  out->push_back(']');
  return arrow::Status::OK();
}

arrow::Status AppendValue(const arrow::Array& array, int64_t i, std::string* out) {
  if (array.IsNull(i)) {
    out->append("null");
    return arrow::Status::OK();
  }
  switch (array.type_id()) {
    case arrow::Type::NA:
      out->append("null");
      return arrow::Status::OK();
    case arrow::Type::BOOL:
      out->append(static_cast<const arrow::BooleanArray&>(array).Value(i) ? "true" : "false");
      return arrow::Status::OK();
#define KETCH_INT_CASE(ID, ARRAY)                                        \
  case arrow::Type::ID:                                                  \
    AppendNumber(static_cast<const arrow::ARRAY&>(array).Value(i), out); \
    return arrow::Status::OK();
      KETCH_INT_CASE(INT8, Int8Array)
      KETCH_INT_CASE(INT16, Int16Array)
      KETCH_INT_CASE(INT32, Int32Array)
      KETCH_INT_CASE(INT64, Int64Array)
      KETCH_INT_CASE(UINT8, UInt8Array)
      KETCH_INT_CASE(UINT16, UInt16Array)
      KETCH_INT_CASE(UINT32, UInt32Array)
      KETCH_INT_CASE(UINT64, UInt64Array)
      KETCH_INT_CASE(DURATION, DurationArray)
#undef KETCH_INT_CASE
    case arrow::Type::HALF_FLOAT:
      AppendFloat(
          arrow::util::Float16::FromBits(static_cast<const arrow::HalfFloatArray&>(array).Value(i)).ToFloat(),
          out);
      return arrow::Status::OK();
    case arrow::Type::FLOAT:
      AppendFloat(static_cast<const arrow::FloatArray&>(array).Value(i), out);
      return arrow::Status::OK();
    case arrow::Type::DOUBLE:
      AppendFloat(static_cast<const arrow::DoubleArray&>(array).Value(i), out);
      return arrow::Status::OK();
    case arrow::Type::DECIMAL128:
      out->append(static_cast<const arrow::Decimal128Array&>(array).FormatValue(i));
      return arrow::Status::OK();
    case arrow::Type::DECIMAL256:
      out->append(static_cast<const arrow::Decimal256Array&>(array).FormatValue(i));
      return arrow::Status::OK();
    case arrow::Type::STRING:
      AppendJsonString(static_cast<const arrow::StringArray&>(array).GetView(i), out);
      return arrow::Status::OK();
    case arrow::Type::LARGE_STRING:
      AppendJsonString(static_cast<const arrow::LargeStringArray&>(array).GetView(i), out);
      return arrow::Status::OK();
    case arrow::Type::STRING_VIEW:
      AppendJsonString(static_cast<const arrow::StringViewArray&>(array).GetView(i), out);
      return arrow::Status::OK();
    case arrow::Type::DATE32: {
      arrow::internal::StringFormatter<arrow::Date32Type> f(array.type().get());
      AppendFormatted(f, static_cast<const arrow::Date32Array&>(array).Value(i), out, false);
      return arrow::Status::OK();
    }
    case arrow::Type::DATE64: {
      arrow::internal::StringFormatter<arrow::Date64Type> f(array.type().get());
      AppendFormatted(f, static_cast<const arrow::Date64Array&>(array).Value(i), out, false);
      return arrow::Status::OK();
    }
    case arrow::Type::TIMESTAMP: {
      arrow::internal::StringFormatter<arrow::TimestampType> f(array.type().get());
      AppendFormatted(f, static_cast<const arrow::TimestampArray&>(array).Value(i), out, true);
      return arrow::Status::OK();
    }
    case arrow::Type::TIME32: {
      arrow::internal::StringFormatter<arrow::Time32Type> f(array.type().get());
      AppendFormatted(f, static_cast<const arrow::Time32Array&>(array).Value(i), out, false);
      return arrow::Status::OK();
    }
    case arrow::Type::TIME64: {
      arrow::internal::StringFormatter<arrow::Time64Type> f(array.type().get());
      AppendFormatted(f, static_cast<const arrow::Time64Array&>(array).Value(i), out, false);
      return arrow::Status::OK();
    }
    case arrow::Type::LIST:
    case arrow::Type::MAP: {  // a map is a list of {"key", "value"} structs
      const auto& list = static_cast<const arrow::ListArray&>(array);
      return AppendList(*list.values(), list.value_offset(i), list.value_offset(i + 1), out);
    }
    case arrow::Type::LARGE_LIST: {
      const auto& list = static_cast<const arrow::LargeListArray&>(array);
      return AppendList(*list.values(), list.value_offset(i), list.value_offset(i + 1), out);
    }
    case arrow::Type::LIST_VIEW: {
      const auto& list = static_cast<const arrow::ListViewArray&>(array);
      return AppendList(*list.values(), list.value_offset(i), list.value_offset(i) + list.value_length(i),
                        out);
    }
    case arrow::Type::LARGE_LIST_VIEW: {
      const auto& list = static_cast<const arrow::LargeListViewArray&>(array);
      return AppendList(*list.values(), list.value_offset(i), list.value_offset(i) + list.value_length(i),
                        out);
    }
    case arrow::Type::FIXED_SIZE_LIST: {
      const auto& list = static_cast<const arrow::FixedSizeListArray&>(array);
      return AppendList(*list.values(), list.value_offset(i), list.value_offset(i) + list.value_length(),
                        out);
    }
    case arrow::Type::STRUCT: {
      const auto& st = static_cast<const arrow::StructArray&>(array);
      const auto& type = static_cast<const arrow::StructType&>(*array.type());
      out->push_back('{');
      for (int c = 0; c < st.num_fields(); ++c) {
        if (c > 0) out->push_back(',');
        AppendJsonString(type.field(c)->name(), out);
        out->push_back(':');
        // field(c) applies the struct's offset (GetFieldByName would too); a slice stays a slice.
        ARROW_RETURN_NOT_OK(AppendValue(*st.field(c), i, out));
      }
      out->push_back('}');
      return arrow::Status::OK();
    }
    case arrow::Type::EXTENSION:
      return AppendValue(*static_cast<const arrow::ExtensionArray&>(array).storage(), i, out);
    case arrow::Type::DICTIONARY: {
      const auto& dict = static_cast<const arrow::DictionaryArray&>(array);
      return AppendValue(*dict.dictionary(), dict.GetValueIndex(i), out);
    }
    default:
      return arrow::Status::NotImplemented("write_json: cannot encode type ", array.type()->ToString());
  }
}

}  // namespace

void AppendJsonString(std::string_view text, std::string* out) {
  static const char* kHex = "0123456789abcdef";
  out->push_back('"');
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
        } else {
          out->push_back(ch);  // UTF-8 bytes as they are (valid JSON text)
        }
    }
  }
  out->push_back('"');
}

arrow::Status CheckNdjsonSchema(const arrow::Schema& schema, std::string_view writer) {
  for (const auto& field : schema.fields()) {
    const auto why = Unsupported(*field->type());
    if (!why.empty()) {
      return arrow::Status::TypeError(writer, ": column '", field->name(), "' has type ", why,
                                      ", which JSON cannot hold (binary data has no JSON form); "
                                      "exclude it, or write_parquet keeps it");
    }
  }
  return arrow::Status::OK();
}

arrow::Status AppendNdjson(const arrow::RecordBatch& batch, std::string* out) {
  const auto& schema = *batch.schema();
  std::vector<std::string> keys;
  for (const auto& field : schema.fields()) {
    std::string key;
    AppendJsonString(field->name(), &key);
    key.push_back(':');
    keys.push_back(std::move(key));
  }
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    out->push_back('{');
    for (int c = 0; c < batch.num_columns(); ++c) {
      if (c > 0) out->push_back(',');
      out->append(keys[c]);
      ARROW_RETURN_NOT_OK(AppendValue(*batch.column(c), row, out));
    }
    out->append("}\n");
  }
  return arrow::Status::OK();
}

}  // namespace ketch::io
