#include "media_engine/video_decoder_ffmpeg.h"

#include "media_engine/media_ffmpeg.h"

extern "C" {
#include <libavutil/mathematics.h>
#include <libavutil/pixdesc.h>
#include <libavutil/rational.h>
#include <libavutil/version.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ketch::media {
namespace {

bool Valid(AVRational r) { return r.num != 0 && r.den != 0; }

// Python's str(Fraction(num, den)): reduced, and a whole number without "/1".
std::string FractionText(AVRational r) {
  int num = 0, den = 0;
  av_reduce(&num, &den, r.num, r.den, INT32_MAX);
  if (den == 1) return std::to_string(num);
  return std::to_string(num) + "/" + std::to_string(den);
}

// PyAV's stream.average_rate, else stream.guessed_rate (Daft's rule for fps).
std::optional<double> FramesPerSecond(AVFormatContext* format, AVStream* stream) {
  if (Valid(stream->avg_frame_rate)) return av_q2d(stream->avg_frame_rate);
  const AVRational guessed = av_guess_frame_rate(format, stream, nullptr);
  if (Valid(guessed)) return av_q2d(guessed);
  return std::nullopt;
}

bool IsKeyFrame(const AVFrame* frame) {
#ifdef AV_FRAME_FLAG_KEY
  return (frame->flags & AV_FRAME_FLAG_KEY) != 0;
#else
  return frame->key_frame != 0;
#endif
}

int64_t FrameDuration(const AVFrame* frame) {
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 30, 100)
  return frame->duration;
#else
  return frame->pkt_duration;
#endif
}

arrow::Result<std::unique_ptr<AvInput>> OpenVideo(std::shared_ptr<arrow::Buffer> bytes,
                                                  const AvLimits& limits) {
  ARROW_ASSIGN_OR_RAISE(auto input, AvInput::Open(std::move(bytes), limits));
  if (input->is_image_container()) {
    return arrow::Status::Invalid("not a video container: libavformat reads it as a single image (",
                                  input->format_name(), ")");
  }
  return input;
}

// A decoder that fails this many times in a row (no frame in between) is given up on.
constexpr int kMaxConsecutiveErrors = 64;

}  // namespace

arrow::Result<VideoMetadata> FfmpegReadVideoMetadata(std::shared_ptr<arrow::Buffer> bytes,
                                                     const AvLimits& limits) {
  ARROW_ASSIGN_OR_RAISE(auto input, OpenVideo(std::move(bytes), limits));
  VideoMetadata meta;
  AVFormatContext* format = input->format();
  // Daft takes the first video stream (not libavformat's "best" one).
  AVStream* stream = nullptr;
  for (unsigned i = 0; i < format->nb_streams; ++i) {
    if (format->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) {
      stream = format->streams[i];
      break;
    }
  }
  if (stream == nullptr) return meta;
  meta.width = stream->codecpar->width;
  meta.height = stream->codecpar->height;
  if (Valid(stream->time_base)) meta.time_base = av_q2d(stream->time_base);
  meta.fps = FramesPerSecond(format, stream);
  if (format->duration != AV_NOPTS_VALUE && format->duration > 0) {
    meta.duration = static_cast<double>(format->duration) / AV_TIME_BASE;
  } else if (stream->duration != AV_NOPTS_VALUE && stream->duration != 0) {
    meta.duration = static_cast<double>(stream->duration) * meta.time_base.value_or(1e-6);
  }
  if (stream->nb_frames > 0) {
    meta.frame_count = stream->nb_frames;
  } else if (meta.duration && meta.fps && *meta.duration != 0 && *meta.fps != 0) {
    meta.frame_count = static_cast<int64_t>(std::nearbyint(*meta.duration * *meta.fps));
  }
  return meta;
}

arrow::Result<std::unique_ptr<VideoFrameDecoder>> FfmpegVideoFrameDecoder::Open(
    std::shared_ptr<arrow::Buffer> bytes, VideoFrameOptions options) {
  if (options.width.has_value() != options.height.has_value()) {
    return arrow::Status::Invalid("width and height must be given together");
  }
  if (options.width && (*options.width <= 0 || *options.height <= 0 ||
                        int64_t{*options.width} * *options.height > options.max_pixels)) {
    return arrow::Status::Invalid("width and height must be positive and at most ", options.max_pixels,
                                  " pixels together, got ", *options.width, "x", *options.height);
  }
  if (options.sample_interval_seconds && !(*options.sample_interval_seconds > 0)) {
    return arrow::Status::Invalid("sample_interval_seconds must be positive, got ",
                                  *options.sample_interval_seconds);
  }
  if (options.range_count < 1 || options.range_index < 0 || options.range_index >= options.range_count) {
    return arrow::Status::Invalid("range ", options.range_index, " of ", options.range_count,
                                  " does not exist");
  }
  if (options.range_count > 1 && (!options.counter_index || options.start_time != 0 || options.only_index)) {
    return arrow::Status::Invalid("a video is split into ranges only for read_video_frames from its start");
  }
  std::unique_ptr<FfmpegVideoFrameDecoder> self(new FfmpegVideoFrameDecoder());
  const std::shared_ptr<arrow::Buffer> all_bytes = options.range_count > 1 ? bytes : nullptr;
  options.limits.max_video_pixels = std::min(options.limits.max_video_pixels, options.max_pixels);
  ARROW_ASSIGN_OR_RAISE(self->input_, OpenVideo(std::move(bytes), options.limits));
  AVFormatContext* format = self->input_->format();
  // Daft decodes the first video stream.
  for (unsigned i = 0; i < format->nb_streams; ++i) {
    if (format->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) {
      self->stream_index_ = static_cast<int>(i);
      break;
    }
  }
  if (self->stream_index_ < 0) {
    return arrow::Status::Invalid("no video stream in the ", self->input_->format_name(), " container");
  }
  AVStream* stream = format->streams[self->stream_index_];
  const AVCodecParameters* params = stream->codecpar;
  if (int64_t{params->width} * params->height > options.max_pixels) {
    return arrow::Status::Invalid("the video header claims ", params->width, "x", params->height,
                                  " pixels per frame, over the limit of ", options.max_pixels, " pixels");
  }
  // Every other stream's packets are dropped by the demuxer, not read and thrown away here.
  for (unsigned i = 0; i < format->nb_streams; ++i) {
    if (static_cast<int>(i) != self->stream_index_) format->streams[i]->discard = AVDISCARD_ALL;
  }
  ARROW_ASSIGN_OR_RAISE(self->codec_,
                        self->input_->OpenDecoder(self->stream_index_, std::max(1, options.decoder_threads)));
  if (options.is_key_frame.value_or(false)) self->codec_->skip_frame = AVDISCARD_NONKEY;
  self->time_base_ = stream->time_base;
  self->time_base_text_ = Valid(stream->time_base) ? FractionText(stream->time_base) : "";
  self->fps_ = FramesPerSecond(format, stream);
  self->start_pts_ = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time;
  if (options.sample_interval_seconds) {
    self->next_sample_time_ = options.start_time;
    self->epsilon_ = std::max(1e-9, *options.sample_interval_seconds * 1e-6);
  }
  // Seek to the keyframe at or before the first wanted frame; frames before it are skipped as
  // they decode. A failed seek leaves the demuxer at the start, which only costs time.
  std::optional<int64_t> seek_to;
  if (options.only_index) {
    if (*options.only_index < 0)
      return arrow::Status::Invalid("frame index must be >= 0, got ", *options.only_index);
    if (self->fps_ && Valid(self->time_base_) && *options.only_index > 0) {
      seek_to = self->start_pts_ + static_cast<int64_t>(std::floor(static_cast<double>(*options.only_index) /
                                                                   *self->fps_ / av_q2d(self->time_base_)));
    }
  } else if (options.start_time > 0 && Valid(self->time_base_)) {
    seek_to = static_cast<int64_t>(options.start_time / av_q2d(self->time_base_));
  }
  if (seek_to) av_seek_frame(format, self->stream_index_, *seek_to, AVSEEK_FLAG_BACKWARD);
  self->frame_.reset(av_frame_alloc());
  self->packet_.reset(av_packet_alloc());
  if (!self->frame_ || !self->packet_) return arrow::Status::OutOfMemory("av_frame_alloc / av_packet_alloc");
  self->options_ = std::move(options);
  if (self->options_.range_count > 1) ARROW_RETURN_NOT_OK(self->PlanRange(all_bytes));
  return self;
}

arrow::Status FfmpegVideoFrameDecoder::PlanRange(std::shared_ptr<arrow::Buffer> bytes) {
  // A second demuxer over the same bytes reads every packet of the stream: their timestamps are
  // the frames' (packets come in decode order; sorted they are the presentation order).
  ARROW_ASSIGN_OR_RAISE(auto input, OpenVideo(std::move(bytes), options_.limits));
  AVFormatContext* format = input->format();
  for (unsigned i = 0; i < format->nb_streams; ++i) {
    if (static_cast<int>(i) != stream_index_) format->streams[i]->discard = AVDISCARD_ALL;
  }
  struct Entry {
    int64_t pts;
    bool key;
  };
  std::vector<Entry> entries;
  PacketPtr packet(av_packet_alloc());
  if (!packet) return arrow::Status::OutOfMemory("av_packet_alloc");
  bool timestamps = true;
  while (true) {
    if (options_.cancelled != nullptr && options_.cancelled->load()) {
      return arrow::Status::Cancelled("the query was cancelled");
    }
    auto more = input->ReadPacket(packet.get());
    if (!more.ok()) {
      if (input->TimedOut()) return more.status();
      break;  // damaged or cut off: the decoder will stop there too
    }
    if (!*more) break;
    if (packet->stream_index == stream_index_) {
      const int64_t pts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
      if (pts == AV_NOPTS_VALUE) timestamps = false;
      entries.push_back(Entry{pts, (packet->flags & AV_PKT_FLAG_KEY) != 0});
    }
    av_packet_unref(packet.get());
  }
  const int32_t index = options_.range_index, count = options_.range_count;
  // Keyframes only: whether the codec really skips the others (and so whether they count) is the
  // codec's choice (VP9 decodes them all), so such a scan is not cut.
  const bool keys_only = options_.is_key_frame.value_or(false);
  if (!timestamps || !Valid(time_base_) || keys_only) {
    if (index > 0) finished_ = true;  // part 0 decodes it all
    return arrow::Status::OK();
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.pts < b.pts; });
  const double tb = av_q2d(time_base_);
  // The frames the selection may emit (before end_time; of the wanted kind).
  std::vector<size_t> selectable;  // positions in `entries`
  for (size_t i = 0; i < entries.size(); ++i) {
    const double time = static_cast<double>(entries[i].pts) * tb;
    if (options_.end_time && time > *options_.end_time) break;
    if (options_.is_key_frame && *options_.is_key_frame != entries[i].key) continue;
    selectable.push_back(i);
  }
  const size_t n = selectable.size();
  const size_t first = n * static_cast<size_t>(index) / static_cast<size_t>(count);
  const size_t last = n * static_cast<size_t>(index + 1) / static_cast<size_t>(count);
  if (first >= last) {
    finished_ = true;  // fewer frames than parts
    return arrow::Status::OK();
  }
  if (index + 1 < count && last < n) range_end_pts_ = entries[selectable[last]].pts;
  if (index == 0) return arrow::Status::OK();  // decodes from the start, as one decoder would
  const int64_t begin = entries[selectable[first]].pts;
  range_begin_pts_ = begin;
  // The frames before the part: the counter continues after them, and so does the sampling.
  for (const Entry& entry : entries) {
    if (entry.pts >= begin) break;
    ++counter_;
    if (next_sample_time_ && (!options_.is_key_frame || *options_.is_key_frame == entry.key)) {
      const double time = static_cast<double>(entry.pts) * tb;
      while (time + epsilon_ >= *next_sample_time_) *next_sample_time_ += *options_.sample_interval_seconds;
    }
  }
  av_seek_frame(input_->format(), stream_index_, begin, AVSEEK_FLAG_BACKWARD);
  return arrow::Status::OK();
}

FfmpegVideoFrameDecoder::~FfmpegVideoFrameDecoder() { sws_freeContext(scaler_); }

arrow::Result<bool> FfmpegVideoFrameDecoder::Next(VideoFrameSink* sink) {
  int errors = 0;
  while (!finished_) {
    if (options_.cancelled != nullptr && options_.cancelled->load()) {
      return arrow::Status::Cancelled("the query was cancelled");
    }
    int rc = avcodec_receive_frame(codec_.get(), frame_.get());
    if (rc == 0) {
      errors = 0;
      ++decoded_frames_;
      std::optional<int64_t> index = Select();
      if (index) {
        arrow::Status status = Emit(*index, sink);
        av_frame_unref(frame_.get());
        ARROW_RETURN_NOT_OK(status);
        if (options_.only_index) finished_ = true;
        return true;
      }
      av_frame_unref(frame_.get());
      continue;
    }
    if (rc == AVERROR_EOF) {
      finished_ = true;
      break;
    }
    if (rc != AVERROR(EAGAIN)) {
      // A frame the decoder could not produce (damaged data): count it and go on.
      if (rc == AVERROR(ENOMEM) || rc == AVERROR_EXIT) return AvStatus(rc, "decoding a video frame");
      ++dropped_packets_;
      if (++errors > kMaxConsecutiveErrors) return AvStatus(rc, "decoding video frames");
      continue;
    }
    if (draining_) {  // EAGAIN after the flush packet: nothing more will come.
      finished_ = true;
      break;
    }
    // The decoder wants input: the next packet of our stream, or the flush packet at the end.
    auto more = input_->ReadPacket(packet_.get());
    if (!more.ok()) {
      if (input_->TimedOut()) return more.status();
      // A damaged or cut-off container: decode what was read, then stop.
      ++dropped_packets_;
      draining_ = true;
      rc = avcodec_send_packet(codec_.get(), nullptr);
      continue;
    }
    if (!*more) {
      draining_ = true;
      avcodec_send_packet(codec_.get(), nullptr);
      continue;
    }
    if (packet_->stream_index != stream_index_) {
      av_packet_unref(packet_.get());
      continue;
    }
    if (packet_->flags & AV_PKT_FLAG_CORRUPT) ++dropped_packets_;
    rc = avcodec_send_packet(codec_.get(), packet_.get());
    av_packet_unref(packet_.get());
    if (rc < 0 && rc != AVERROR(EAGAIN)) {
      if (rc == AVERROR(ENOMEM) || rc == AVERROR_EXIT) return AvStatus(rc, "decoding a video packet");
      ++dropped_packets_;
      if (++errors > kMaxConsecutiveErrors) return AvStatus(rc, "decoding video packets");
    }
  }
  return false;
}

std::optional<int64_t> FfmpegVideoFrameDecoder::Select() {
  const AVFrame* frame = frame_.get();
  int64_t pts = frame->pts != AV_NOPTS_VALUE ? frame->pts : frame->best_effort_timestamp;
  std::optional<double> time;
  if (pts != AV_NOPTS_VALUE && Valid(time_base_)) time = static_cast<double>(pts) * av_q2d(time_base_);
  if (pts != AV_NOPTS_VALUE) {  // a part of a split video: frames outside it belong to another part
    if (range_begin_pts_ && pts < *range_begin_pts_) return std::nullopt;
    if (range_end_pts_ && pts >= *range_end_pts_) {
      finished_ = true;
      return std::nullopt;
    }
  }
  int64_t index = counter_++;
  if (!options_.counter_index && pts != AV_NOPTS_VALUE && Valid(time_base_) && fps_) {
    index = static_cast<int64_t>(
        std::nearbyint(static_cast<double>(pts - start_pts_) * av_q2d(time_base_) * *fps_));
  }
  const bool key = IsKeyFrame(frame);
  if (options_.only_index) {
    if (index < *options_.only_index) return std::nullopt;
    return index;
  }
  if (time && *time < options_.start_time) return std::nullopt;
  if (options_.end_time && time && *time > *options_.end_time) {
    finished_ = true;
    return std::nullopt;
  }
  if (options_.is_key_frame && *options_.is_key_frame != key) return std::nullopt;
  if (options_.sample_interval_seconds) {
    if (!time || *time + epsilon_ < *next_sample_time_) return std::nullopt;
    // Past every target this frame covers, so a long gap does not queue up extra frames.
    while (*time + epsilon_ >= *next_sample_time_) *next_sample_time_ += *options_.sample_interval_seconds;
  }
  return index;
}

arrow::Status FfmpegVideoFrameDecoder::Scale(int out_width, int out_height, int64_t bytes,
                                             VideoFrameSink* sink) {
  const AVFrame* frame = frame_.get();
  const int width = frame->width, height = frame->height;
  scaler_ = sws_getCachedContext(scaler_, width, height, static_cast<AVPixelFormat>(frame->format), out_width,
                                 out_height, AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr, nullptr, nullptr);
  if (scaler_ == nullptr) {
    return arrow::Status::Invalid("no conversion from pixel format '",
                                  av_get_pix_fmt_name(static_cast<AVPixelFormat>(frame->format)),
                                  "' to RGB24");
  }
  ARROW_ASSIGN_OR_RAISE(uint8_t * out, sink->Prepare(bytes));
  uint8_t* planes[4] = {out, nullptr, nullptr, nullptr};
  int strides[4] = {out_width * 3, 0, 0, 0};
  const int rows = sws_scale(scaler_, frame->data, frame->linesize, 0, height, planes, strides);
  if (rows != out_height) return arrow::Status::Invalid("converting a frame to RGB24 failed");
  return arrow::Status::OK();
}

arrow::Status FfmpegVideoFrameDecoder::Emit(int64_t index, VideoFrameSink* sink) {
  const AVFrame* frame = frame_.get();
  const int width = frame->width, height = frame->height;
  if (width <= 0 || height <= 0) return arrow::Status::Invalid("a decoded frame has no size");
  if (int64_t{width} * height > options_.max_pixels) {
    return arrow::Status::Invalid("a frame of ", width, "x", height, " pixels is over the limit of ",
                                  options_.max_pixels, " pixels");
  }
  const int out_width = options_.width.value_or(width);
  const int out_height = options_.height.value_or(height);
  const int64_t bytes = options_.convert_pixels ? int64_t{out_width} * out_height * 3 : 0;
  if (options_.max_output_bytes > 0 && output_bytes_ + bytes > options_.max_output_bytes) {
    return arrow::Status::Invalid("the decoded frames of this video exceed the query's memory budget of ",
                                  options_.max_output_bytes,
                                  " bytes; narrow it with start_time/end_time, sample_interval_seconds or "
                                  "width/height, or stream it with read_video_frames");
  }
  if (options_.convert_pixels) ARROW_RETURN_NOT_OK(Scale(out_width, out_height, bytes, sink));
  output_bytes_ += bytes;

  VideoFrameInfo info;
  info.frame_index = index;
  const int64_t pts = frame->pts != AV_NOPTS_VALUE ? frame->pts : frame->best_effort_timestamp;
  if (pts != AV_NOPTS_VALUE) {
    info.frame_pts = pts;
    if (Valid(time_base_)) info.frame_time = static_cast<double>(pts) * av_q2d(time_base_);
  }
  if (frame->pkt_dts != AV_NOPTS_VALUE) info.frame_dts = frame->pkt_dts;
  info.frame_duration = FrameDuration(frame);
  info.frame_time_base = time_base_text_;
  info.is_key_frame = IsKeyFrame(frame);
  info.width = out_width;
  info.height = out_height;
  return sink->Commit(info);
}

}  // namespace ketch::media
