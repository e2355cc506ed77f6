#pragma once

// Helpers shared by the image kernels' ScalarFunction classes (argument checks, option parsing).

#include <cstring>
#include <optional>
#include <string>

#include "ketch/expr/function_registry.h"
#include "ketch/types/image_array.h"

namespace ketch::image {

inline arrow::Status ExpectArgs(const std::string& function, size_t expected, size_t got) {
  if (expected != got) {
    return arrow::Status::Invalid(function, " takes ", expected, " argument(s), got ", got);
  }
  return arrow::Status::OK();
}

/// TypeError naming the argument unless `type` is an Image or FixedShapeImage.
inline arrow::Status ExpectImage(const std::string& what, const std::shared_ptr<arrow::DataType>& type,
                                 const ExprPtr& expr) {
  if (IsImageType(*type)) return arrow::Status::OK();
  return arrow::Status::TypeError(what, " expects an Image column, but ", expr->ToString(), " has type ",
                                  type->ToString());
}

inline arrow::Result<std::string> OnError(const FunctionOptions& options, const std::string& function) {
  if (!HasOption(options, "on_error")) return std::string("raise");
  ARROW_ASSIGN_OR_RAISE(auto on_error, GetStringOption(options, "on_error", function));
  if (on_error != "raise" && on_error != "null") {
    return arrow::Status::Invalid(function, ": on_error must be 'raise' or 'null', got '", on_error, "'");
  }
  return on_error;
}

inline arrow::Result<std::optional<ImageMode>> OptionalMode(const FunctionOptions& options,
                                                            const std::string& function) {
  if (!HasOption(options, "mode")) return std::optional<ImageMode>();
  ARROW_ASSIGN_OR_RAISE(auto name, GetStringOption(options, "mode", function));
  ARROW_ASSIGN_OR_RAISE(auto mode, ParseMode(name));
  return std::optional<ImageMode>(mode);
}

/// The mode an Image / FixedShapeImage type declares (nullopt for Image[MIXED]).
inline std::optional<ImageMode> DeclaredMode(const arrow::DataType& type) {
  const auto& ext = static_cast<const arrow::ExtensionType&>(type);
  if (ext.extension_name() == "ketch.fixed_shape_image") {
    return static_cast<const FixedShapeImageType&>(type).mode();
  }
  return static_cast<const ImageType&>(type).mode();
}

/// Builds a FixedShapeImage column of `type` (one contiguous (N, H, W, C) block) from `reader`'s
/// rows: `write_row(view, dst)` fills the row_bytes of each non-null row; null rows stay zeroed.
template <typename WriteRow>
arrow::Result<std::shared_ptr<arrow::Array>> BuildFixedShapeImages(
    const std::shared_ptr<arrow::DataType>& type, const ImageArrayReader& reader, WriteRow write_row) {
  const auto& fixed = static_cast<const FixedShapeImageType&>(*type);
  const int64_t n = reader.length();
  const int64_t row_bytes = int64_t{fixed.height()} * fixed.width() * fixed.channels();
  ARROW_ASSIGN_OR_RAISE(auto values, arrow::AllocateBuffer(n * row_bytes));
  std::memset(values->mutable_data(), 0, values->size());
  ARROW_ASSIGN_OR_RAISE(auto validity, arrow::AllocateEmptyBitmap(n));
  int64_t nulls = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (reader.IsNull(i)) {
      ++nulls;
      continue;
    }
    arrow::bit_util::SetBit(validity->mutable_data(), i);
    ARROW_ASSIGN_OR_RAISE(auto view, reader.View(i));
    write_row(view, values->mutable_data() + i * row_bytes);
  }
  auto child = std::make_shared<arrow::UInt8Array>(n * row_bytes, std::move(values));
  auto storage = std::make_shared<arrow::FixedSizeListArray>(
      fixed.storage_type(), n, child, nulls ? std::shared_ptr<arrow::Buffer>(std::move(validity)) : nullptr,
      nulls);
  return arrow::ExtensionType::WrapArray(type, storage);
}

}  // namespace ketch::image
