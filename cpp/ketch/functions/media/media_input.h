#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>

#include "ketch/expr/function_registry.h"

namespace ketch::media {

/// The encoded bytes behind a media kernel's first argument, one object per row: binary /
/// large_binary values as they are, or the objects a File column names, read on the I/O pool by
/// the registered `file_read` kernel (its errors name the row and path; with on_error="null" an
/// unreadable file is a null row).
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

 private:
  explicit MediaBytes(std::shared_ptr<arrow::LargeBinaryArray> bytes) : bytes_(std::move(bytes)) {}
  std::shared_ptr<arrow::LargeBinaryArray> bytes_;
};

/// The option on_error: "raise" (default) or "null"; Invalid for anything else.
arrow::Result<bool> NullOnError(const FunctionOptions& options, const std::string& function);

}  // namespace ketch::media
