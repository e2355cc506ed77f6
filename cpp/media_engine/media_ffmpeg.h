#pragma once

// The FFmpeg implementations behind ketch::media::MediaEngine (libketch_media.so only).

#include "ketch/functions/media/audio_decoder.h"
#include "ketch/functions/media/video_decoder.h"
#include "media_engine/av_input.h"

namespace ketch::media {

arrow::Result<DecodedAudio> FfmpegDecodeAudio(std::shared_ptr<arrow::Buffer> bytes,
                                              const AudioDecodeOptions& options);
arrow::Result<AudioMetadata> FfmpegReadAudioMetadata(std::shared_ptr<arrow::Buffer> bytes,
                                                     const AvLimits& limits);
arrow::Result<VideoMetadata> FfmpegReadVideoMetadata(std::shared_ptr<arrow::Buffer> bytes,
                                                     const AvLimits& limits);

}  // namespace ketch::media
