#pragma once

#include <arrow/buffer.h>
#include <arrow/buffer_builder.h>
#include <arrow/result.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ketch/functions/media/av_limits.h"

namespace ketch::media {

/// Limits for audio objects: probing stops after 64 KiB and one packet, since audio stream
/// parameters are in the headers. With FFmpeg's defaults the WAV demuxer's codec probe (PCM may
/// hide S/PDIF or MP3) ran every codec probe over up to 2,500 packets: ~7 ms per 3-second clip,
/// 25x soundfile's whole read.
inline AvLimits AudioLimits() {
  AvLimits limits;
  limits.probe_bytes = 64 << 10;
  limits.max_probe_packets = 1;
  return limits;
}

/// What AudioDecode produces.
struct AudioDecodeOptions {
  /// Output rate in Hz; nullopt keeps the file's rate. Resampling is libswresample's soxr engine
  /// at 20-bit precision (libsoxr's "HQ", the quality librosa's default `soxr_hq` asks for).
  std::optional<int> sample_rate;
  /// Average the channels into one (the mean, as librosa.to_mono and numpy's mean(axis=1)).
  bool mono = false;
  /// float64 samples instead of float32.
  bool float64 = false;
  /// Refuse (Invalid) an object whose decoded samples would exceed this many bytes: checked from
  /// the container's duration before decoding, and again while decoding.
  int64_t max_output_bytes = INT64_MAX;
  AvLimits limits = AudioLimits();
};

/// Decoded audio: `frames` x `channels` samples, interleaved (row-major (frames, channels)), each a
/// float32 or float64 in [-1, 1] (integer PCM divided by 2^(bits-1), as libsndfile does).
struct DecodedAudio {
  /// `frames * channels` values (no zero-filling on growth; the default memory pool's allocator).
  arrow::BufferBuilder samples;
  int64_t frames = 0;
  int channels = 0;
  int sample_rate = 0;
};

/// Decodes the best audio stream of one encoded object (WAV, FLAC, MP3, Ogg/Vorbis, Opus, AAC, ...
/// whatever Debian's libavformat/libavcodec read). Errors: Invalid naming the cause for empty,
/// truncated or non-audio bytes ("no audio stream"), an image container, or an output over
/// `max_output_bytes`; IOError when `limits.deadline` passes.
arrow::Result<DecodedAudio> DecodeAudio(std::shared_ptr<arrow::Buffer> bytes,
                                        const AudioDecodeOptions& options);

/// soundfile's (libsndfile's) description of an audio object, as Daft's `audio_metadata` gives it.
struct AudioMetadata {
  int64_t sample_rate = 0;
  int64_t channels = 0;
  /// Sample frames per channel: from the header for PCM containers (WAV, FLAC, AIFF, ...), else
  /// counted by decoding (MP3 and Ogg headers only estimate it).
  double frames = 0;
  /// libsndfile's major format name: "WAV", "FLAC", "OGG", "MP3", "AIFF", ...; other containers
  /// give libavformat's demuxer name upper-cased.
  std::string format;
  /// libsndfile's subtype name: "PCM_16", "PCM_24", "FLOAT", "VORBIS", "OPUS", "MPEG_LAYER_III", ...;
  /// other codecs give libavcodec's codec name upper-cased.
  std::string subtype;
};

/// Reads the metadata of one encoded audio object (errors as DecodeAudio).
arrow::Result<AudioMetadata> ReadAudioMetadata(std::shared_ptr<arrow::Buffer> bytes, const AvLimits& limits);

}  // namespace ketch::media
