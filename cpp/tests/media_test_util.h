#pragma once

#include <arrow/buffer.h>

#include <memory>
#include <string>

namespace ketch::media {

/// A raw YUV4MPEG2 clip built in memory (no encoder, no CLI): `frames` frames of `width` x `height`
/// at 25 fps, 4:2:0, frame k a flat gray of luma 20 + 16 k.
inline std::shared_ptr<arrow::Buffer> Y4m(int width, int height, int frames) {
  std::string data =
      "YUV4MPEG2 W" + std::to_string(width) + " H" + std::to_string(height) + " F25:1 Ip A1:1 C420jpeg\n";
  const size_t luma = static_cast<size_t>(width) * height;
  const size_t chroma = static_cast<size_t>((width + 1) / 2) * ((height + 1) / 2);
  for (int k = 0; k < frames; ++k) {
    data += "FRAME\n";
    data.append(luma, static_cast<char>(20 + 16 * k));
    data.append(2 * chroma, static_cast<char>(128));
  }
  return arrow::Buffer::FromString(std::move(data));
}

}  // namespace ketch::media
