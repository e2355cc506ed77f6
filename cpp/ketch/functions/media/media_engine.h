#pragma once

// The media engine behind Ketch's audio and video kernels: FFmpeg (libavformat, libavcodec,
// libswscale, libswresample), reached through libketch_media.so (cpp/media_engine/), which the core
// loads with dlopen on first use. Why not link FFmpeg into the core: the wheel does not bundle
// FFmpeg (the Debian build is GPL: x264, x265 and xvid are linked in, and an Apache-2.0 wheel cannot
// carry it; docs/build-notes.md), so `import ketch` and everything but audio and video must work
// on a machine without FFmpeg's libraries, and audio and video must say what to install there.

#include <arrow/buffer.h>
#include <arrow/result.h>

#include <memory>

#include "ketch/functions/media/audio_decoder.h"
#include "ketch/functions/media/av_limits.h"
#include "ketch/functions/media/video_decoder.h"

namespace ketch::media {

/// The decoders of libketch_media.so. Thread-safe: every call is independent.
class MediaEngine {
 public:
  virtual ~MediaEngine() = default;
  virtual arrow::Result<DecodedAudio> DecodeAudio(std::shared_ptr<arrow::Buffer> bytes,
                                                  const AudioDecodeOptions& options) const = 0;
  virtual arrow::Result<AudioMetadata> ReadAudioMetadata(std::shared_ptr<arrow::Buffer> bytes,
                                                         const AvLimits& limits) const = 0;
  virtual arrow::Result<VideoMetadata> ReadVideoMetadata(std::shared_ptr<arrow::Buffer> bytes,
                                                         const AvLimits& limits) const = 0;
  virtual arrow::Result<std::unique_ptr<VideoFrameDecoder>> OpenVideoFrames(
      std::shared_ptr<arrow::Buffer> bytes, VideoFrameOptions options) const = 0;
};

/// The engine, loaded once (beside the loaded core module, else where the build put it). IOError
/// naming the FFmpeg libraries to install (and the loader's reason) when it cannot be loaded.
arrow::Result<const MediaEngine*> LoadMediaEngine();

}  // namespace ketch::media

/// libketch_media.so's one exported symbol: the engine (a static object of the library).
extern "C" {
using KetchMediaEngineFunction = const ketch::media::MediaEngine* (*)();
}
