#pragma once

#include <arrow/extension_type.h>
#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ketch {

/// Pixel layout of an image: 8 bits per channel, channels interleaved (HWC).
enum class ImageMode : uint8_t { kL = 1, kLA = 2, kRGB = 3, kRGBA = 4 };

/// Number of channels of a mode (L=1, LA=2, RGB=3, RGBA=4).
int32_t ModeChannels(ImageMode mode);
/// "L", "LA", "RGB" or "RGBA".
std::string ModeName(ImageMode mode);
/// Parses a mode name; Invalid for anything else (the message lists the supported modes).
arrow::Result<ImageMode> ParseMode(const std::string& name);
/// The mode with that many channels (1→L, 2→LA, 3→RGB, 4→RGBA); Invalid otherwise.
arrow::Result<ImageMode> ModeForChannels(int32_t channels);

/// Variable-shape image column: Arrow extension type "ketch.image" over
/// struct<data: large_binary, channel: uint16, height: uint32, width: uint32, mode: uint8>.
/// `data` holds height*width*channel bytes, row-major HWC. The type may pin a mode (all rows share
/// it) or leave it open (mode per row). Same fields as Daft's Image type.
class ImageType : public arrow::ExtensionType {
 public:
  explicit ImageType(std::optional<ImageMode> mode);

  static std::shared_ptr<arrow::DataType> StorageType();
  std::optional<ImageMode> mode() const { return mode_; }

  std::string extension_name() const override { return "ketch.image"; }
  bool ExtensionEquals(const arrow::ExtensionType& other) const override;
  std::shared_ptr<arrow::Array> MakeArray(std::shared_ptr<arrow::ArrayData> data) const override;
  arrow::Result<std::shared_ptr<arrow::DataType>> Deserialize(std::shared_ptr<arrow::DataType> storage_type,
                                                              const std::string& serialized) const override;
  std::string Serialize() const override;
  std::string ToString(bool show_metadata = false) const override;

 private:
  std::optional<ImageMode> mode_;
};

/// Fixed-shape image column: extension type "ketch.fixed_shape_image" over
/// fixed_size_list<uint8>[height*width*channels]; all rows share mode, height and width, so the
/// column is one contiguous (N, H, W, C) uint8 block.
class FixedShapeImageType : public arrow::ExtensionType {
 public:
  FixedShapeImageType(ImageMode mode, int32_t height, int32_t width);

  ImageMode mode() const { return mode_; }
  int32_t height() const { return height_; }
  int32_t width() const { return width_; }
  int32_t channels() const { return ModeChannels(mode_); }

  std::string extension_name() const override { return "ketch.fixed_shape_image"; }
  bool ExtensionEquals(const arrow::ExtensionType& other) const override;
  std::shared_ptr<arrow::Array> MakeArray(std::shared_ptr<arrow::ArrayData> data) const override;
  arrow::Result<std::shared_ptr<arrow::DataType>> Deserialize(std::shared_ptr<arrow::DataType> storage_type,
                                                              const std::string& serialized) const override;
  std::string Serialize() const override;
  std::string ToString(bool show_metadata = false) const override;

 private:
  ImageMode mode_;
  int32_t height_;
  int32_t width_;
};

std::shared_ptr<arrow::DataType> image_type(std::optional<ImageMode> mode = std::nullopt);
std::shared_ptr<arrow::DataType> fixed_shape_image_type(ImageMode mode, int32_t height, int32_t width);

/// True for ketch.image and ketch.fixed_shape_image.
bool IsImageType(const arrow::DataType& type);

/// Registers the Ketch extension types with Arrow's global registry (idempotent, thread-safe), so
/// Parquet and IPC round trips and pyarrow see them.
arrow::Status RegisterExtensionTypes();

}  // namespace ketch
