#pragma once

#include <arrow/status.h>

namespace ketch::media {

/// Registers the audio kernels (FFmpeg: libavformat, libavcodec, libswresample with libsoxr):
/// - audio_decode(bytes: binary | large_binary | File[; sample_rate: int > 0 | null, mono: bool = false,
///   dtype: "float32" | "float64" = "float32", on_error: "raise" | "null"]) → Tensor[dtype], stored as
///   struct<data: large_list<dtype>, shape: large_list<uint64>>: shape [frames] for one channel (or
///   mono), [frames, channels] otherwise (row-major, interleaved), samples in [-1, 1], at
///   `sample_rate` Hz (resampled by soxr at 20-bit precision) or the file's own rate. A row whose
///   decoded samples would exceed the query's memory budget is refused from its header.
/// - audio_metadata(bytes | File[; on_error]) → struct<sample_rate: int64, channels: int64,
///   frames: float64, format: string, subtype: string> with libsndfile's names (Daft's
///   `audio_metadata`, which asks soundfile).
/// Errors are Invalid naming the function, the source row and the cause ("no audio stream",
/// "truncated audio", FFmpeg's message); with on_error="null" that row is null instead.
arrow::Status RegisterAudioFunctions();

}  // namespace ketch::media
