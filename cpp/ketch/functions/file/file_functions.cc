#include "ketch/functions/file/file_functions.h"

#include <arrow/compute/api.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/future.h>

#include <variant>

#include "ketch/common/thread_pools.h"
#include "ketch/expr/function_registry.h"
#include "ketch/functions/file/mime_sniff.h"
#include "ketch/functions/url/url_functions.h"
#include "ketch/io/http_client.h"
#include "ketch/io/local_file.h"
#include "ketch/io/object_reader.h"
#include "ketch/io/redact.h"
#include "ketch/types/file_type.h"

namespace ketch::file {
namespace {

enum class Kind { kPath, kSize, kMime, kRead };

class FileFunction : public ScalarFunction {
 public:
  FileFunction(std::string name, Kind kind) : name_(std::move(name)), kind_(kind) {}
  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    if (types.size() != 1 || !IsFileType(*types[0])) {
      return arrow::Status::TypeError(name_, " expects a File column (ketch.from_files), but ",
                                      exprs.empty() ? "?" : exprs[0]->ToString(), " has type ",
                                      types.empty() ? "?" : types[0]->ToString());
    }
    switch (kind_) {
      case Kind::kPath:
        return arrow::large_utf8();
      case Kind::kSize:
        return arrow::int64();
      case Kind::kMime:
        return arrow::utf8();
      case Kind::kRead:
        if (HasOption(options, "with_path")) return ReadWithPathType();
        return arrow::large_binary();
    }
    return arrow::Status::Invalid("unreachable");
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    const auto& storage =
        static_cast<const arrow::StructArray&>(*static_cast<const arrow::ExtensionArray&>(*input).storage());
    const auto& paths = static_cast<const arrow::LargeStringArray&>(*storage.field(0));
    const auto& sizes = static_cast<const arrow::Int64Array&>(*storage.field(1));
    const int64_t n = input->length();
    auto is_null = [&](int64_t i) { return input->IsNull(i) || paths.IsNull(i); };
    if (kind_ == Kind::kPath) {
      arrow::LargeStringBuilder out;
      for (int64_t i = 0; i < n; ++i) {
        ARROW_RETURN_NOT_OK(is_null(i) ? out.AppendNull() : out.Append(paths.GetView(i)));
      }
      return out.Finish();
    }
    ARROW_ASSIGN_OR_RAISE(auto s3, url::S3ConfigFromOptions(options));
    std::string on_error = "raise";
    if (HasOption(options, "on_error")) {
      ARROW_ASSIGN_OR_RAISE(on_error, GetStringOption(options, "on_error", name_));
    }
    // One I/O task per row that needs the store, up to 32 in flight.
    using Value = std::variant<std::monostate, int64_t, std::shared_ptr<arrow::Buffer>>;
    std::vector<arrow::Result<Value>> results(n, Value{});
    auto* pool = IoPool(0);
    // file_read of http(s) objects: all of the morsel's through one libcurl multi handle, with the
    // call's HTTPConfig (its size limit cuts an endless body).
    std::vector<bool> fetched(n, false);
    if (kind_ == Kind::kRead) {
      std::vector<std::string> urls;
      std::vector<int64_t> rows;
      for (int64_t i = 0; i < n; ++i) {
        if (!is_null(i) && io::IsHttpUrl(paths.GetView(i))) {
          urls.emplace_back(paths.GetView(i));
          rows.push_back(i);
        }
      }
      if (!urls.empty()) {
        ARROW_ASSIGN_OR_RAISE(io::HttpOptions http, url::HttpOptionsFromOptions(options, name_));
        http.cancelled = ctx.cancelled;
        auto bodies = io::HttpGetAll(urls, http);
        for (size_t k = 0; k < rows.size(); ++k) {
          fetched[rows[k]] = true;
          if (bodies[k].ok()) {
            results[rows[k]] = Value{*std::move(bodies[k])};
          } else {
            results[rows[k]] = bodies[k].status();
          }
        }
      }
    }
    constexpr int64_t kWindow = 32;
    for (int64_t start = 0; start < n; start += kWindow) {
      const int64_t end = std::min(n, start + kWindow);
      std::vector<arrow::Future<Value>> futures;
      for (int64_t i = start; i < end; ++i) {
        if (fetched[i]) {
          futures.push_back(arrow::Future<Value>::MakeFinished(results[i]));
          continue;
        }
        if (is_null(i) || (kind_ == Kind::kSize && sizes.IsValid(i))) {
          futures.push_back(arrow::Future<Value>::MakeFinished(Value{}));
          continue;
        }
        std::string path(paths.GetView(i));
        const Kind kind = kind_;
        futures.push_back(SubmitOrRunHere(pool, [path, kind, s3]() -> arrow::Result<Value> {
          if (kind == Kind::kSize) {
            ARROW_ASSIGN_OR_RAISE(auto size, io::ObjectSize(path, s3));
            return Value{size};
          }
          if (kind == Kind::kMime) {
            ARROW_ASSIGN_OR_RAISE(auto head, io::ReadObjectPrefix(path, kSniffBytes, s3));
            return Value{head};
          }
          ARROW_ASSIGN_OR_RAISE(auto all, io::ReadObject(path, s3));
          return Value{all};
        }));
      }
      for (int64_t i = start; i < end; ++i) results[i] = futures[i - start].result();
    }
    auto fail = [&](int64_t i) {
      return arrow::Status::IOError(
          name_, " failed at row ", ctx.SourceRow(i), " ('", io::Redact(paths.GetView(i)),
          "'): ", io::Redact(io::MessageWithOsReason(results[i].status()), s3.Secrets()));
    };
    if (kind_ == Kind::kSize) {
      arrow::Int64Builder out;
      for (int64_t i = 0; i < n; ++i) {
        if (is_null(i)) {
          ARROW_RETURN_NOT_OK(out.AppendNull());
        } else if (sizes.IsValid(i)) {
          ARROW_RETURN_NOT_OK(out.Append(sizes.Value(i)));
        } else if (!results[i].ok()) {
          if (on_error != "null") return fail(i);
          ARROW_RETURN_NOT_OK(out.AppendNull());
        } else {
          ARROW_RETURN_NOT_OK(out.Append(std::get<int64_t>(*results[i])));
        }
      }
      return out.Finish();
    }
    std::unique_ptr<arrow::ArrayBuilder> builder;
    if (kind_ == Kind::kMime) {
      builder = std::make_unique<arrow::StringBuilder>();
    } else {
      builder = std::make_unique<arrow::LargeBinaryBuilder>();
    }
    for (int64_t i = 0; i < n; ++i) {
      if (is_null(i)) {
        ARROW_RETURN_NOT_OK(builder->AppendNull());
        continue;
      }
      if (!results[i].ok()) {
        if (on_error != "null") return fail(i);
        ARROW_RETURN_NOT_OK(builder->AppendNull());
        continue;
      }
      const auto& buffer = std::get<std::shared_ptr<arrow::Buffer>>(*results[i]);
      if (kind_ == Kind::kMime) {
        ARROW_RETURN_NOT_OK(static_cast<arrow::StringBuilder&>(*builder).Append(
            SniffMimeType(buffer->data(), buffer->size())));
      } else {
        ARROW_RETURN_NOT_OK(
            static_cast<arrow::LargeBinaryBuilder&>(*builder).Append(buffer->data(), buffer->size()));
      }
    }
    std::shared_ptr<arrow::Array> out;
    ARROW_RETURN_NOT_OK(builder->Finish(&out));
    if (kind_ == Kind::kRead && HasOption(options, "with_path")) {
      // The bytes beside the path they came from, so a kernel reading them can name the file.
      auto path_array = arrow::MakeArray(paths.data());
      return arrow::StructArray::Make({path_array, out}, ReadWithPathType()->fields(), out->null_bitmap(),
                                      out->null_count());
    }
    return out;
  }

  // file_read(f, with_path=true): struct<path: large_utf8, bytes: large_binary>.
  static std::shared_ptr<arrow::DataType> ReadWithPathType() {
    return arrow::struct_(
        {arrow::field("path", arrow::large_utf8()), arrow::field("bytes", arrow::large_binary())});
  }

 private:
  std::string name_;
  Kind kind_;
};

/// file_from_path(string | File; media: "" | "audio" | "video") → File (File[Audio], File[Video]):
/// references with unknown size; nothing is read.
class FileFromPath : public ScalarFunction {
 public:
  std::string name() const override { return "file_from_path"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_ASSIGN_OR_RAISE(auto media, Media(options));
    if (types.size() != 1 || !(arrow::is_string(types[0]->id()) || IsFileType(*types[0]))) {
      return arrow::Status::TypeError(
          media.empty() ? "url.to_file" : media + "_file", " expects a string column of paths or URLs, but ",
          exprs.empty() ? "?" : exprs[0]->ToString(), " has type ",
          types.empty() ? "?" : types[0]->ToString(),
          media.empty() ? "" : " (the " + media + " kernels also take encoded bytes as they are)");
    }
    return file_type(media);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto media, Media(options));
    if (IsFileType(*input->type())) {
      // A File column gets the media type: same references, same storage.
      return arrow::ExtensionType::WrapArray(file_type(media),
                                             static_cast<const arrow::ExtensionArray&>(*input).storage());
    }
    ARROW_ASSIGN_OR_RAISE(auto paths, arrow::compute::Cast(*input, arrow::large_utf8()));
    ARROW_ASSIGN_OR_RAISE(auto sizes, arrow::MakeArrayOfNull(arrow::int64(), input->length()));
    ARROW_ASSIGN_OR_RAISE(auto bitmap, input->null_count()
                                           ? arrow::internal::CopyBitmap(arrow::default_memory_pool(),
                                                                         input->null_bitmap_data(),
                                                                         input->offset(), input->length())
                                           : std::shared_ptr<arrow::Buffer>());
    ARROW_ASSIGN_OR_RAISE(auto storage,
                          arrow::StructArray::Make({paths, sizes}, FileType::StorageType()->fields(), bitmap,
                                                   input->null_count()));
    return arrow::ExtensionType::WrapArray(file_type(media), storage);
  }

 private:
  // Option "media": "" (a plain File, the default), "audio" (audio_file) or "video" (video_file).
  static arrow::Result<std::string> Media(const FunctionOptions& options) {
    if (!HasOption(options, "media")) return std::string();
    ARROW_ASSIGN_OR_RAISE(auto media, GetStringOption(options, "media", "file_from_path"));
    if (media != "" && media != "audio" && media != "video") {
      return arrow::Status::Invalid("file_from_path: media must be '', 'audio' or 'video', got '", media,
                                    "'");
    }
    return media;
  }
};

}  // namespace

arrow::Status RegisterFileFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(RegisterBytesMimeFunction());
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<FileFunction>("file_path", Kind::kPath)));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<FileFunction>("file_size", Kind::kSize)));
  ARROW_RETURN_NOT_OK(
      registry->Register(std::make_shared<FileFunction>("file_guess_mime_type", Kind::kMime)));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<FileFunction>("file_read", Kind::kRead)));
  return registry->Register(std::make_shared<FileFromPath>());
}

}  // namespace ketch::file
