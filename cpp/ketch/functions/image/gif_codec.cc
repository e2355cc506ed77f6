// GIF through giflib: the first frame, composited onto the logical screen (RGB, or RGBA when the
// frame has a transparent color index), as Pillow's Image.open(...).convert("RGB"/"RGBA") shows it.

#include <gif_lib.h>

#include <cstring>

#include "ketch/functions/image/codec_formats.h"

namespace ketch::image {
namespace {

struct GifSource {
  const uint8_t* data;
  size_t size;
  size_t pos;
};

int ReadGif(GifFileType* gif, GifByteType* out, int n) {
  auto* src = static_cast<GifSource*>(gif->UserData);
  const size_t take = std::min(static_cast<size_t>(n), src->size - src->pos);
  std::memcpy(out, src->data + src->pos, take);
  src->pos += take;
  return static_cast<int>(take);
}

struct GifCloser {
  void operator()(GifFileType* gif) const {
    int error = 0;
    DGifCloseFile(gif, &error);
  }
};

}  // namespace

arrow::Result<DecodedImage> DecodeGif(const uint8_t* data, int64_t size, int64_t max_pixels) {
  GifSource source{data, static_cast<size_t>(size), 0};
  int error = 0;
  std::unique_ptr<GifFileType, GifCloser> gif(DGifOpen(&source, ReadGif, &error));
  if (!gif) return arrow::Status::Invalid("corrupt GIF: ", GifErrorString(error));
  ARROW_RETURN_NOT_OK(CheckImageSize(gif->SWidth, gif->SHeight, max_pixels, "GIF"));
  if (DGifSlurp(gif.get()) != GIF_OK || gif->ImageCount < 1) {
    return arrow::Status::Invalid("corrupt or truncated GIF: ", GifErrorString(gif->Error));
  }
  const SavedImage& frame = gif->SavedImages[0];
  const ColorMapObject* colors = frame.ImageDesc.ColorMap ? frame.ImageDesc.ColorMap : gif->SColorMap;
  if (colors == nullptr) return arrow::Status::Invalid("corrupt GIF: no color map");
  GraphicsControlBlock gcb;
  gcb.TransparentColor = NO_TRANSPARENT_COLOR;
  if (frame.ExtensionBlockCount > 0) DGifSavedExtensionToGCB(gif.get(), 0, &gcb);
  const bool alpha = gcb.TransparentColor != NO_TRANSPARENT_COLOR;
  DecodedImage out;
  out.width = gif->SWidth;
  out.height = gif->SHeight;
  out.mode = alpha ? ImageMode::kRGBA : ImageMode::kRGB;
  const int channels = alpha ? 4 : 3;
  out.pixels.assign(static_cast<size_t>(out.width) * out.height * channels, 0);
  // Outside the first frame the screen shows the background color (transparent when the frame
  // has a transparent index), as Pillow composites it.
  if (!alpha && gif->SColorMap && gif->SBackGroundColor < gif->SColorMap->ColorCount) {
    const GifColorType bg = gif->SColorMap->Colors[gif->SBackGroundColor];
    for (size_t p = 0; p < out.pixels.size(); p += 3) {
      out.pixels[p] = bg.Red, out.pixels[p + 1] = bg.Green, out.pixels[p + 2] = bg.Blue;
    }
  }
  const auto& desc = frame.ImageDesc;
  for (int y = 0; y < desc.Height; ++y) {
    const int oy = desc.Top + y;
    if (oy < 0 || oy >= out.height) continue;
    for (int x = 0; x < desc.Width; ++x) {
      const int ox = desc.Left + x;
      if (ox < 0 || ox >= out.width) continue;
      const int index = frame.RasterBits[static_cast<size_t>(y) * desc.Width + x];
      uint8_t* d = out.pixels.data() + (static_cast<size_t>(oy) * out.width + ox) * channels;
      if (alpha && index == gcb.TransparentColor) continue;  // stays (0, 0, 0, 0)
      if (index < colors->ColorCount) {
        d[0] = colors->Colors[index].Red;
        d[1] = colors->Colors[index].Green;
        d[2] = colors->Colors[index].Blue;
      }
      if (alpha) d[3] = 255;
    }
  }
  return out;
}

}  // namespace ketch::image
