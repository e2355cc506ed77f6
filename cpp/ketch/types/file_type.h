#pragma once

#include <arrow/extension_type.h>

#include <memory>
#include <string>

namespace ketch {

/// File column: a lazy reference to an object (local path, file://, http(s)://, s3://), Arrow
/// extension type "ketch.file" over struct<path: large_utf8, size: int64 (bytes; null = unknown)>.
/// Kernels read the object only when they need its contents (file_read), or a small range of it
/// (file_guess_mime_type).
///
/// A File column may carry a media type, Daft's File[Audio] / File[Video] (`ketch.functions.audio_file`,
/// `video_file`): the same storage, serialized as "audio" / "video" in the extension metadata. In
/// Python its values are `ketch.AudioFile` / `ketch.VideoFile` objects.
class FileType : public arrow::ExtensionType {
 public:
  /// `media`: "" (any file), "audio" or "video".
  explicit FileType(std::string media = "") : arrow::ExtensionType(StorageType()), media_(std::move(media)) {}
  static std::shared_ptr<arrow::DataType> StorageType();

  const std::string& media() const { return media_; }
  std::string extension_name() const override { return "ketch.file"; }
  bool ExtensionEquals(const arrow::ExtensionType& other) const override {
    return other.extension_name() == extension_name() && static_cast<const FileType&>(other).media_ == media_;
  }
  std::shared_ptr<arrow::Array> MakeArray(std::shared_ptr<arrow::ArrayData> data) const override {
    return std::make_shared<arrow::ExtensionArray>(data);
  }
  arrow::Result<std::shared_ptr<arrow::DataType>> Deserialize(std::shared_ptr<arrow::DataType> storage_type,
                                                              const std::string& serialized) const override;
  std::string Serialize() const override { return media_; }
  std::string ToString(bool show_metadata = false) const override;

 private:
  std::string media_;
};

/// The File type; `media` "" (any), "audio" or "video" (Invalid for anything else from Deserialize).
std::shared_ptr<arrow::DataType> file_type(const std::string& media = "");
bool IsFileType(const arrow::DataType& type);

}  // namespace ketch
