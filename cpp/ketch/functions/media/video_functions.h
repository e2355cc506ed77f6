#pragma once

#include <arrow/api.h>

#include <memory>

namespace ketch::media {

/// Registers the video kernels (FFmpeg: libavformat, libavcodec, libswscale; video_decoder.h). The
/// first argument of each is encoded bytes (binary | large_binary) or a File column; times are
/// seconds; every kernel takes on_error: "raise" (default) | "null".
/// - video_metadata(f) → VideoMetadataType(): Daft's `VideoFile.metadata()` fields, from the
///   headers only. No video stream: every field null (as Daft).
/// - video_frames(f[; start_time: float = 0, end_time: float | null, width, height: int | null (both
///   or neither), is_key_frame: bool | null, sample_interval_seconds: float > 0 | null,
///   frame_index: "pts" | "counter" = "pts", fixed_shape: bool = false]) → large_list<VideoFrameType()>:
///   Daft's per-frame fields and selection rules; pixels converted (and resized) to RGB24 by
///   libswscale. fixed_shape (with width and height) stores data as FixedShapeImage[RGB; h x w].
/// - video_keyframes(f[; start_time, end_time]) → large_list<Image[RGB]>.
/// - get_video_frame_by_idx(f, idx: int) → Image[RGB]: the frame of presentation index idx
///   (round((pts - start) * time_base * fps)), decoded from the keyframe before it.
/// Errors are Invalid naming the function, the source row and the cause: an empty file, no
/// container libavformat knows, a single image ("not a video container"), "no video stream", a
/// header over the image pixel limit (refused before the streams are probed), or decoded frames of
/// one row over the query's memory budget. Damaged packets in the middle are dropped and decoding
/// goes on.
arrow::Status RegisterVideoFunctions();

/// struct<width: int64, height: int64, fps: float64, duration: float64, frame_count: int64,
/// time_base: float64> (Daft's VideoMetadata, in its order; duration and time_base in seconds).
std::shared_ptr<arrow::DataType> VideoMetadataType();

/// struct<frame_index: int64, frame_time: float64, frame_time_base: string, frame_pts: int64,
/// frame_dts: int64, frame_duration: int64, is_key_frame: bool, data: Image[RGB]> (Daft's
/// VideoFrameData; frame_time in seconds, pts/dts/duration in frame_time_base units).
/// `data`: the image type (nullptr: Image[RGB]).
std::shared_ptr<arrow::DataType> VideoFrameType(std::shared_ptr<arrow::DataType> data = nullptr);

}  // namespace ketch::media
