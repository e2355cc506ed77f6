#pragma once

#include <arrow/extension_type.h>

#include <memory>
#include <string>

namespace ketch {

/// File column: a lazy reference to an object (local path, file://, http(s)://, s3://), Arrow
/// extension type "ketch.file" over struct<path: large_utf8, size: int64 (bytes; null = unknown)>.
/// Kernels read the object only when they need its contents (file_read), or a small range of it
/// (file_guess_mime_type).
class FileType : public arrow::ExtensionType {
 public:
  FileType() : arrow::ExtensionType(StorageType()) {}
  static std::shared_ptr<arrow::DataType> StorageType();

  std::string extension_name() const override { return "ketch.file"; }
  bool ExtensionEquals(const arrow::ExtensionType& other) const override {
    return other.extension_name() == extension_name();
  }
  std::shared_ptr<arrow::Array> MakeArray(std::shared_ptr<arrow::ArrayData> data) const override {
    return std::make_shared<arrow::ExtensionArray>(data);
  }
  arrow::Result<std::shared_ptr<arrow::DataType>> Deserialize(std::shared_ptr<arrow::DataType> storage_type,
                                                              const std::string& serialized) const override;
  std::string Serialize() const override { return ""; }
  std::string ToString(bool show_metadata = false) const override { return "File"; }
};

std::shared_ptr<arrow::DataType> file_type();
bool IsFileType(const arrow::DataType& type);

}  // namespace ketch
