#include "media_engine/av_input.h"

extern "C" {
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
}

#include <algorithm>
#include <cstring>
#include <mutex>

namespace ketch::media {
namespace {

// FFmpeg logs every damaged packet to stderr by default; errors reach the user through Status.
void QuietFfmpegOnce() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_level(AV_LOG_QUIET); });
}

constexpr int kIoBufferBytes = 64 << 10;

// The demuxer for the common containers, from their magic bytes: libavformat's own probing runs
// every demuxer's probe over growing prefixes (the MPEG audio probe scans each byte for frame
// headers), which cost ~7 ms per short WAV. Anything else is probed as before.
const AVInputFormat* GuessFormat(const arrow::Buffer& bytes) {
  const auto* data = bytes.data();
  const int64_t size = bytes.size();
  auto is = [&](int64_t at, std::string_view magic) {
    return size >= at + static_cast<int64_t>(magic.size()) &&
           std::memcmp(data + at, magic.data(), magic.size()) == 0;
  };
  const char* name = nullptr;
  if (is(0, "RIFF") && is(8, "WAVE")) {
    name = "wav";
  } else if (is(0, "RIFF") && is(8, "AVI ")) {
    name = "avi";
  } else if (is(0, "fLaC")) {
    name = "flac";
  } else if (is(0, "OggS")) {
    name = "ogg";
  } else if (is(0, "\x1A\x45\xDF\xA3")) {
    name = "matroska";
  } else if (is(4, "ftyp")) {
    name = "mov";
  }
  return name ? av_find_input_format(name) : nullptr;
}

}  // namespace

std::string AvErrorString(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(code, text, sizeof(text));
  return text;
}

arrow::Status AvStatus(int code, std::string_view what) {
  if (code == AVERROR_EXIT) return arrow::Status::IOError(what, ": timed out");
  if (code == AVERROR_INVALIDDATA || code == AVERROR_EOF || code == AVERROR(EINVAL) ||
      code == AVERROR_DECODER_NOT_FOUND || code == AVERROR_DEMUXER_NOT_FOUND ||
      code == AVERROR_PATCHWELCOME) {
    return arrow::Status::Invalid(what, ": ", AvErrorString(code));
  }
  if (code == AVERROR(ENOMEM)) return arrow::Status::OutOfMemory(what, ": ", AvErrorString(code));
  return arrow::Status::IOError(what, ": ", AvErrorString(code));
}

arrow::Result<std::unique_ptr<AvInput>> AvInput::Open(std::shared_ptr<arrow::Buffer> bytes,
                                                      const AvLimits& limits) {
  QuietFfmpegOnce();
  if (bytes == nullptr || bytes->size() == 0) return arrow::Status::Invalid("the file is empty (0 bytes)");
  std::unique_ptr<AvInput> input(new AvInput());
  input->bytes_ = std::move(bytes);
  input->limits_ = limits;
  auto* buffer = static_cast<uint8_t*>(av_malloc(kIoBufferBytes));
  if (buffer == nullptr) return arrow::Status::OutOfMemory("av_malloc for the media reader");
  input->io_ =
      avio_alloc_context(buffer, kIoBufferBytes, 0, input.get(), &AvInput::Read, nullptr, &AvInput::Seek);
  if (input->io_ == nullptr) {
    av_free(buffer);
    return arrow::Status::OutOfMemory("avio_alloc_context");
  }
  input->format_ = avformat_alloc_context();
  if (input->format_ == nullptr) return arrow::Status::OutOfMemory("avformat_alloc_context");
  input->format_->pb = input->io_;
  input->format_->flags |= AVFMT_FLAG_CUSTOM_IO;
  input->format_->probesize = std::max<int64_t>(32, limits.probe_bytes);
  input->format_->max_probe_packets = limits.max_probe_packets;
  input->format_->interrupt_callback = AVIOInterruptCB{&AvInput::Interrupt, input.get()};
  // avformat_open_input frees the context on failure.
  int rc = avformat_open_input(&input->format_, nullptr, GuessFormat(*input->bytes_), nullptr);
  if (rc < 0) {
    input->format_ = nullptr;
    if (rc == AVERROR_EOF)
      return arrow::Status::Invalid(
          "truncated: the file ends before its container could be read (end of file)");
    return AvStatus(rc, "not a media container libavformat can read");
  }
  // A header claiming huge frames is refused before find_stream_info decodes any of them.
  for (unsigned i = 0; i < input->format_->nb_streams; ++i) {
    const AVCodecParameters* params = input->format_->streams[i]->codecpar;
    if (params->codec_type == AVMEDIA_TYPE_VIDEO &&
        int64_t{params->width} * params->height > limits.max_video_pixels) {
      return arrow::Status::Invalid("the video header claims ", params->width, "x", params->height,
                                    " pixels per frame, over the limit of ", limits.max_video_pixels,
                                    " pixels");
    }
  }
  rc = avformat_find_stream_info(input->format_, nullptr);
  if (rc == AVERROR_EOF)
    return arrow::Status::Invalid(
        "truncated: the file ends before its streams' parameters could be read (end of file)");
  if (rc < 0) return AvStatus(rc, "reading the streams' parameters");
  return input;
}

AvInput::~AvInput() {
  if (format_ != nullptr) avformat_close_input(&format_);
  if (io_ != nullptr) {
    av_freep(&io_->buffer);
    avio_context_free(&io_);
  }
}

std::string_view AvInput::format_name() const {
  return format_ && format_->iformat && format_->iformat->name ? format_->iformat->name : "";
}

bool AvInput::is_image_container() const {
  const std::string_view name = format_name();
  return name == "image2" || (name.size() > 5 && name.substr(name.size() - 5) == "_pipe");
}

arrow::Result<int> AvInput::BestStream(AVMediaType type) const {
  const int index = av_find_best_stream(format_, type, -1, -1, nullptr, 0);
  if (index < 0) {
    const char* name = av_get_media_type_string(type);
    return arrow::Status::Invalid("no ", name ? name : "such", " stream in the ", format_name(),
                                  " container");
  }
  return index;
}

arrow::Result<CodecContextPtr> AvInput::OpenDecoder(int index, int threads) const {
  const AVCodecParameters* params = format_->streams[index]->codecpar;
  const AVCodec* codec = avcodec_find_decoder(params->codec_id);
  if (codec == nullptr) {
    return arrow::Status::Invalid("no decoder for codec '", avcodec_get_name(params->codec_id), "'");
  }
  CodecContextPtr context(avcodec_alloc_context3(codec));
  if (!context) return arrow::Status::OutOfMemory("avcodec_alloc_context3");
  int rc = avcodec_parameters_to_context(context.get(), params);
  if (rc < 0) return AvStatus(rc, "decoder parameters");
  context->thread_count = threads;
  context->pkt_timebase = format_->streams[index]->time_base;
  rc = avcodec_open2(context.get(), codec, nullptr);
  if (rc < 0) return AvStatus(rc, std::string("opening the ") + codec->name + " decoder");
  return context;
}

arrow::Result<bool> AvInput::ReadPacket(AVPacket* packet) {
  const int rc = av_read_frame(format_, packet);
  if (rc == AVERROR_EOF) return false;
  if (rc < 0) return AvStatus(rc, "reading a packet");
  return true;
}

bool AvInput::TimedOut() const {
  return limits_.deadline && std::chrono::steady_clock::now() > *limits_.deadline;
}

int AvInput::Read(void* opaque, uint8_t* buf, int size) {
  auto* self = static_cast<AvInput*>(opaque);
  const int64_t left = self->bytes_->size() - self->position_;
  if (left <= 0) return AVERROR_EOF;
  const int n = static_cast<int>(std::min<int64_t>(left, size));
  std::memcpy(buf, self->bytes_->data() + self->position_, n);
  self->position_ += n;
  return n;
}

int64_t AvInput::Seek(void* opaque, int64_t offset, int whence) {
  auto* self = static_cast<AvInput*>(opaque);
  const int64_t size = self->bytes_->size();
  switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE:
      return size;
    case SEEK_SET:
      break;
    case SEEK_CUR:
      offset += self->position_;
      break;
    case SEEK_END:
      offset += size;
      break;
    default:
      return AVERROR(EINVAL);
  }
  if (offset < 0) return AVERROR(EINVAL);
  self->position_ = std::min(offset, size);
  return self->position_;
}

int AvInput::Interrupt(void* opaque) { return static_cast<AvInput*>(opaque)->TimedOut() ? 1 : 0; }

}  // namespace ketch::media
