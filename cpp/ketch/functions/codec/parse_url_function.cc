// url_parse (Daft's parse_url): URL components by libcurl's URL API. Rows' URLs never reach an
// error message or log: their user-info may carry a password.

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <memory>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/codec/codec_functions.h"

namespace ketch::codec {
namespace {

struct CurlUrlDeleter {
  void operator()(CURLU* handle) const { curl_url_cleanup(handle); }
};

struct Part {
  const char* name;
  CURLUPart part;
};

// Daft's field order; port (index 4) is uint16, the rest strings.
constexpr std::array<Part, 8> kParts = {{{"scheme", CURLUPART_SCHEME},
                                         {"username", CURLUPART_USER},
                                         {"password", CURLUPART_PASSWORD},
                                         {"host", CURLUPART_HOST},
                                         {"port", CURLUPART_PORT},
                                         {"path", CURLUPART_PATH},
                                         {"query", CURLUPART_QUERY},
                                         {"fragment", CURLUPART_FRAGMENT}}};
constexpr size_t kPortIndex = 4;

std::shared_ptr<arrow::DataType> ParsedUrlType() {
  arrow::FieldVector fields;
  for (size_t i = 0; i < kParts.size(); ++i) {
    fields.push_back(arrow::field(kParts[i].name, i == kPortIndex ? arrow::uint16() : arrow::large_utf8()));
  }
  return arrow::struct_(fields);
}

class ParseUrlFunction : public ScalarFunction {
 public:
  std::string name() const override { return "url_parse"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    if (arg_types.size() != 1) return arrow::Status::Invalid("parse_url takes one argument");
    if (arg_types[0]->id() != arrow::Type::NA && !arrow::is_string(arg_types[0]->id())) {
      return arrow::Status::TypeError("parse_url expects a string column of URLs, got ",
                                      arg_exprs[0]->ToString(), " of type ", arg_types[0]->ToString());
    }
    return ParsedUrlType();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    const auto type = ParsedUrlType();
    if (input->type_id() == arrow::Type::NA) return arrow::MakeArrayOfNull(type, input->length());
    ARROW_ASSIGN_OR_RAISE(auto strings, arrow::compute::Cast(*input, arrow::large_utf8()));
    const auto& urls = static_cast<const arrow::LargeStringArray&>(*strings);

    std::unique_ptr<arrow::ArrayBuilder> builder;
    ARROW_ASSIGN_OR_RAISE(builder, arrow::MakeBuilder(type));
    auto& structs = static_cast<arrow::StructBuilder&>(*builder);
    ARROW_RETURN_NOT_OK(structs.Reserve(urls.length()));
    auto* port = static_cast<arrow::UInt16Builder*>(structs.field_builder(kPortIndex));
    auto text = [&](size_t i) { return static_cast<arrow::LargeStringBuilder*>(structs.field_builder(i)); };
    auto append_all_null = [&]() -> arrow::Status {
      for (size_t i = 0; i < kParts.size(); ++i) ARROW_RETURN_NOT_OK(structs.field_builder(i)->AppendNull());
      return arrow::Status::OK();
    };
    std::string url;
    for (int64_t row = 0; row < urls.length(); ++row) {
      if (urls.IsNull(row)) {
        ARROW_RETURN_NOT_OK(structs.AppendNull());
        ARROW_RETURN_NOT_OK(append_all_null());
        continue;
      }
      ARROW_RETURN_NOT_OK(structs.Append());
      url.assign(urls.GetView(row));  // curl wants a NUL-terminated string
      // A fresh handle per URL: on a handle that holds a URL, curl resolves the next one as a
      // reference relative to it ("not a url" would become http://host/not%20a%20url).
      std::unique_ptr<CURLU, CurlUrlDeleter> handle(curl_url());
      if (!handle) return arrow::Status::OutOfMemory("parse_url: curl_url() failed");
      // Any scheme (s3://, gs://, ...), not only the ones this libcurl speaks.
      if (url.find('\0') != std::string::npos ||
          curl_url_set(handle.get(), CURLUPART_URL, url.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) {
        ARROW_RETURN_NOT_OK(append_all_null());  // Daft: an invalid URL gives null components
        continue;
      }
      for (size_t i = 0; i < kParts.size(); ++i) {
        char* value = nullptr;
        // As Daft (rust-url): a port equal to the scheme's default is no port.
        const unsigned int flags = i == kPortIndex ? CURLU_NO_DEFAULT_PORT : 0;
        const CURLUcode code = curl_url_get(handle.get(), kParts[i].part, &value, flags);
        std::unique_ptr<char, decltype(&curl_free)> owned(value, &curl_free);
        if (code != CURLUE_OK || value == nullptr) {
          ARROW_RETURN_NOT_OK(structs.field_builder(i)->AppendNull());
          continue;
        }
        std::string_view view(value);
        if (i == kPortIndex) {
          uint16_t number = 0;
          auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), number);
          if (error != std::errc() || end != view.data() + view.size()) {
            ARROW_RETURN_NOT_OK(port->AppendNull());
          } else {
            ARROW_RETURN_NOT_OK(port->Append(number));
          }
        } else if (i == 1 && view.empty()) {
          ARROW_RETURN_NOT_OK(text(i)->AppendNull());  // as Daft: an empty user name is none
        } else if (i == 0) {
          std::string scheme(view);  // schemes are case-insensitive; the canonical form is lower case
          std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                         [](unsigned char c) { return std::tolower(c); });
          ARROW_RETURN_NOT_OK(text(i)->Append(scheme));
        } else {
          ARROW_RETURN_NOT_OK(text(i)->Append(view));
        }
      }
    }
    std::shared_ptr<arrow::Array> result;
    ARROW_RETURN_NOT_OK(builder->Finish(&result));
    return result;
  }
};

}  // namespace

arrow::Status RegisterParseUrlFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<ParseUrlFunction>());
}

}  // namespace ketch::codec
