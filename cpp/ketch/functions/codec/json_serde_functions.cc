// serialize / deserialize / try_deserialize with format "json".
// deserialize: each row is checked to be exactly one JSON text (libjq's parser), then all rows go
// through Arrow's JSON reader (arrow::json::ParseOne) as {"v": <text>} lines with `dtype` as the
// explicit schema. A batch that fails is halved until the bad rows are found.
// serialize: Arrow C++ has no JSON writer for arrays, so values are written here (a walk over the
// Arrow types; numbers by std::to_chars, shortest round-trip form).

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/json/api.h>
#include <arrow/util/string.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include <jv.h>
}

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/codec/codec_functions.h"

namespace ketch::codec {
namespace {

arrow::Status CheckFormat(const FunctionOptions& options, const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto format, StringOption(options, "format", "json", function));
  if (format != "json") {
    return arrow::Status::Invalid(function, ": unsupported format '", format, "'; supported: json");
  }
  return arrow::Status::OK();
}

// --- deserialize --------------------------------------------------------------------------------

/// The JSON lines for rows [begin, end) of `lines` (each already one line).
std::shared_ptr<arrow::Buffer> JoinLines(const std::vector<std::string>& lines, size_t begin, size_t end) {
  std::string text;
  for (size_t i = begin; i < end; ++i) text += lines[i];
  return arrow::Buffer::FromString(std::move(text));
}

/// The type to ask Arrow's JSON reader for: `dtype` with large strings, binaries and lists made
/// regular (the reader builds those; the result is cast back to `dtype`).
std::shared_ptr<arrow::DataType> ReaderType(const std::shared_ptr<arrow::DataType>& dtype) {
  switch (dtype->id()) {
    case arrow::Type::LARGE_STRING:
      return arrow::utf8();
    case arrow::Type::LARGE_BINARY:
      return arrow::binary();
    case arrow::Type::LARGE_LIST:
    case arrow::Type::LIST: {
      const auto& value_field = dtype->field(0);
      return arrow::list(value_field->WithType(ReaderType(value_field->type())));
    }
    case arrow::Type::STRUCT: {
      arrow::FieldVector fields;
      for (const auto& field : dtype->fields()) fields.push_back(field->WithType(ReaderType(field->type())));
      return arrow::struct_(fields);
    }
    default:
      return dtype;
  }
}

arrow::Result<std::shared_ptr<arrow::Array>> ParseLines(const std::vector<std::string>& lines, size_t begin,
                                                        size_t end,
                                                        const std::shared_ptr<arrow::DataType>& dtype) {
  arrow::json::ParseOptions options = arrow::json::ParseOptions::Defaults();
  options.explicit_schema = arrow::schema({arrow::field("v", ReaderType(dtype))});
  options.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::Ignore;
  ARROW_ASSIGN_OR_RAISE(auto batch, arrow::json::ParseOne(options, JoinLines(lines, begin, end)));
  if (batch->num_rows() != static_cast<int64_t>(end - begin)) {
    return arrow::Status::Invalid("expected ", end - begin, " values, the JSON reader found ",
                                  batch->num_rows());
  }
  auto column = batch->column(0);
  if (!column->type()->Equals(*dtype)) {
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*column, dtype));
    column = std::move(cast);
  }
  return column;
}

/// One `{"v": ...}` line for a row's JSON text, or an error when the text is not exactly one
/// JSON value. Numbers and booleans for a string dtype become their text (as Daft).
arrow::Result<std::string> LineFor(std::string_view text, bool string_target) {
  if (text.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return arrow::Status::Invalid("JSON text of ", text.size(), " bytes is too large");
  }
  jv parsed = jv_parse_sized(text.data(), static_cast<int>(text.size()));
  if (!jv_is_valid(parsed)) {
    jv message = jv_invalid_get_msg(parsed);
    std::string reason = jv_get_kind(message) == JV_KIND_STRING ? jv_string_value(message) : "not JSON";
    jv_free(message);
    // libjq ends the message with " (while parsing '<the whole text>')": rows stay out of errors.
    auto at = reason.find(" (while parsing '");
    if (at != std::string::npos) reason.resize(at);
    return arrow::Status::Invalid("invalid JSON: ", reason);
  }
  const jv_kind kind = jv_get_kind(parsed);
  jv_free(parsed);
  std::string line = "{\"v\":";
  const bool quote =
      string_target && (kind == JV_KIND_NUMBER || kind == JV_KIND_TRUE || kind == JV_KIND_FALSE);
  if (quote) line += '"';
  // Valid JSON has no raw newline inside a string, so newlines are whitespace: one line per row.
  for (char c : text) line += (c == '\n' || c == '\r') ? ' ' : c;
  if (quote) line += '"';
  line += "}\n";
  return line;
}

class DeserializeFunction : public ScalarFunction {
 public:
  DeserializeFunction(std::string name, bool null_on_error)
      : name_(std::move(name)), null_on_error_(null_on_error) {}

  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    if (arg_types.size() != 1) return arrow::Status::Invalid(name_, " takes one argument");
    if (arg_types[0]->id() != arrow::Type::NA && !arrow::is_string(arg_types[0]->id())) {
      return arrow::Status::TypeError(name_, " expects a string column of JSON texts, got ",
                                      arg_exprs[0]->ToString(), " of type ", arg_types[0]->ToString());
    }
    ARROW_RETURN_NOT_OK(CheckFormat(options, name_));
    ARROW_ASSIGN_OR_RAISE(auto dtype, Dtype(options));
    // A type Arrow's JSON reader cannot produce fails here, not on the first morsel.
    auto probe = ParseLines({"{\"v\":null}\n"}, 0, 1, dtype);
    if (!probe.ok()) {
      return arrow::Status::NotImplemented(name_, ": cannot read JSON into ", dtype->ToString(), ": ",
                                           probe.status().message());
    }
    return dtype;
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto dtype, Dtype(options));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (input->type_id() == arrow::Type::NA || input->length() == 0) {
      return arrow::MakeArrayOfNull(dtype, input->length());
    }
    ARROW_ASSIGN_OR_RAISE(auto strings, arrow::compute::Cast(*input, arrow::large_utf8()));
    const auto& texts = static_cast<const arrow::LargeStringArray&>(*strings);
    const bool string_target = arrow::is_string(dtype->id());
    std::vector<std::string> lines(static_cast<size_t>(texts.length()));
    for (int64_t i = 0; i < texts.length(); ++i) {
      auto& line = lines[static_cast<size_t>(i)];
      if (texts.IsNull(i)) {
        line = "{\"v\":null}\n";
        continue;
      }
      auto made = LineFor(texts.GetView(i), string_target);
      if (made.ok()) {
        line = std::move(*made);
        continue;
      }
      if (!null_on_error_) return RowError(made.status(), i, ctx);
      line = "{\"v\":null}\n";
    }
    std::vector<std::shared_ptr<arrow::Array>> pieces;
    ARROW_RETURN_NOT_OK(ParseRange(lines, 0, lines.size(), dtype, ctx, &pieces));
    if (pieces.size() == 1) return pieces[0];
    return arrow::Concatenate(pieces);
  }

 private:
  arrow::Result<std::shared_ptr<arrow::DataType>> Dtype(const FunctionOptions& options) const {
    auto it = options.find("dtype");
    if (it == options.end() || !it->second) return arrow::Status::Invalid(name_, ": missing option 'dtype'");
    return it->second->type;
  }

  arrow::Status RowError(const arrow::Status& cause, int64_t row, const EvalContext& ctx) const {
    return cause.WithMessage(name_, " failed at source row ", ctx.SourceRow(row),
                             " (format 'json'): ", cause.message());
  }

  /// Parses rows [begin, end); on failure halves the range until single bad rows remain, which
  /// fail the call (deserialize) or become null (try_deserialize).
  arrow::Status ParseRange(const std::vector<std::string>& lines, size_t begin, size_t end,
                           const std::shared_ptr<arrow::DataType>& dtype, const EvalContext& ctx,
                           std::vector<std::shared_ptr<arrow::Array>>* pieces) const {
    auto parsed = ParseLines(lines, begin, end, dtype);
    if (parsed.ok()) {
      pieces->push_back(std::move(*parsed));
      return arrow::Status::OK();
    }
    if (end - begin == 1) {
      if (!null_on_error_) return RowError(parsed.status(), static_cast<int64_t>(begin), ctx);
      ARROW_ASSIGN_OR_RAISE(auto null, arrow::MakeArrayOfNull(dtype, 1));
      pieces->push_back(std::move(null));
      return arrow::Status::OK();
    }
    const size_t middle = begin + (end - begin) / 2;
    ARROW_RETURN_NOT_OK(ParseRange(lines, begin, middle, dtype, ctx, pieces));
    return ParseRange(lines, middle, end, dtype, ctx, pieces);
  }

  std::string name_;
  bool null_on_error_;
};

// --- serialize ----------------------------------------------------------------------------------

void WriteJsonString(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (c < 0x20) {
          *out += "\\u00";
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xf]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

template <typename T>
void WriteNumber(T value, std::string* out) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) {
      *out += "null";  // JSON has no NaN or infinity
      return;
    }
  }
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string_view text(buffer, static_cast<size_t>(end - buffer));
  *out += text;
  if constexpr (std::is_floating_point_v<T>) {
    // A float stays a float in the text (3.0, not 3), as Python's json and arrow-rs write it.
    if (text.find_first_of(".eE") == std::string_view::npos) *out += ".0";
  }
}

bool IsTemporal(arrow::Type::type id) {
  switch (id) {
    case arrow::Type::DATE32:
    case arrow::Type::DATE64:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::TIME32:
    case arrow::Type::TIME64:
    case arrow::Type::DURATION:
    case arrow::Type::INTERVAL_MONTHS:
    case arrow::Type::INTERVAL_DAY_TIME:
    case arrow::Type::INTERVAL_MONTH_DAY_NANO:
      return true;
    default:
      return false;
  }
}

/// Whether `type` (and everything inside it) can be written.
arrow::Status CheckSerializable(const arrow::DataType& type, const std::string& function) {
  const auto id = type.id();
  if (id == arrow::Type::EXTENSION) {
    return CheckSerializable(*static_cast<const arrow::ExtensionType&>(type).storage_type(), function);
  }
  if (id == arrow::Type::DICTIONARY) {
    return CheckSerializable(*static_cast<const arrow::DictionaryType&>(type).value_type(), function);
  }
  if (id == arrow::Type::SPARSE_UNION || id == arrow::Type::DENSE_UNION ||
      id == arrow::Type::RUN_END_ENCODED) {
    return arrow::Status::NotImplemented(function, ": cannot write ", type.ToString(), " as JSON");
  }
  for (const auto& child : type.fields()) ARROW_RETURN_NOT_OK(CheckSerializable(*child->type(), function));
  return arrow::Status::OK();
}

/// Writes value `i` of `array` (validity already checked by the caller for the top level).
arrow::Status WriteValue(const arrow::Array& array, int64_t i, std::string* out);

template <typename ListArrayType>
arrow::Status WriteList(const ListArrayType& lists, int64_t i, std::string* out) {
  out->push_back('[');
  const auto& values = *lists.values();
  const int64_t begin = lists.value_offset(i);
  const int64_t end = begin + lists.value_length(i);
  for (int64_t k = begin; k < end; ++k) {
    if (k > begin) out->push_back(',');
    ARROW_RETURN_NOT_OK(WriteValue(values, k, out));
  }
  out->push_back(']');
  return arrow::Status::OK();
}

arrow::Status WriteValue(const arrow::Array& array, int64_t i, std::string* out) {
  if (array.IsNull(i)) {
    *out += "null";
    return arrow::Status::OK();
  }
  const auto id = array.type_id();
  switch (id) {
    case arrow::Type::NA:
      *out += "null";
      return arrow::Status::OK();
    case arrow::Type::BOOL:
      *out += static_cast<const arrow::BooleanArray&>(array).Value(i) ? "true" : "false";
      return arrow::Status::OK();
#define KETCH_WRITE_NUMBER(ENUM, ARRAY)                                 \
  case arrow::Type::ENUM:                                               \
    WriteNumber(static_cast<const arrow::ARRAY&>(array).Value(i), out); \
    return arrow::Status::OK();
      KETCH_WRITE_NUMBER(INT8, Int8Array)
      KETCH_WRITE_NUMBER(INT16, Int16Array)
      KETCH_WRITE_NUMBER(INT32, Int32Array)
      KETCH_WRITE_NUMBER(INT64, Int64Array)
      KETCH_WRITE_NUMBER(UINT8, UInt8Array)
      KETCH_WRITE_NUMBER(UINT16, UInt16Array)
      KETCH_WRITE_NUMBER(UINT32, UInt32Array)
      KETCH_WRITE_NUMBER(UINT64, UInt64Array)
      KETCH_WRITE_NUMBER(FLOAT, FloatArray)
      KETCH_WRITE_NUMBER(DOUBLE, DoubleArray)
#undef KETCH_WRITE_NUMBER
    case arrow::Type::HALF_FLOAT:
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256: {
      // Decimals keep their exact digits; half floats go through their text too.
      ARROW_ASSIGN_OR_RAISE(auto scalar, array.GetScalar(i));
      *out += scalar->ToString();
      return arrow::Status::OK();
    }
    case arrow::Type::STRING:
      WriteJsonString(static_cast<const arrow::StringArray&>(array).GetView(i), out);
      return arrow::Status::OK();
    case arrow::Type::LARGE_STRING:
      WriteJsonString(static_cast<const arrow::LargeStringArray&>(array).GetView(i), out);
      return arrow::Status::OK();
    case arrow::Type::STRING_VIEW: {
      ARROW_ASSIGN_OR_RAISE(auto scalar, array.GetScalar(i));
      WriteJsonString(static_cast<const arrow::BaseBinaryScalar&>(*scalar).view(), out);
      return arrow::Status::OK();
    }
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::BINARY_VIEW:
    case arrow::Type::FIXED_SIZE_BINARY: {
      ARROW_ASSIGN_OR_RAISE(auto scalar, array.GetScalar(i));
      std::string hex = arrow::HexEncode(static_cast<const arrow::BaseBinaryScalar&>(*scalar).view());
      for (auto& c : hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      WriteJsonString(hex, out);
      return arrow::Status::OK();
    }
    case arrow::Type::LIST:
      return WriteList(static_cast<const arrow::ListArray&>(array), i, out);
    case arrow::Type::LARGE_LIST:
      return WriteList(static_cast<const arrow::LargeListArray&>(array), i, out);
    case arrow::Type::FIXED_SIZE_LIST:
      return WriteList(static_cast<const arrow::FixedSizeListArray&>(array), i, out);
    case arrow::Type::LIST_VIEW:
      return WriteList(static_cast<const arrow::ListViewArray&>(array), i, out);
    case arrow::Type::LARGE_LIST_VIEW:
      return WriteList(static_cast<const arrow::LargeListViewArray&>(array), i, out);
    case arrow::Type::STRUCT: {
      const auto& structs = static_cast<const arrow::StructArray&>(array);
      const auto& type = *structs.struct_type();
      out->push_back('{');
      for (int f = 0; f < type.num_fields(); ++f) {
        if (f > 0) out->push_back(',');
        WriteJsonString(type.field(f)->name(), out);
        out->push_back(':');
        // field(f) applies the struct's offset; nulls are written (explicit nulls, as Daft).
        ARROW_RETURN_NOT_OK(WriteValue(*structs.field(f), i, out));
      }
      out->push_back('}');
      return arrow::Status::OK();
    }
    case arrow::Type::MAP: {
      const auto& maps = static_cast<const arrow::MapArray&>(array);
      const auto& keys = *maps.keys();
      const auto& items = *maps.items();
      out->push_back('{');
      const int64_t begin = maps.value_offset(i);
      const int64_t end = begin + maps.value_length(i);
      for (int64_t k = begin; k < end; ++k) {
        if (k > begin) out->push_back(',');
        if (arrow::is_string(keys.type_id())) {
          ARROW_RETURN_NOT_OK(WriteValue(keys, k, out));
        } else {
          std::string key;  // JSON keys are strings: a non-string key is written as its JSON text
          ARROW_RETURN_NOT_OK(WriteValue(keys, k, &key));
          WriteJsonString(key, out);
        }
        out->push_back(':');
        ARROW_RETURN_NOT_OK(WriteValue(items, k, out));
      }
      out->push_back('}');
      return arrow::Status::OK();
    }
    case arrow::Type::DICTIONARY: {
      const auto& dictionary = static_cast<const arrow::DictionaryArray&>(array);
      return WriteValue(*dictionary.dictionary(), dictionary.GetValueIndex(i), out);
    }
    case arrow::Type::EXTENSION:
      return WriteValue(*static_cast<const arrow::ExtensionArray&>(array).storage(), i, out);
    default:
      break;
  }
  if (IsTemporal(id)) {
    // ISO 8601 text from Arrow's cast to string, with the date/time separator 'T'.
    ARROW_ASSIGN_OR_RAISE(auto text, arrow::compute::Cast(*array.Slice(i, 1), arrow::utf8()));
    std::string value = static_cast<const arrow::StringArray&>(*text).GetString(0);
    if (id == arrow::Type::TIMESTAMP || id == arrow::Type::DATE64) {
      auto space = value.find(' ');
      if (space != std::string::npos) value[space] = 'T';
    }
    WriteJsonString(value, out);
    return arrow::Status::OK();
  }
  return arrow::Status::NotImplemented("cannot write ", array.type()->ToString(), " as JSON");
}

class SerializeFunction : public ScalarFunction {
 public:
  std::string name() const override { return "serialize"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>&,
      const FunctionOptions& options) const override {
    if (arg_types.size() != 1) return arrow::Status::Invalid("serialize takes one argument");
    ARROW_RETURN_NOT_OK(CheckFormat(options, "serialize"));
    ARROW_RETURN_NOT_OK(CheckSerializable(*arg_types[0], "serialize"));
    return arrow::large_utf8();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    arrow::LargeStringBuilder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(input->length()));
    std::string text;
    for (int64_t i = 0; i < input->length(); ++i) {
      if (input->IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      text.clear();
      auto status = WriteValue(*input, i, &text);
      if (!status.ok()) return RunError("serialize", status, ctx);
      ARROW_RETURN_NOT_OK(builder.Append(text));
    }
    return builder.Finish();
  }
};

}  // namespace

arrow::Status RegisterJsonSerdeFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<SerializeFunction>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<DeserializeFunction>("deserialize", false)));
  return registry->Register(std::make_shared<DeserializeFunction>("try_deserialize", true));
}

}  // namespace ketch::codec
