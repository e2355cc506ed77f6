#pragma once

// FFmpeg's video frame decoder behind ketch::media::VideoFrameDecoder (libketch_media.so only).

#include <memory>
#include <optional>
#include <string>

#include "ketch/functions/media/video_decoder.h"
#include "media_engine/av_input.h"

struct SwsContext;

namespace ketch::media {

class FfmpegVideoFrameDecoder final : public VideoFrameDecoder {
 public:
  /// See VideoFrameDecoder::Open.
  static arrow::Result<std::unique_ptr<VideoFrameDecoder>> Open(std::shared_ptr<arrow::Buffer> bytes,
                                                                VideoFrameOptions options);
  ~FfmpegVideoFrameDecoder() override;
  FfmpegVideoFrameDecoder(const FfmpegVideoFrameDecoder&) = delete;
  FfmpegVideoFrameDecoder& operator=(const FfmpegVideoFrameDecoder&) = delete;

  arrow::Result<bool> Next(VideoFrameSink* sink) override;
  int64_t dropped_packets() const override { return dropped_packets_; }
  int64_t decoded_frames() const override { return decoded_frames_; }

 private:
  FfmpegVideoFrameDecoder() = default;
  /// Whether `frame_` is emitted, and its index.
  std::optional<int64_t> Select();
  /// For a part of a split video: demuxes the packets of `bytes` to set the part's pts bounds,
  /// the counter and the next sample time (VideoFrameOptions::range_index).
  arrow::Status PlanRange(std::shared_ptr<arrow::Buffer> bytes);
  arrow::Status Emit(int64_t index, VideoFrameSink* sink);
  /// Converts (and resizes) `frame_` to RGB24 into the sink's buffer of `bytes`.
  arrow::Status Scale(int out_width, int out_height, int64_t bytes, VideoFrameSink* sink);

  VideoFrameOptions options_;
  std::unique_ptr<AvInput> input_;
  CodecContextPtr codec_;
  FramePtr frame_;
  PacketPtr packet_;
  SwsContext* scaler_ = nullptr;
  int stream_index_ = -1;
  AVRational time_base_{0, 1};
  std::string time_base_text_;
  std::optional<double> fps_;
  int64_t start_pts_ = 0;
  std::optional<double> next_sample_time_;
  double epsilon_ = 1e-9;
  int64_t counter_ = 0;
  std::optional<int64_t> range_begin_pts_;  // a split part's first frame pts (inclusive)
  std::optional<int64_t> range_end_pts_;    // the next part's first frame pts (exclusive)
  int64_t decoded_frames_ = 0;
  int64_t dropped_packets_ = 0;
  int64_t output_bytes_ = 0;
  bool draining_ = false;
  bool finished_ = false;
};

}  // namespace ketch::media
