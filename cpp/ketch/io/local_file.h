#pragma once

#include <arrow/io/file.h>
#include <arrow/result.h>
#include <arrow/status.h>

#include <memory>
#include <string>
#include <string_view>

namespace ketch::io {

/// Why a local file operation failed in the OS's words ("Permission denied", "No space left on
/// device") when `status` carries an errno (Arrow's file streams attach one); else its message.
std::string OsReason(const arrow::Status& status);

/// The status's message, with the operating system's reason appended when the status carries an
/// errno (Arrow keeps it in the status detail, outside message()): "Failed to open local file
/// '/x': No such file or directory".
std::string MessageWithOsReason(const arrow::Status& status);

/// IOError "<what> '<path>': <OS reason>": errors about local writes name the user's path and
/// the cause, never the hidden temporary file the bytes went to first.
arrow::Status LocalWriteError(std::string_view what, const std::string& path, const arrow::Status& cause);

/// The hidden temporary beside `path` that an atomic write goes through: "dir/.name.tmp".
std::string TemporaryPathFor(const std::string& path);

/// A local file that appears at its path only when committed: bytes go to TemporaryPathFor(path)
/// and Commit renames it into place. Destroyed uncommitted (an error anywhere), it deletes the
/// temporary, so a failed write leaves no `.tmp` file behind. Errors name `path` and the OS reason.
class AtomicLocalFile {
 public:
  /// Opens the temporary for writing. `what` prefixes errors (e.g. "write_parquet: cannot write").
  static arrow::Result<std::unique_ptr<AtomicLocalFile>> Open(std::string path, std::string what);
  ~AtomicLocalFile();
  AtomicLocalFile(const AtomicLocalFile&) = delete;
  AtomicLocalFile& operator=(const AtomicLocalFile&) = delete;

  /// The stream to write (the temporary file).
  const std::shared_ptr<arrow::io::FileOutputStream>& stream() const { return stream_; }
  /// `status` reworded to name the user's path and the OS reason (for errors of stream() writes).
  arrow::Status Error(const arrow::Status& status) const { return LocalWriteError(what_, path_, status); }
  /// Closes the stream (if still open) and renames the temporary to the path.
  arrow::Status Commit();
  const std::string& path() const { return path_; }

 private:
  AtomicLocalFile(std::string path, std::string what);
  std::string path_;
  std::string temp_path_;
  std::string what_;
  std::shared_ptr<arrow::io::FileOutputStream> stream_;
  bool committed_ = false;
};

/// Writes `size` bytes to the local `path` atomically (AtomicLocalFile).
arrow::Status WriteLocalFileAtomically(const std::string& path, const uint8_t* data, int64_t size,
                                       std::string what);

}  // namespace ketch::io
