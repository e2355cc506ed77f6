#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/frame.h>
}

#include <arrow/buffer.h>
#include <arrow/result.h>
#include <arrow/status.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ketch/functions/media/av_limits.h"

namespace ketch::media {

/// RAII owners of FFmpeg objects (libavformat / libavcodec / libavutil, FFmpeg 5.1+).
struct FrameDeleter {
  void operator()(AVFrame* frame) const { av_frame_free(&frame); }
};
struct PacketDeleter {
  void operator()(AVPacket* packet) const { av_packet_free(&packet); }
};
struct CodecContextDeleter {
  void operator()(AVCodecContext* context) const { avcodec_free_context(&context); }
};
using FramePtr = std::unique_ptr<AVFrame, FrameDeleter>;
using PacketPtr = std::unique_ptr<AVPacket, PacketDeleter>;
using CodecContextPtr = std::unique_ptr<AVCodecContext, CodecContextDeleter>;

/// FFmpeg's text for an AVERROR code ("Invalid data found when processing input").
std::string AvErrorString(int code);
/// Status for a failed FFmpeg call: Invalid for bad data (AVERROR_INVALIDDATA, EOF in a header),
/// IOError for AVERROR_EXIT (the deadline), else IOError; the message is "<what>: <FFmpeg's text>".
arrow::Status AvStatus(int code, std::string_view what);

/// A libavformat demuxer over encoded bytes held in memory (one object of a File or binary column),
/// read through a custom AVIOContext: no temporary file, no second copy of the bytes. Seeks are
/// served from memory, so a seek to a timestamp reads no packet before it.
///
/// Errors (arrow::Status, never an exception): Invalid naming the cause when the bytes are empty
/// or are no container libavformat knows ("Invalid data found when processing input"); IOError
/// when the deadline passes.
class AvInput {
 public:
  /// Opens the container and reads its stream parameters (avformat_find_stream_info).
  static arrow::Result<std::unique_ptr<AvInput>> Open(std::shared_ptr<arrow::Buffer> bytes,
                                                      const AvLimits& limits = {});
  ~AvInput();
  AvInput(const AvInput&) = delete;
  AvInput& operator=(const AvInput&) = delete;

  AVFormatContext* format() const { return format_; }
  /// The encoded bytes being read.
  const arrow::Buffer& bytes() const { return *bytes_; }
  /// The demuxer's short name ("wav", "mp3", "ogg", "flac", "mov,mp4,m4a,3gp,3g2,mj2", ...).
  std::string_view format_name() const;
  /// Whether the demuxer reads single images (image2 and the "*_pipe" demuxers): a JPEG renamed
  /// .mp4 opens as such, and media kernels refuse it as "not a video/audio container".
  bool is_image_container() const;

  /// Index of the stream libavformat ranks best of `type`; Invalid "no <type> stream" if none.
  arrow::Result<int> BestStream(AVMediaType type) const;
  /// A decoder opened for stream `index` (`threads` = 0: FFmpeg's choice, 1: the calling thread).
  arrow::Result<CodecContextPtr> OpenDecoder(int index, int threads = 1) const;

  /// Reads the next packet into `packet`; false at the end of the input.
  arrow::Result<bool> ReadPacket(AVPacket* packet);

  /// Whether the deadline has passed (also what libavformat's interrupt callback asks).
  bool TimedOut() const;

 private:
  AvInput() = default;

  std::shared_ptr<arrow::Buffer> bytes_;
  int64_t position_ = 0;
  AvLimits limits_;
  AVFormatContext* format_ = nullptr;
  AVIOContext* io_ = nullptr;

  static int Read(void* opaque, uint8_t* buf, int size);
  static int64_t Seek(void* opaque, int64_t offset, int whence);
  static int Interrupt(void* opaque);
};

}  // namespace ketch::media
