#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>

#include "ketch/expr/function_registry.h"

namespace ketch::media {

/// The encoded bytes behind a media kernel's first argument, one object per row: binary /
/// large_binary values as they are, the objects a File column names, read on the I/O pool by the
/// registered `file_read` kernel (its errors name the row and path; with on_error="null" an
/// unreadable file is a null row), or what `file_read(f, with_path=true)` read in a stage before
/// (struct<path, bytes>: the optimizer's rewrite), which keeps the paths for errors.
class MediaBytes {
 public:
  /// TypeError (at plan time) unless `type` is binary, large_binary or File; `function` is the
  /// user-facing name in the message.
  static arrow::Status CheckType(const std::string& function, const std::shared_ptr<arrow::DataType>& type,
                                 const ExprPtr& expr);

  static arrow::Result<MediaBytes> Make(const arrow::Datum& arg, const FunctionOptions& options,
                                        const EvalContext& ctx);

  int64_t length() const { return bytes_->length(); }
  bool IsNull(int64_t i) const { return bytes_->IsNull(i); }
  /// Row i's bytes as a slice of the column's value buffer (no copy).
  std::shared_ptr<arrow::Buffer> Value(int64_t i) const;
  /// " ('<path>')" for a row read from a file (credentials redacted), "" for bytes: what errors
  /// append after "failed at row N".
  std::string Where(int64_t i) const;
  /// The bytes of every row (large_binary; null rows null).
  const std::shared_ptr<arrow::LargeBinaryArray>& bytes() const { return bytes_; }

 private:
  MediaBytes(std::shared_ptr<arrow::LargeBinaryArray> bytes, std::shared_ptr<arrow::LargeStringArray> paths)
      : bytes_(std::move(bytes)), paths_(std::move(paths)) {}
  std::shared_ptr<arrow::LargeBinaryArray> bytes_;
  std::shared_ptr<arrow::LargeStringArray> paths_;  // null for binary input
};

/// Whether `type` is what `file_read(f, with_path=true)` returns: struct<path: large_utf8,
/// bytes: large_binary>.
bool IsReadWithPath(const arrow::DataType& type);

/// The option on_error: "raise" (default) or "null"; Invalid for anything else.
arrow::Result<bool> NullOnError(const FunctionOptions& options, const std::string& function);

}  // namespace ketch::media
