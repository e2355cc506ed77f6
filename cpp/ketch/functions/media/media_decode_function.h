#pragma once

#include <arrow/status.h>

#include <cstdint>
#include <string_view>

namespace ketch::media {

/// The kernel family a MIME type routes to in media_decode.
enum class MediaFamily : int8_t { kOther = -1, kImage = 0, kAudio = 1, kVideo = 2, kPdf = 3 };

/// "image/*" → kImage, "audio/*" → kAudio, "video/*" → kVideo, "application/pdf" → kPdf, else kOther.
MediaFamily FamilyOfMimeType(std::string_view mime_type);

/// Registers media_decode(bytes: binary | large_binary | File[; on_error: "raise" | "null"]) →
/// struct<mime_type: string, image: Image, audio: Tensor[float32], video: struct<width, height:
/// int64, fps: float64, frame_count: int64, time_base: float64>, pdf: list<struct<page_number:
/// int64, text: large_string>>>. Each row's MIME type is sniffed from its first bytes (as
/// `.file.guess_mime_type()`), and the row goes to the one kernel its family names: image_decode,
/// audio_decode (the file's rate and channels), video_metadata (frames are not decoded: a video
/// row would not fit a morsel; use video_frames / read_video_frames) or pdf_text. The other
/// fields of that row are null; a row of another type has only its mime_type.
/// Errors: Invalid naming the source row, the file (for File input), the MIME type and the
/// kernel's cause; with on_error="null" the failing kernel's field is null instead.
arrow::Status RegisterMediaDecodeFunction();

}  // namespace ketch::media
