#pragma once

#include <arrow/buffer.h>
#include <arrow/result.h>
#include <arrow/status.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ketch/functions/media/av_limits.h"

namespace ketch::media {

/// What PyAV tells Daft's `VideoFile.metadata()` about the first video stream, by Daft's rules.
/// A field is nullopt when the container does not say.
struct VideoMetadata {
  std::optional<int64_t> width;
  std::optional<int64_t> height;
  /// Frames per second: the stream's average rate, else libavformat's guessed rate.
  std::optional<double> fps;
  /// Seconds: the container's duration, else the stream's duration in its time base.
  std::optional<double> duration;
  /// The stream's frame count from the header, else round(duration * fps) (half to even).
  std::optional<int64_t> frame_count;
  /// Seconds per tick of the stream's timestamps (pts, dts, durations).
  std::optional<double> time_base;
};

/// Reads the metadata of one encoded video object from its headers (no frame is decoded).
/// A container with no video stream gives all fields nullopt (Daft's behaviour). Errors: Invalid
/// for empty bytes, bytes no container libavformat knows, or a single image (a JPEG renamed .mp4
/// is "not a video container"); IOError when `limits.deadline` passes.
arrow::Result<VideoMetadata> ReadVideoMetadata(std::shared_ptr<arrow::Buffer> bytes, const AvLimits& limits);

/// Which frames a VideoFrameDecoder emits and how (Daft's `VideoFile.frames` rules).
struct VideoFrameOptions {
  /// Seconds. The decoder seeks to the keyframe at or before it, then skips frames before it.
  double start_time = 0;
  /// Seconds, inclusive; decoding stops at the first frame after it.
  std::optional<double> end_time;
  /// Output size in pixels (both or neither); the scaler (libswscale, bilinear as PyAV's
  /// `reformat`) resizes while converting to RGB24. nullopt: the frame's own size.
  std::optional<int> width;
  std::optional<int> height;
  /// true: keyframes only (the decoder skips the others, AVDISCARD_NONKEY); false: non-keyframes
  /// only; nullopt: all frames.
  std::optional<bool> is_key_frame;
  /// Seconds > 0: emit the first frame at or after each of start_time, start_time + interval, ...
  /// (a frame within max(1e-9, interval * 1e-6) of a target counts as reaching it).
  std::optional<double> sample_interval_seconds;
  /// Frame index rule. false (video_frames): round((pts - stream start) * time_base * fps), falling
  /// back to a count of the frames decoded since the seek. true (read_video_frames): the count of
  /// every frame decoded from the start.
  bool counter_index = false;
  /// Emit only the frame whose index (the pts rule above) is this one, the first at or after it for
  /// a variable frame rate; the decoder seeks to the keyframe before it and stops after it.
  std::optional<int64_t> only_index;
  /// false: frames are selected and their fields reported, but no pixels are converted (the sink's
  /// Prepare is never called; VideoFrameInfo's width and height are still the output size). For
  /// scans that read no `data` column.
  bool convert_pixels = true;
  /// Threads of the codec (FFmpeg's frame/slice threads; 1: the calling thread only). More than one
  /// delays output by about that many frames, so a caller that stops early decodes a few more.
  int decoder_threads = 1;
  /// Refuse (Invalid) a stream whose width * height exceeds this, before any frame is allocated.
  int64_t max_pixels = INT64_MAX;
  /// Refuse (Invalid) once the RGB bytes emitted for this object exceed this (0: no limit).
  int64_t max_output_bytes = 0;
  /// When set and true, decoding stops with Cancelled.
  const std::atomic<bool>* cancelled = nullptr;
  AvLimits limits;
  /// Part `range_index` of `range_count` (> 1) of the selected frames (one long video split into
  /// scan tasks), for counter_index with start_time 0 only. The decoder first demuxes every packet
  /// of the stream (no decoding) to learn the frames' timestamps, cuts the selected ones into
  /// `range_count` runs of nearly equal count, seeks to its run and decodes only that; frame
  /// indexes and the sample_interval_seconds targets continue from the frames before the run, so
  /// the parts in order give what one decoder gives (a damaged packet aside). A stream whose packets
  /// lack timestamps cannot be cut: part 0 then decodes everything and the others nothing.
  int32_t range_index = 0;
  int32_t range_count = 1;
};

/// One emitted frame's fields (Daft's per-frame schema). Times are in the stream's time base.
struct VideoFrameInfo {
  int64_t frame_index = 0;
  /// Seconds (pts * time_base); nullopt when the frame has no timestamp.
  std::optional<double> frame_time;
  /// The time base as a reduced fraction, "1/12800" (Python's str(Fraction)).
  std::string frame_time_base;
  std::optional<int64_t> frame_pts;
  std::optional<int64_t> frame_dts;
  std::optional<int64_t> frame_duration;
  bool is_key_frame = false;
  int32_t width = 0;
  int32_t height = 0;
};

/// Where a VideoFrameDecoder writes frames: the pixels go straight into the caller's buffer.
class VideoFrameSink {
 public:
  virtual ~VideoFrameSink() = default;
  /// Room for one frame's RGB24 pixels (height * width * 3 bytes, rows packed), valid until Commit.
  virtual arrow::Result<uint8_t*> Prepare(int64_t bytes) = 0;
  /// The frame whose pixels were written at Prepare's pointer.
  virtual arrow::Status Commit(const VideoFrameInfo& info) = 0;
};

/// Decodes the first video stream of one encoded object (MP4/H.264, WebM/VP8-VP9, MKV, AVI/MJPEG,
/// ... whatever Debian's FFmpeg reads) frame by frame, pulling packets only as frames are asked
/// for: a caller that stops after 10 frames decoded about 10 frames (plus the codec's delay).
///
/// Damaged packets in the middle do not stop decoding: the decoder drops them and goes on, so the
/// frames before and after come out once the codec resyncs; `dropped_packets()` counts them.
///
/// Errors: Invalid for empty or unknown bytes, a single image, "no video stream", a header over
/// `max_pixels`, output over `max_output_bytes`, or a decoder that fails over and over; IOError
/// when the deadline passes; Cancelled when `cancelled` turns true.
class VideoFrameDecoder {
 public:
  /// A decoder over `bytes` (FFmpeg's, in libketch_media.so: IOError naming the libraries to
  /// install when they cannot be loaded; Invalid for bad options or input).
  static arrow::Result<std::unique_ptr<VideoFrameDecoder>> Open(std::shared_ptr<arrow::Buffer> bytes,
                                                                VideoFrameOptions options);
  virtual ~VideoFrameDecoder() = default;

  /// Decodes until one frame is emitted into `sink` (true) or the selection ends (false).
  virtual arrow::Result<bool> Next(VideoFrameSink* sink) = 0;

  /// Packets the decoder refused, and damaged reads the demuxer skipped.
  virtual int64_t dropped_packets() const = 0;
  /// Frames decoded so far (emitted or skipped).
  virtual int64_t decoded_frames() const = 0;
};

}  // namespace ketch::media
