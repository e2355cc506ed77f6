#include "ketch/types/image_type.h"

#include <arrow/api.h>

#include <mutex>
#include <sstream>

#include "ketch/types/file_type.h"

namespace ketch {

int32_t ModeChannels(ImageMode mode) { return static_cast<int32_t>(mode); }

std::string ModeName(ImageMode mode) {
  switch (mode) {
    case ImageMode::kL:
      return "L";
    case ImageMode::kLA:
      return "LA";
    case ImageMode::kRGB:
      return "RGB";
    case ImageMode::kRGBA:
      return "RGBA";
  }
  return "?";
}

arrow::Result<ImageMode> ParseMode(const std::string& name) {
  if (name == "L") return ImageMode::kL;
  if (name == "LA") return ImageMode::kLA;
  if (name == "RGB") return ImageMode::kRGB;
  if (name == "RGBA") return ImageMode::kRGBA;
  return arrow::Status::Invalid("unsupported image mode '", name, "': supported modes are L, LA, RGB, RGBA");
}

arrow::Result<ImageMode> ModeForChannels(int32_t channels) {
  if (channels >= 1 && channels <= 4) return static_cast<ImageMode>(channels);
  return arrow::Status::Invalid("no image mode has ", channels, " channels");
}

// ---- ImageType -------------------------------------------------------------------------------------

ImageType::ImageType(std::optional<ImageMode> mode) : arrow::ExtensionType(StorageType()), mode_(mode) {}

std::shared_ptr<arrow::DataType> ImageType::StorageType() {
  static const auto storage = arrow::struct_({
      arrow::field("data", arrow::large_binary()),
      arrow::field("channel", arrow::uint16()),
      arrow::field("height", arrow::uint32()),
      arrow::field("width", arrow::uint32()),
      arrow::field("mode", arrow::uint8()),
  });
  return storage;
}

bool ImageType::ExtensionEquals(const arrow::ExtensionType& other) const {
  if (other.extension_name() != extension_name()) return false;
  return static_cast<const ImageType&>(other).mode_ == mode_;
}

std::shared_ptr<arrow::Array> ImageType::MakeArray(std::shared_ptr<arrow::ArrayData> data) const {
  return std::make_shared<arrow::ExtensionArray>(data);
}

std::string ImageType::Serialize() const { return mode_ ? ModeName(*mode_) : ""; }

arrow::Result<std::shared_ptr<arrow::DataType>> ImageType::Deserialize(
    std::shared_ptr<arrow::DataType> storage_type, const std::string& serialized) const {
  if (!storage_type->Equals(*StorageType())) {
    return arrow::Status::Invalid("ketch.image: unexpected storage type ", storage_type->ToString());
  }
  if (serialized.empty()) return image_type(std::nullopt);
  ARROW_ASSIGN_OR_RAISE(auto mode, ParseMode(serialized));
  return image_type(mode);
}

std::string ImageType::ToString(bool) const {
  return mode_ ? "Image[" + ModeName(*mode_) + "]" : "Image[MIXED]";
}

// ---- FixedShapeImageType ---------------------------------------------------------------------------

FixedShapeImageType::FixedShapeImageType(ImageMode mode, int32_t height, int32_t width)
    : arrow::ExtensionType(arrow::fixed_size_list(arrow::uint8(), height * width * ModeChannels(mode))),
      mode_(mode),
      height_(height),
      width_(width) {}

bool FixedShapeImageType::ExtensionEquals(const arrow::ExtensionType& other) const {
  if (other.extension_name() != extension_name()) return false;
  const auto& o = static_cast<const FixedShapeImageType&>(other);
  return o.mode_ == mode_ && o.height_ == height_ && o.width_ == width_;
}

std::shared_ptr<arrow::Array> FixedShapeImageType::MakeArray(std::shared_ptr<arrow::ArrayData> data) const {
  return std::make_shared<arrow::ExtensionArray>(data);
}

std::string FixedShapeImageType::Serialize() const {
  std::ostringstream out;
  out << ModeName(mode_) << ";" << height_ << ";" << width_;
  return out.str();
}

arrow::Result<std::shared_ptr<arrow::DataType>> FixedShapeImageType::Deserialize(
    std::shared_ptr<arrow::DataType> storage_type, const std::string& serialized) const {
  auto first = serialized.find(';');
  auto second = serialized.find(';', first + 1);
  if (first == std::string::npos || second == std::string::npos) {
    return arrow::Status::Invalid("ketch.fixed_shape_image: bad metadata '", serialized, "'");
  }
  ARROW_ASSIGN_OR_RAISE(auto mode, ParseMode(serialized.substr(0, first)));
  int32_t height = std::stoi(serialized.substr(first + 1, second - first - 1));
  int32_t width = std::stoi(serialized.substr(second + 1));
  auto type = fixed_shape_image_type(mode, height, width);
  if (!storage_type->Equals(*static_cast<const arrow::ExtensionType&>(*type).storage_type())) {
    return arrow::Status::Invalid("ketch.fixed_shape_image: storage ", storage_type->ToString(),
                                  " does not match ", serialized);
  }
  return type;
}

std::string FixedShapeImageType::ToString(bool) const {
  std::ostringstream out;
  out << "FixedShapeImage[" << ModeName(mode_) << "; " << height_ << " x " << width_ << "]";
  return out.str();
}

// ---- helpers ---------------------------------------------------------------------------------------

std::shared_ptr<arrow::DataType> image_type(std::optional<ImageMode> mode) {
  return std::make_shared<ImageType>(mode);
}

std::shared_ptr<arrow::DataType> fixed_shape_image_type(ImageMode mode, int32_t height, int32_t width) {
  return std::make_shared<FixedShapeImageType>(mode, height, width);
}

bool IsImageType(const arrow::DataType& type) {
  if (type.id() != arrow::Type::EXTENSION) return false;
  const auto& name = static_cast<const arrow::ExtensionType&>(type).extension_name();
  return name == "ketch.image" || name == "ketch.fixed_shape_image";
}

arrow::Status RegisterExtensionTypes() {
  static std::once_flag once;
  static arrow::Status status;
  std::call_once(once, [] {
    for (const auto& type :
         {image_type(std::nullopt), fixed_shape_image_type(ImageMode::kL, 1, 1), file_type()}) {
      auto ext = std::static_pointer_cast<arrow::ExtensionType>(type);
      if (arrow::GetExtensionType(ext->extension_name()) == nullptr) {
        auto st = arrow::RegisterExtensionType(ext);
        if (!st.ok()) status = st;
      }
    }
  });
  return status;
}

}  // namespace ketch
