#include "media_engine/media_ffmpeg.h"

extern "C" {
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>
}

#include <algorithm>
#include <cctype>
#include <cstring>

namespace ketch::media {
namespace {

struct SwrDeleter {
  void operator()(SwrContext* swr) const { swr_free(&swr); }
};
using SwrPtr = std::unique_ptr<SwrContext, SwrDeleter>;

struct ChannelLayout {
  AVChannelLayout layout{};
  ChannelLayout() = default;
  ~ChannelLayout() { av_channel_layout_uninit(&layout); }
  ChannelLayout(const ChannelLayout&) = delete;
  ChannelLayout& operator=(const ChannelLayout&) = delete;
};

std::string Upper(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Containers whose header states the exact number of sample frames: a shorter decode is a
// truncated file.
bool ExactDurationContainer(std::string_view format) {
  return format == "wav" || format == "flac" || format == "aiff" || format == "w64" || format == "caf" ||
         format == "au";
}

/// The decoder of one audio stream with its converter to interleaved float samples.
class AudioStreamDecoder {
 public:
  static arrow::Result<std::unique_ptr<AudioStreamDecoder>> Open(std::shared_ptr<arrow::Buffer> bytes,
                                                                 const AvLimits& limits) {
    std::unique_ptr<AudioStreamDecoder> self(new AudioStreamDecoder());
    ARROW_ASSIGN_OR_RAISE(self->input_, AvInput::Open(std::move(bytes), limits));
    if (self->input_->is_image_container()) {
      return arrow::Status::Invalid("not an audio file: libavformat reads it as an image (",
                                    self->input_->format_name(), ")");
    }
    ARROW_ASSIGN_OR_RAISE(self->stream_, self->input_->BestStream(AVMEDIA_TYPE_AUDIO));
    ARROW_ASSIGN_OR_RAISE(self->codec_, self->input_->OpenDecoder(self->stream_, 1));
    return self;
  }

  AvInput& input() { return *input_; }
  AVCodecContext* codec() { return codec_.get(); }
  const AVStream* stream() const { return input_->format()->streams[stream_]; }

  /// The rate the samples come out at when none is asked for: the decoder's, except for Opus,
  /// which always decodes at 48 kHz: there libsndfile's rule, the smallest Opus rate (8, 12, 16,
  /// 24, 48 kHz) at or above the input rate the OpusHead records.
  int NativeRate() const {
    const int opus = OpusRate();
    return opus > 0 ? opus : codec_->sample_rate;
  }

  /// The rate decoded samples keep when none is asked for: libsndfile's for Opus, else 0, meaning
  /// the decoded frames' own rate (which wins over a header that states another).
  int OpusRate() const {
    const AVCodecParameters* params = stream()->codecpar;
    if (params->codec_id == AV_CODEC_ID_OPUS && params->extradata_size >= 16 &&
        std::memcmp(params->extradata, "OpusHead", 8) == 0) {
      const uint8_t* p = params->extradata + 12;
      const uint32_t input_rate = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
      for (int rate : {8000, 12000, 16000, 24000}) {
        if (input_rate != 0 && input_rate <= static_cast<uint32_t>(rate)) return rate;
      }
      return 48000;
    }
    return 0;
  }

  /// Whether a WAV's fmt chunk is WAVE_FORMAT_EXTENSIBLE (libsndfile calls those "WAVEX").
  bool IsWaveExtensible() const {
    if (input_->format_name() != "wav") return false;
    const arrow::Buffer& bytes = input_->bytes();
    const std::string_view data(reinterpret_cast<const char*>(bytes.data()),
                                static_cast<size_t>(std::min<int64_t>(bytes.size(), 4096)));
    const auto fmt = data.find("fmt ");
    if (fmt == std::string_view::npos || fmt + 10 > data.size()) return false;
    const auto tag = static_cast<uint8_t>(data[fmt + 8]) | (static_cast<uint8_t>(data[fmt + 9]) << 8);
    return tag == 0xFFFE;
  }

  /// Header-stated sample frames at the codec's rate, or -1 when the container only estimates.
  int64_t HeaderFrames() const {
    const AVStream* s = stream();
    if (!ExactDurationContainer(input_->format_name()) || s->duration == AV_NOPTS_VALUE || s->duration <= 0 ||
        codec_->sample_rate <= 0) {
      return -1;
    }
    const int64_t frames = av_rescale_q(s->duration, s->time_base, AVRational{1, codec_->sample_rate});
    return std::max(frames, WavDataFrames());
  }

  /// The frames a WAV's data chunk declares, when they run past the end of the bytes (libavformat
  /// clamps its duration to the bytes there are, which hides a truncated file); else -1.
  int64_t WavDataFrames() const {
    const int block_align = stream()->codecpar->block_align;
    if (input_->format_name() != "wav" || block_align <= 0) return -1;
    const arrow::Buffer& bytes = input_->bytes();
    const uint8_t* data = bytes.data();
    auto u32 = [&](int64_t at) {
      return static_cast<uint32_t>(data[at]) | (static_cast<uint32_t>(data[at + 1]) << 8) |
             (static_cast<uint32_t>(data[at + 2]) << 16) | (static_cast<uint32_t>(data[at + 3]) << 24);
    };
    if (bytes.size() < 12 || std::memcmp(data, "RIFF", 4) != 0) return -1;
    for (int64_t at = 12; at + 8 <= bytes.size();) {
      const uint32_t size = u32(at + 4);
      if (std::memcmp(data + at, "data", 4) == 0) {
        // 0 and 0xFFFFFFFF: a stream whose writer did not know the size; nothing is declared.
        if (size == 0 || size == 0xFFFFFFFFu || at + 8 + static_cast<int64_t>(size) <= bytes.size())
          return -1;
        return static_cast<int64_t>(size) / block_align;
      }
      at += 8 + static_cast<int64_t>(size) + (size & 1);
    }
    return -1;
  }

  /// Calls `on_frame(const AVFrame&)` for every decoded frame, in order. A damaged packet is an
  /// error naming its time.
  template <typename OnFrame>
  arrow::Status DecodeAll(OnFrame&& on_frame) {
    PacketPtr packet(av_packet_alloc());
    FramePtr frame(av_frame_alloc());
    if (!packet || !frame) return arrow::Status::OutOfMemory("av_packet_alloc / av_frame_alloc");
    auto drain = [&]() -> arrow::Status {
      while (true) {
        const int rc = avcodec_receive_frame(codec_.get(), frame.get());
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return arrow::Status::OK();
        if (rc < 0) return AvStatus(rc, "decoding audio");
        ARROW_RETURN_NOT_OK(on_frame(*frame));
        av_frame_unref(frame.get());
      }
    };
    while (true) {
      ARROW_ASSIGN_OR_RAISE(bool more, input_->ReadPacket(packet.get()));
      if (!more) break;
      if (packet->stream_index == stream_) {
        const int rc = avcodec_send_packet(codec_.get(), packet.get());
        if (rc < 0 && rc != AVERROR(EAGAIN)) {
          const double at = packet->pts == AV_NOPTS_VALUE ? 0.0 : packet->pts * av_q2d(stream()->time_base);
          av_packet_unref(packet.get());
          return AvStatus(rc, "damaged audio packet at " + std::to_string(at) + " s");
        }
        av_packet_unref(packet.get());
        ARROW_RETURN_NOT_OK(drain());
      } else {
        av_packet_unref(packet.get());
      }
      if (input_->TimedOut()) return arrow::Status::IOError("decoding audio: timed out");
    }
    avcodec_send_packet(codec_.get(), nullptr);
    return drain();
  }

 private:
  AudioStreamDecoder() = default;
  std::unique_ptr<AvInput> input_;
  int stream_ = -1;
  CodecContextPtr codec_;
};

/// libswresample, set up from the first decoded frame (a stream may only say its sample format
/// once the decoder ran).
class Converter {
 public:
  Converter(const AudioDecodeOptions& options, int native_rate)
      : options_(options), native_rate_(native_rate) {}

  arrow::Status Convert(const AVFrame& frame, DecodedAudio* out) {
    if (!swr_) ARROW_RETURN_NOT_OK(Init(frame, out));
    const int max_out = swr_get_out_samples(swr_.get(), frame.nb_samples);
    if (max_out < 0) return AvStatus(max_out, "resampling");
    in_frames_ += frame.nb_samples;
    return Run(const_cast<const uint8_t**>(frame.extended_data), frame.nb_samples, max_out, out);
  }

  /// Drains the resampler. A resampled signal ends as librosa's `resample(res_type="soxr_hq")`
  /// (what Daft calls) ends it: soxr's one-shot output (the input followed by silence, cut at
  /// round(input frames x out rate / in rate)), padded with zeros to ceil(...) frames
  /// (librosa's fix_length).
  arrow::Status Flush(DecodedAudio* out) {
    if (!swr_) return arrow::Status::OK();
    const bool resampling = out->sample_rate != in_rate_;
    if (resampling) {
      // Silence in the input's own format (swr_inject_silence crashes in libsoxr 0.1.3).
      const int pad = std::max(256, in_rate_ / 10);
      const int bytes = av_get_bytes_per_sample(in_format_);
      const bool planar = av_sample_fmt_is_planar(in_format_);
      const uint8_t silence = (in_format_ == AV_SAMPLE_FMT_U8 || in_format_ == AV_SAMPLE_FMT_U8P) ? 0x80 : 0;
      std::vector<uint8_t> zeros(static_cast<size_t>(pad) * channels_ * bytes, silence);
      std::vector<const uint8_t*> planes(planar ? channels_ : 1);
      for (size_t c = 0; c < planes.size(); ++c)
        planes[c] = zeros.data() + c * static_cast<size_t>(pad) * bytes;
      const int max_out = swr_get_out_samples(swr_.get(), pad);
      if (max_out < 0) return AvStatus(max_out, "resampling");
      ARROW_RETURN_NOT_OK(Run(planes.data(), pad, max_out, out));
    }
    const int held = swr_get_out_samples(swr_.get(), 0);
    if (held < 0) return AvStatus(held, "resampling");
    if (held > 0) ARROW_RETURN_NOT_OK(Run(nullptr, 0, held, out));
    if (resampling) {
      const int64_t num = in_frames_ * out->sample_rate;
      const int64_t kept = std::min(out->frames, (2 * num + in_rate_) / (2 * in_rate_));
      const int64_t target = (num + in_rate_ - 1) / in_rate_;
      const size_t frame_bytes = static_cast<size_t>(out->channels) * sample_bytes_;
      out->samples.Rewind(kept * static_cast<int64_t>(frame_bytes));
      // Advance zero-fills: 0.0f / 0.0 are all-zero bytes.
      ARROW_RETURN_NOT_OK(out->samples.Advance((target - kept) * static_cast<int64_t>(frame_bytes)));
      out->frames = target;
    }
    return arrow::Status::OK();
  }

 private:
  arrow::Status Init(const AVFrame& frame, DecodedAudio* out) {
    ChannelLayout in;
    if (frame.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || frame.ch_layout.nb_channels <= 0) {
      av_channel_layout_default(&in.layout, std::max(1, frame.ch_layout.nb_channels));
    } else {
      if (av_channel_layout_copy(&in.layout, &frame.ch_layout) < 0)
        return arrow::Status::OutOfMemory("layout");
    }
    channels_ = in.layout.nb_channels;
    in_rate_ = frame.sample_rate;
    in_format_ = static_cast<AVSampleFormat>(frame.format);
    const int out_rate = options_.sample_rate.value_or(native_rate_ > 0 ? native_rate_ : frame.sample_rate);
    SwrContext* swr = nullptr;
    int rc = swr_alloc_set_opts2(&swr, &in.layout, options_.float64 ? AV_SAMPLE_FMT_DBL : AV_SAMPLE_FMT_FLT,
                                 out_rate, &in.layout, static_cast<AVSampleFormat>(frame.format),
                                 frame.sample_rate, 0, nullptr);
    swr_.reset(swr);
    if (rc < 0) {
      return AvStatus(rc, "setting up the resampler from " + std::to_string(frame.sample_rate) + " Hz to " +
                              std::to_string(out_rate) + " Hz, " + std::to_string(channels_) + " channels");
    }
    if (out_rate != frame.sample_rate) {
      av_opt_set(swr, "resampler", "soxr", 0);
      av_opt_set_int(swr, "precision", 20, 0);
    }
    rc = swr_init(swr);
    if (rc < 0) {
      return AvStatus(rc, "setting up the resampler from " + std::to_string(frame.sample_rate) + " Hz to " +
                              std::to_string(out_rate) + " Hz, " + std::to_string(channels_) + " channels");
    }
    out->channels = options_.mono ? 1 : channels_;
    out->sample_rate = out_rate;
    sample_bytes_ = options_.float64 ? 8 : 4;
    return arrow::Status::OK();
  }

  // Converts into the output's tail (through a scratch buffer only to downmix).
  arrow::Status Run(const uint8_t** in, int in_samples, int max_out, DecodedAudio* out) {
    const int64_t frame_bytes = static_cast<int64_t>(channels_) * sample_bytes_;
    const int64_t out_frame_bytes = static_cast<int64_t>(out->channels) * sample_bytes_;
    const bool downmix = options_.mono && channels_ > 1;
    ARROW_RETURN_NOT_OK(out->samples.Reserve(max_out * out_frame_bytes));
    uint8_t* tail = out->samples.mutable_data() + out->samples.length();
    if (downmix) scratch_.resize(static_cast<size_t>(max_out * frame_bytes));
    uint8_t* dst = downmix ? scratch_.data() : tail;
    const int got = swr_convert(swr_.get(), &dst, max_out, in, in_samples);
    if (got < 0) return AvStatus(got, "resampling");
    if ((out->frames + got) * out_frame_bytes > options_.max_output_bytes) {
      return arrow::Status::Invalid("the decoded audio exceeds ", options_.max_output_bytes,
                                    " bytes (the query's memory budget)");
    }
    if (downmix && options_.float64) {
      Downmix(reinterpret_cast<const double*>(dst), got, reinterpret_cast<double*>(tail));
    } else if (downmix) {
      Downmix(reinterpret_cast<const float*>(dst), got, reinterpret_cast<float*>(tail));
    }
    out->samples.UnsafeAdvance(got * out_frame_bytes);
    out->frames += got;
    return arrow::Status::OK();
  }

  template <typename T>
  void Downmix(const T* in, int frames, T* out) const {
    for (int i = 0; i < frames; ++i) {
      T sum = 0;
      for (int c = 0; c < channels_; ++c) sum += in[static_cast<size_t>(i) * channels_ + c];
      out[i] = sum / static_cast<T>(channels_);
    }
  }

  const AudioDecodeOptions& options_;
  const int native_rate_;
  int in_rate_ = 0;
  AVSampleFormat in_format_ = AV_SAMPLE_FMT_NONE;
  int64_t in_frames_ = 0;
  SwrPtr swr_;
  int channels_ = 0;
  int sample_bytes_ = 4;
  std::vector<uint8_t> scratch_;
};

std::string SubtypeName(const AVCodecParameters& codec) {
  switch (codec.codec_id) {
    case AV_CODEC_ID_PCM_S16LE:
    case AV_CODEC_ID_PCM_S16BE:
      return "PCM_16";
    case AV_CODEC_ID_PCM_S24LE:
    case AV_CODEC_ID_PCM_S24BE:
      return "PCM_24";
    case AV_CODEC_ID_PCM_S32LE:
    case AV_CODEC_ID_PCM_S32BE:
      return "PCM_32";
    case AV_CODEC_ID_PCM_U8:
      return "PCM_U8";
    case AV_CODEC_ID_PCM_S8:
      return "PCM_S8";
    case AV_CODEC_ID_PCM_F32LE:
    case AV_CODEC_ID_PCM_F32BE:
      return "FLOAT";
    case AV_CODEC_ID_PCM_F64LE:
    case AV_CODEC_ID_PCM_F64BE:
      return "DOUBLE";
    case AV_CODEC_ID_PCM_MULAW:
      return "ULAW";
    case AV_CODEC_ID_PCM_ALAW:
      return "ALAW";
    case AV_CODEC_ID_ADPCM_IMA_WAV:
      return "IMA_ADPCM";
    case AV_CODEC_ID_ADPCM_MS:
      return "MS_ADPCM";
    case AV_CODEC_ID_GSM_MS:
      return "GSM610";
    case AV_CODEC_ID_VORBIS:
      return "VORBIS";
    case AV_CODEC_ID_OPUS:
      return "OPUS";
    case AV_CODEC_ID_MP3:
      return "MPEG_LAYER_III";
    case AV_CODEC_ID_MP2:
      return "MPEG_LAYER_II";
    case AV_CODEC_ID_MP1:
      return "MPEG_LAYER_I";
    case AV_CODEC_ID_FLAC: {
      const int bits = codec.bits_per_raw_sample;
      return bits == 8 ? "PCM_S8" : bits == 24 ? "PCM_24" : bits == 32 ? "PCM_32" : "PCM_16";
    }
    default:
      return Upper(avcodec_get_name(codec.codec_id));
  }
}

std::string FormatName(std::string_view demuxer) {
  if (demuxer == "wav") return "WAV";
  if (demuxer == "flac") return "FLAC";
  if (demuxer == "ogg") return "OGG";
  if (demuxer == "mp3") return "MP3";
  if (demuxer == "aiff") return "AIFF";
  if (demuxer == "w64") return "W64";
  if (demuxer == "caf") return "CAF";
  if (demuxer == "au") return "AU";
  const auto comma = demuxer.find(',');
  return Upper(demuxer.substr(0, comma));
}

}  // namespace

arrow::Result<DecodedAudio> FfmpegDecodeAudio(std::shared_ptr<arrow::Buffer> bytes,
                                              const AudioDecodeOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto decoder, AudioStreamDecoder::Open(std::move(bytes), options.limits));
  const int64_t header_frames = decoder->HeaderFrames();
  const int in_rate = decoder->codec()->sample_rate;
  const int native_rate = decoder->NativeRate();
  const int channels = options.mono ? 1 : std::max(1, decoder->codec()->ch_layout.nb_channels);
  if (header_frames > 0 && in_rate > 0) {
    // Refused from the header, before decoding anything.
    const double out_frames =
        static_cast<double>(header_frames) * options.sample_rate.value_or(native_rate) / in_rate;
    const double out_bytes = out_frames * channels * (options.float64 ? 8 : 4);
    if (out_bytes > static_cast<double>(options.max_output_bytes)) {
      return arrow::Status::Invalid("the decoded audio would take ", static_cast<int64_t>(out_bytes),
                                    " bytes, over the limit of ", options.max_output_bytes,
                                    " bytes (the query's memory budget)");
    }
  }
  DecodedAudio out;
  // One allocation for the whole output where the container says (or estimates) its duration.
  const AVFormatContext* format = decoder->input().format();
  if (format->duration > 0 && format->duration != AV_NOPTS_VALUE) {
    const double seconds = static_cast<double>(format->duration) / AV_TIME_BASE;
    const double bytes =
        (seconds * options.sample_rate.value_or(native_rate) + 8192) * channels * (options.float64 ? 8 : 4);
    if (bytes < static_cast<double>(options.max_output_bytes)) {
      ARROW_RETURN_NOT_OK(out.samples.Reserve(static_cast<int64_t>(bytes)));
    }
  }
  Converter converter(options, decoder->OpusRate());
  int64_t decoded_frames = 0;
  ARROW_RETURN_NOT_OK(decoder->DecodeAll([&](const AVFrame& frame) {
    decoded_frames += frame.nb_samples;
    return converter.Convert(frame, &out);
  }));
  ARROW_RETURN_NOT_OK(converter.Flush(&out));
  if (decoded_frames == 0) {
    // A PCM container that states no samples (a WAV with an empty data chunk) is empty audio, as
    // soundfile reads it; elsewhere no samples means nothing decodable.
    if (!ExactDurationContainer(decoder->input().format_name()) || header_frames > 0) {
      return arrow::Status::Invalid("no audio samples could be decoded");
    }
    out.channels = channels;
    out.sample_rate = options.sample_rate.value_or(native_rate);
  }
  if (header_frames > 0 && decoded_frames < header_frames) {
    return arrow::Status::Invalid("truncated audio: the header states ", header_frames, " frames, only ",
                                  decoded_frames, " could be decoded");
  }
  return out;
}

arrow::Result<AudioMetadata> FfmpegReadAudioMetadata(std::shared_ptr<arrow::Buffer> bytes,
                                                     const AvLimits& limits) {
  ARROW_ASSIGN_OR_RAISE(auto decoder, AudioStreamDecoder::Open(std::move(bytes), limits));
  AudioMetadata meta;
  const AVCodecParameters& params = *decoder->stream()->codecpar;
  meta.sample_rate = decoder->NativeRate();
  meta.channels = decoder->codec()->ch_layout.nb_channels;
  meta.format = decoder->IsWaveExtensible() ? "WAVEX" : FormatName(decoder->input().format_name());
  meta.subtype = SubtypeName(params);
  int64_t frames = decoder->HeaderFrames();
  if (frames < 0) {
    // Only an estimate in the header: count what the decoder gives (gapless: encoder delay and
    // padding removed, as libsndfile's MP3 and Ogg readers do).
    frames = 0;
    ARROW_RETURN_NOT_OK(decoder->DecodeAll([&](const AVFrame& frame) {
      frames += frame.nb_samples;
      return arrow::Status::OK();
    }));
  }
  // Opus decodes at 48 kHz; the frames are counted at the reported rate.
  const int decoder_rate = decoder->codec()->sample_rate;
  if (decoder_rate > 0 && meta.sample_rate != decoder_rate) {
    frames = av_rescale(frames, meta.sample_rate, decoder_rate);
  }
  meta.frames = static_cast<double>(frames);
  return meta;
}

}  // namespace ketch::media
