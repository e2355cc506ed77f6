#pragma once

#include <arrow/api.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "ketch/functions/media/video_decoder.h"
#include "ketch/functions/media/video_frame_fields.h"
#include "ketch/io/formats/format_options.h"

namespace ketch::media {

/// The columns of read_video_frames, in Daft's order: path (large_string), frame_index (int64),
/// frame_time (float64, seconds), frame_time_base (string, "1/12800"), frame_pts, frame_dts,
/// frame_duration (int64, time-base units), is_key_frame (bool), data (FixedShapeImage[RGB;
/// height x width]).
std::shared_ptr<arrow::Schema> VideoFramesSchema(int32_t height, int32_t width);

/// The decoder options read_video_frames' scan uses for `options` (Daft's counter frame index).
/// Invalid for a size that is not positive, a negative start, an end before the start, or a
/// sample interval that is not positive.
arrow::Result<VideoFrameOptions> VideoScanFrameOptions(const VideoScanOptions& options);

/// The frames of one video file as record batches of read_video_frames' columns, decoded as they
/// are asked for (VideoFrameDecoder): a caller that stops after 10 frames decoded about 10. The
/// encoded bytes are held whole (read once, as the media kernels do); only decoded frames stream.
/// Not thread-safe: one caller at a time.
class VideoFrameStream : public VideoFrameSink {
 public:
  /// Opens the decoder over `bytes` (the file at `path`). `columns`: the names of
  /// VideoFramesSchema's columns to produce, in the order batches carry them; without "data" no
  /// pixel is converted. `cancelled` (may be null, not owned) stops decoding with Cancelled.
  /// Errors: those of VideoFrameDecoder::Open (not a video, no video stream, ...); KeyError for an
  /// unknown column. `decoder_threads`: the codec's threads (VideoFrameOptions::decoder_threads).
  /// `range_index` of `range_count`: the part of the video to decode (ScanTask::range_index).
  static arrow::Result<std::unique_ptr<VideoFrameStream>> Open(
      std::string path, std::shared_ptr<arrow::Buffer> bytes, const VideoScanOptions& options,
      const std::vector<std::string>& columns, const std::atomic<bool>* cancelled, int decoder_threads = 1,
      int32_t range_index = 0, int32_t range_count = 1);

  /// Decodes up to `max_frames` (>= 1) selected frames into one batch; null at the end of the
  /// selection (a batch is never empty).
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Next(int64_t max_frames);

  /// Bytes one frame's row holds: its RGB pixels when `data` is produced, else a small constant.
  int64_t row_bytes() const { return row_bytes_; }
  /// Frames decoded so far (selected or skipped) and packets dropped as damaged.
  int64_t decoded_frames() const { return decoder_->decoded_frames(); }
  int64_t dropped_packets() const { return decoder_->dropped_packets(); }

  arrow::Result<uint8_t*> Prepare(int64_t bytes) override;
  arrow::Status Commit(const VideoFrameInfo& info) override;

 private:
  VideoFrameStream() = default;
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Finish();

  std::string path_;
  std::shared_ptr<arrow::Schema> schema_;  // the produced columns
  std::shared_ptr<arrow::DataType> image_type_;
  std::unique_ptr<VideoFrameDecoder> decoder_;
  int64_t row_bytes_ = 0;
  bool data_ = false;
  int64_t rows_ = 0;
  arrow::BufferBuilder pixels_;
  FrameFieldBuilders frame_fields_;
};

}  // namespace ketch::media
