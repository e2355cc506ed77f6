#pragma once

#include <arrow/api.h>

#include <memory>
#include <optional>

#include "ketch/types/image_type.h"

namespace ketch {

/// A borrowed view of one image's pixels: height x width x channels bytes, row-major HWC.
struct ImageView {
  const uint8_t* data = nullptr;
  int32_t height = 0;
  int32_t width = 0;
  ImageMode mode = ImageMode::kRGB;
  int32_t channels() const { return ModeChannels(mode); }
  int64_t num_bytes() const { return int64_t{height} * width * channels(); }
};

/// Reads rows of an Image or FixedShapeImage array without copying pixels.
class ImageArrayReader {
 public:
  /// TypeError when `array` is not an image column.
  static arrow::Result<ImageArrayReader> Make(const std::shared_ptr<arrow::Array>& array);

  int64_t length() const { return length_; }
  bool IsNull(int64_t i) const { return storage_->IsNull(i); }
  /// The image at row i (must not be null). Invalid when the stored sizes are inconsistent.
  arrow::Result<ImageView> View(int64_t i) const;

 private:
  int64_t length_ = 0;
  std::shared_ptr<arrow::Array> storage_;
  // variable-shape
  std::shared_ptr<arrow::LargeBinaryArray> data_;
  std::shared_ptr<arrow::UInt16Array> channel_;
  std::shared_ptr<arrow::UInt32Array> height_, width_;
  std::shared_ptr<arrow::UInt8Array> mode_;
  // fixed-shape
  std::shared_ptr<const FixedShapeImageType> fixed_type_;
  const uint8_t* fixed_values_ = nullptr;
};

/// Builds a variable-shape Image column (type ketch.image with the given mode, or mixed).
class ImageArrayBuilder {
 public:
  explicit ImageArrayBuilder(std::optional<ImageMode> mode);
  arrow::Status Reserve(int64_t rows, int64_t bytes);
  arrow::Status Append(const ImageView& image);
  /// Room for the next row's pixels (`bytes` of them) at the returned pointer, valid until the
  /// next call; the row exists once CommitRow says its shape. Decoders write straight into the
  /// column this way, without a copy or a zero-fill; one that fails just appends a null instead.
  arrow::Result<uint8_t*> PrepareRow(int64_t bytes);
  /// Appends the row whose height*width*channels pixels were written at PrepareRow's pointer.
  arrow::Status CommitRow(int32_t height, int32_t width, ImageMode mode);
  arrow::Status AppendNull();
  arrow::Result<std::shared_ptr<arrow::Array>> Finish();

 private:
  std::optional<ImageMode> mode_;
  arrow::TypedBufferBuilder<int64_t> offsets_;  // large_binary offsets, one more than rows
  arrow::BufferBuilder values_;                 // pixels of every row, back to back
  arrow::UInt16Builder channel_;
  arrow::UInt32Builder height_, width_;
  arrow::UInt8Builder mode_builder_;
  arrow::TypedBufferBuilder<bool> validity_;
  int64_t null_count_ = 0;
};

}  // namespace ketch
