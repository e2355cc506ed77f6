#include "ketch/types/file_type.h"

#include <arrow/api.h>

namespace ketch {

std::shared_ptr<arrow::DataType> FileType::StorageType() {
  static const auto storage =
      arrow::struct_({arrow::field("path", arrow::large_utf8()), arrow::field("size", arrow::int64())});
  return storage;
}

arrow::Result<std::shared_ptr<arrow::DataType>> FileType::Deserialize(
    std::shared_ptr<arrow::DataType> storage_type, const std::string& serialized) const {
  if (!storage_type->Equals(*StorageType())) {
    return arrow::Status::Invalid("ketch.file: unexpected storage type ", storage_type->ToString());
  }
  if (serialized != "" && serialized != "audio" && serialized != "video") {
    return arrow::Status::Invalid("ketch.file: unknown media type '", serialized, "'");
  }
  return file_type(serialized);
}

std::string FileType::ToString(bool) const {
  if (media_ == "audio") return "File[Audio]";
  if (media_ == "video") return "File[Video]";
  return "File";
}

std::shared_ptr<arrow::DataType> file_type(const std::string& media) {
  static const auto any = std::make_shared<FileType>();
  static const auto audio = std::make_shared<FileType>("audio");
  static const auto video = std::make_shared<FileType>("video");
  if (media == "audio") return audio;
  if (media == "video") return video;
  return any;
}

bool IsFileType(const arrow::DataType& type) {
  return type.id() == arrow::Type::EXTENSION &&
         static_cast<const arrow::ExtensionType&>(type).extension_name() == "ketch.file";
}

}  // namespace ketch
