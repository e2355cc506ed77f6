#include "ketch/types/file_type.h"

#include <arrow/api.h>

namespace ketch {

std::shared_ptr<arrow::DataType> FileType::StorageType() {
  static const auto storage =
      arrow::struct_({arrow::field("path", arrow::large_utf8()), arrow::field("size", arrow::int64())});
  return storage;
}

arrow::Result<std::shared_ptr<arrow::DataType>> FileType::Deserialize(
    std::shared_ptr<arrow::DataType> storage_type, const std::string&) const {
  if (!storage_type->Equals(*StorageType())) {
    return arrow::Status::Invalid("ketch.file: unexpected storage type ", storage_type->ToString());
  }
  return file_type();
}

std::shared_ptr<arrow::DataType> file_type() {
  static const auto type = std::make_shared<FileType>();
  return type;
}

bool IsFileType(const arrow::DataType& type) {
  return type.id() == arrow::Type::EXTENSION &&
         static_cast<const arrow::ExtensionType&>(type).extension_name() == "ketch.file";
}

}  // namespace ketch
