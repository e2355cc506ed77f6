// libketch_media.so: Ketch's audio and video decoders over FFmpeg, loaded by the core with dlopen
// (ketch/functions/media/media_engine.h says why). Its one exported symbol is ketch_media_engine.

#include "ketch/functions/media/media_engine.h"

#include "media_engine/media_ffmpeg.h"
#include "media_engine/video_decoder_ffmpeg.h"

namespace ketch::media {
namespace {

class FfmpegMediaEngine final : public MediaEngine {
 public:
  arrow::Result<DecodedAudio> DecodeAudio(std::shared_ptr<arrow::Buffer> bytes,
                                          const AudioDecodeOptions& options) const override {
    return FfmpegDecodeAudio(std::move(bytes), options);
  }
  arrow::Result<AudioMetadata> ReadAudioMetadata(std::shared_ptr<arrow::Buffer> bytes,
                                                 const AvLimits& limits) const override {
    return FfmpegReadAudioMetadata(std::move(bytes), limits);
  }
  arrow::Result<VideoMetadata> ReadVideoMetadata(std::shared_ptr<arrow::Buffer> bytes,
                                                 const AvLimits& limits) const override {
    return FfmpegReadVideoMetadata(std::move(bytes), limits);
  }
  arrow::Result<std::unique_ptr<VideoFrameDecoder>> OpenVideoFrames(
      std::shared_ptr<arrow::Buffer> bytes, VideoFrameOptions options) const override {
    return FfmpegVideoFrameDecoder::Open(std::move(bytes), std::move(options));
  }
};

}  // namespace
}  // namespace ketch::media

extern "C" __attribute__((visibility("default"))) const ketch::media::MediaEngine* ketch_media_engine() {
  static const ketch::media::FfmpegMediaEngine engine;
  return &engine;
}
