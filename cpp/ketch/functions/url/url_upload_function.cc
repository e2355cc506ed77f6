// url_upload: binary rows → new objects under a location (local directory, file:// or s3://).

#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <arrow/util/future.h>

#include <filesystem>
#include <random>

#include "ketch/common/exception_guard.h"
#include "ketch/common/thread_pools.h"
#include "ketch/functions/url/url_functions.h"
#include "ketch/io/local_file.h"
#include "ketch/io/redact.h"

namespace ketch::url {
namespace {

std::string RandomHex(int digits) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* kHex = "0123456789abcdef";
  std::string out(static_cast<size_t>(digits), '0');
  for (auto& c : out) c = kHex[rng() % 16];
  return out;
}

class UrlUpload : public ScalarFunction {
 public:
  std::string name() const override { return "url_upload"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    if (types.size() != 1 ||
        !(arrow::is_binary_like(types[0]->id()) || arrow::is_large_binary_like(types[0]->id()))) {
      return arrow::Status::TypeError("url.upload expects a binary column, but ",
                                      exprs.empty() ? "?" : exprs[0]->ToString(), " has type ",
                                      types.empty() ? "?" : types[0]->ToString());
    }
    ARROW_RETURN_NOT_OK(GetStringOption(options, "location", "url.upload").status());
    return arrow::large_utf8();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto binary, arrow::compute::Cast(*input, arrow::large_binary()));
    const auto& data = static_cast<const arrow::LargeBinaryArray&>(*binary);
    ARROW_ASSIGN_OR_RAISE(auto location, GetStringOption(options, "location", "url.upload"));
    ARROW_ASSIGN_OR_RAISE(auto s3, S3ConfigFromOptions(options));
    std::string on_error = "raise";
    if (HasOption(options, "on_error")) {
      ARROW_ASSIGN_OR_RAISE(on_error, GetStringOption(options, "on_error", "url.upload"));
    }
    while (location.size() > 1 && location.back() == '/') location.pop_back();
    const bool remote = io::IsS3Url(location);
    std::string local_dir = location;
    if (!remote) {
      if (local_dir.rfind("file://", 0) == 0) local_dir = local_dir.substr(7);
      std::error_code ec;
      std::filesystem::create_directories(local_dir, ec);
      if (ec)
        return arrow::Status::IOError("url.upload: cannot create directory '", local_dir,
                                      "': ", ec.message());
      local_dir = std::filesystem::absolute(local_dir).string();
    }
    const std::string prefix = RandomHex(16);
    const int64_t n = data.length();
    std::vector<std::string> paths(n);
    std::vector<arrow::Future<>> writes;
    auto* pool = IoPool(0);
    for (int64_t i = 0; i < n; ++i) {
      if (data.IsNull(i)) {
        writes.push_back(arrow::Future<>::MakeFinished());
        continue;
      }
      const std::string name = prefix + "-" + std::to_string(ctx.SourceRow(i));
      paths[i] = (remote ? location : local_dir) + "/" + name;
      auto view = data.GetView(i);
      const auto* bytes = reinterpret_cast<const uint8_t*>(view.data());
      const int64_t size = static_cast<int64_t>(view.size());
      std::string path = paths[i];
      writes.push_back(arrow::DeferNotOk(pool->Submit([remote, path, bytes, size, s3]() -> arrow::Status {
        return GuardExceptions("url.upload", [&] {
          return remote ? io::WriteS3Object(path, bytes, size, s3)
                        : io::WriteLocalFileAtomically(path, bytes, size, "cannot write");
        });
      })));
    }
    arrow::LargeStringBuilder out;
    arrow::Status first_error;
    arrow::Status cancelled;  // reported only when no row failed for a reason of its own
    for (int64_t i = 0; i < n; ++i) {
      auto st = writes[i].status();  // waits: `data` must outlive every write
      if (data.IsNull(i)) {
        ARROW_RETURN_NOT_OK(out.AppendNull());
      } else if (!st.ok()) {
        if (st.IsCancelled()) {
          if (cancelled.ok()) cancelled = st;  // the query stopped: a consequence, not a null
        } else if (on_error == "null") {
          ARROW_RETURN_NOT_OK(out.AppendNull());
        } else if (first_error.ok()) {
          first_error =
              arrow::Status::IOError("url.upload failed at row ", ctx.SourceRow(i), " ('",
                                     io::Redact(paths[i]), "'): ", io::Redact(st.message(), s3.Secrets()));
        }
      } else {
        ARROW_RETURN_NOT_OK(out.Append(paths[i]));
      }
    }
    ARROW_RETURN_NOT_OK(first_error);
    ARROW_RETURN_NOT_OK(cancelled);
    return out.Finish();
  }
};

}  // namespace

arrow::Status RegisterUrlUpload() {
  return FunctionRegistry::Global()->Register(std::make_shared<UrlUpload>());
}

}  // namespace ketch::url
