#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ketch {

/// kLance: a Lance dataset read through pylance (see lance_format.h); its "files" are fragments.
/// kVideo: video files decoded frame by frame into read_video_frames' rows (one frame per row; see
/// ketch/functions/media/video_scan.h); never written.
enum class FileFormat { kParquet, kCsv, kJson, kLance, kVideo };
std::string FileFormatName(FileFormat format);

/// Parsing options of read_csv (Daft's names in Python: has_headers, delimiter, quote, escape_char,
/// double_quote, allow_variable_columns).
struct CsvOptions {
  bool has_header = true;
  char delimiter = ',';
  char quote = '"';
  bool quoting = true;
  char escape = 0;  ///< 0 = no escape character
  bool double_quote = true;
  /// Rows with too few or too many fields: false = an error naming the file and row; true = short
  /// rows are padded with nulls and extra fields are dropped (Daft's allow_variable_columns).
  bool allow_variable_columns = false;
};

/// What read_video_frames decodes (Daft's arguments, plus a time range): every frame is resized
/// to image_height x image_width by the decoder's scaler while converted to RGB.
struct VideoScanOptions {
  int32_t image_height = 0;  ///< pixels, > 0
  int32_t image_width = 0;   ///< pixels, > 0
  /// true: keyframes only (the others are not decoded); false: the others only; nullopt: all.
  std::optional<bool> is_key_frame;
  double start_time = 0;                          ///< seconds; the decoder seeks to it
  std::optional<double> end_time;                 ///< seconds, inclusive
  std::optional<double> sample_interval_seconds;  ///< > 0: the first frame at or after each k * interval
};

}  // namespace ketch
