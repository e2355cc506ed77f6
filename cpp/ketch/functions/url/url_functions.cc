#include "ketch/functions/url/url_functions.h"

#include <arrow/io/file.h>
#include <arrow/util/future.h>

#include <atomic>

#include "ketch/common/config.h"
#include "ketch/common/thread_pools.h"
#include "ketch/expr/function_registry.h"
#include "ketch/io/http_client.h"
#include "ketch/io/local_file.h"
#include "ketch/io/object_reader.h"
#include "ketch/io/object_store.h"
#include "ketch/io/redact.h"

namespace ketch::url {

arrow::Result<io::HttpOptions> HttpOptionsFromOptions(const FunctionOptions& options,
                                                      const std::string& function) {
  io::HttpOptions http;
  for (auto [key, field] : {std::pair{"http_connect_timeout_ms", &http.connect_timeout_ms},
                            std::pair{"http_low_speed_timeout_s", &http.low_speed_timeout_s},
                            std::pair{"http_max_object_bytes", &http.max_object_bytes}}) {
    if (HasOption(options, key)) {
      ARROW_ASSIGN_OR_RAISE(*field, GetIntOption(options, key, function));
    }
  }
  if (HasOption(options, "http_max_attempts")) {
    ARROW_ASSIGN_OR_RAISE(auto attempts, GetIntOption(options, "http_max_attempts", function));
    http.max_attempts = static_cast<int32_t>(std::max<int64_t>(1, attempts));
  }
  return http;
}

arrow::Result<io::S3Config> S3ConfigFromOptions(const FunctionOptions& options) {
  io::S3Config config;
  auto get = [&](const char* key, std::string* out) -> arrow::Status {
    if (!HasOption(options, key)) return arrow::Status::OK();
    ARROW_ASSIGN_OR_RAISE(*out, GetStringOption(options, key, "io_config"));
    return arrow::Status::OK();
  };
  ARROW_RETURN_NOT_OK(get("s3_region", &config.region));
  ARROW_RETURN_NOT_OK(get("s3_endpoint_override", &config.endpoint_override));
  ARROW_RETURN_NOT_OK(get("s3_scheme", &config.scheme));
  ARROW_RETURN_NOT_OK(get("s3_key_id", &config.key_id));
  ARROW_RETURN_NOT_OK(get("s3_access_key", &config.access_key));
  ARROW_RETURN_NOT_OK(get("s3_session_token", &config.session_token));
  std::string anonymous;
  ARROW_RETURN_NOT_OK(get("s3_anonymous", &anonymous));
  config.anonymous = anonymous == "true";
  return config;
}

namespace {

class UrlDownload : public ScalarFunction {
 public:
  std::string name() const override { return "url_download"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    if (types.size() != 1 || !arrow::is_string(types[0]->id())) {
      return arrow::Status::TypeError("url.download expects a string column of URLs, but ",
                                      exprs.empty() ? "?" : exprs[0]->ToString(), " has type ",
                                      types.empty() ? "?" : types[0]->ToString());
    }
    ARROW_RETURN_NOT_OK(OnError(options).status());
    return arrow::large_binary();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto strings, arrow::compute::Cast(*input, arrow::large_utf8()));
    const auto& urls = static_cast<const arrow::LargeStringArray&>(*strings);
    ARROW_ASSIGN_OR_RAISE(auto on_error, OnError(options));
    int64_t max_connections = 32;
    if (HasOption(options, "max_connections")) {
      ARROW_ASSIGN_OR_RAISE(max_connections, GetIntOption(options, "max_connections", name()));
    }
    ARROW_ASSIGN_OR_RAISE(auto s3, S3ConfigFromOptions(options));
    auto* pool = IoPool(static_cast<int32_t>(std::max<int64_t>(8, std::min<int64_t>(max_connections, 64))));
    // Submit in windows of max_connections so no more reads are in flight at once.
    const int64_t n = urls.length();
    // Every slot is overwritten below; a null buffer stands for a null URL.
    std::vector<arrow::Result<std::shared_ptr<arrow::Buffer>>> results(n, std::shared_ptr<arrow::Buffer>());
    // HTTP(S) rows: all of the morsel's requests through one libcurl multi handle.
    std::vector<std::string> http_urls;
    std::vector<int64_t> http_rows;
    for (int64_t i = 0; i < n; ++i) {
      if (!urls.IsNull(i) && io::IsHttpUrl(urls.GetView(i))) {
        http_urls.emplace_back(urls.GetView(i));
        http_rows.push_back(i);
      }
    }
    if (!http_urls.empty()) {
      ARROW_ASSIGN_OR_RAISE(io::HttpOptions http, HttpOptionsFromOptions(options, name()));
      http.max_connections = static_cast<int32_t>(std::min<int64_t>(max_connections, 1024));
      http.cancelled = ctx.cancelled;
      auto fetched = io::HttpGetAll(http_urls, http);
      for (size_t k = 0; k < http_rows.size(); ++k) results[http_rows[k]] = std::move(fetched[k]);
    }
    for (int64_t start = 0; start < n; start += max_connections) {
      const int64_t end = std::min(n, start + max_connections);
      std::vector<arrow::Future<std::shared_ptr<arrow::Buffer>>> futures;
      for (int64_t i = start; i < end; ++i) {
        if (urls.IsNull(i) || io::IsHttpUrl(urls.GetView(i))) {
          futures.push_back(arrow::Future<std::shared_ptr<arrow::Buffer>>::MakeFinished(nullptr));
          continue;
        }
        std::string url(urls.GetView(i));
        futures.push_back(SubmitOrRunHere(pool, [url, s3] { return io::ReadObject(url, s3); }));
      }
      for (int64_t i = start; i < end; ++i) {
        if (!urls.IsNull(i) && io::IsHttpUrl(urls.GetView(i))) continue;
        results[i] = futures[i - start].result();
      }
    }
    // One allocation for all bodies (a growing builder would copy 8 MiB objects several times).
    int64_t total = 0;
    for (const auto& result : results) {
      if (result.ok() && *result != nullptr) total += (*result)->size();
    }
    arrow::LargeBinaryBuilder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(n));
    ARROW_RETURN_NOT_OK(builder.ReserveData(total));
    arrow::Status cancelled;
    for (int64_t i = 0; i < n; ++i) {
      if (!results[i].ok()) {
        // A download given up because the query stopped (another row failed, or Ctrl-C) is a
        // consequence: never a null, and never the query's error while a real one is at hand.
        if (results[i].status().IsCancelled()) {
          if (cancelled.ok()) cancelled = results[i].status();
          continue;
        }
        if (on_error == "null") {
          ARROW_RETURN_NOT_OK(builder.AppendNull());
          continue;
        }
        // The URL and the cause may both carry credentials (user-info, signed query, S3 keys).
        return arrow::Status::IOError(
            "url.download failed at row ", ctx.SourceRow(i), " ('", io::Redact(urls.GetView(i)),
            "'): ", io::Redact(io::MessageWithOsReason(results[i].status()), s3.Secrets()));
      }
      if (*results[i] == nullptr) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
      } else {
        ARROW_RETURN_NOT_OK(builder.Append((*results[i])->data(), (*results[i])->size()));
      }
    }
    ARROW_RETURN_NOT_OK(cancelled);
    ARROW_ASSIGN_OR_RAISE(auto out, builder.Finish());
    return out;
  }

 private:
  arrow::Result<std::string> OnError(const FunctionOptions& options) const {
    if (!HasOption(options, "on_error")) return std::string("raise");
    ARROW_ASSIGN_OR_RAISE(auto on_error, GetStringOption(options, "on_error", name()));
    if (on_error != "raise" && on_error != "null") {
      return arrow::Status::Invalid("url.download: on_error must be 'raise' or 'null', got '", on_error, "'");
    }
    return on_error;
  }
};

}  // namespace

arrow::Status RegisterUrlFunctions() {
  ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<UrlDownload>()));
  return RegisterUrlUpload();
}

}  // namespace ketch::url
