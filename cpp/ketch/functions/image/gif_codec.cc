// GIF: the first frame, composited onto the logical screen (RGB, or RGBA when the frame has a
// transparent color index), as Pillow's Image.open(...).convert("RGB"/"RGBA") shows it. giflib reads
// the records; the frame's LZW data is decoded here, with Pillow's checks, so the verdict on corrupt
// or truncated data is Pillow's: the frame decodes when every pixel is set before a broken code, an
// early end code or the end of the data, whatever follows it (a missing trailer is fine).

#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

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

// GIF's LZW for one frame, fed one data sub-block at a time. Codes are checked the way Pillow's
// decoder checks them (a string code not yet in the table, or a first code after a clear that is not
// a literal, is refused), so corrupt data is refused where Pillow refuses it instead of being
// decoded into garbage. Rows go in display order (interlaced frames in their 4 passes).
class LzwFrame {
 public:
  LzwFrame(int min_code_size, int width, int height, bool interlaced)
      : min_code_size_(min_code_size),
        clear_(1 << min_code_size),
        width_(width),
        raster_(static_cast<size_t>(width) * height) {
    for (const auto& [first, step] : interlaced
                                         ? std::vector<std::pair<int, int>>{{0, 8}, {4, 8}, {2, 4}, {1, 2}}
                                         : std::vector<std::pair<int, int>>{{0, 1}}) {
      for (int y = first; y < height; y += step) rows_.push_back(y);
    }
    prefix_.resize(kTableSize);
    suffix_.resize(kTableSize);
    Reset();
  }

  bool done() const { return row_index_ >= rows_.size(); }
  const std::vector<uint8_t>& raster() const { return raster_; }

  /// Consumes one sub-block. Invalid for a broken code stream; stops quietly once every pixel is set.
  arrow::Status Feed(const uint8_t* block, int size) {
    for (int i = 0; i < size && !done(); ++i) {
      bits_ |= uint32_t{block[i]} << bit_count_;
      bit_count_ += 8;
      while (bit_count_ >= code_size_ && !done()) {
        const int code = static_cast<int>(bits_ & ((1u << code_size_) - 1));
        bits_ >>= code_size_;
        bit_count_ -= code_size_;
        ARROW_RETURN_NOT_OK(Code(code));
        if (ended_) return arrow::Status::OK();
      }
    }
    return arrow::Status::OK();
  }
  bool ended() const { return ended_; }

 private:
  static constexpr int kTableSize = 4096;

  void Reset() {
    next_ = clear_ + 2;
    code_size_ = min_code_size_ + 1;
    last_ = -1;
  }

  arrow::Status Code(int code) {
    if (code == clear_) {
      Reset();
      return arrow::Status::OK();
    }
    if (code == clear_ + 1) {  // end of information
      ended_ = true;
      return arrow::Status::OK();
    }
    if (last_ < 0) {
      if (code > clear_) return Broken(code);
      Put(static_cast<uint8_t>(code));
      last_ = code;
      first_ = static_cast<uint8_t>(code);
      return arrow::Status::OK();
    }
    if (code > next_) return Broken(code);
    // Expand the string of `code` (or of `last_` plus its first byte when code == next_).
    stack_.clear();
    int c = code;
    if (code == next_) {
      if (next_ >= kTableSize) return Broken(code);
      stack_.push_back(first_);
      c = last_;
    }
    while (c >= clear_) {
      if (c >= kTableSize || stack_.size() >= kTableSize) return Broken(code);
      stack_.push_back(suffix_[c]);
      c = prefix_[c];
    }
    stack_.push_back(static_cast<uint8_t>(c));
    first_ = static_cast<uint8_t>(c);
    if (next_ < kTableSize) {
      prefix_[next_] = static_cast<uint16_t>(last_);
      suffix_[next_] = first_;
      if (next_ == (1 << code_size_) - 1 && code_size_ < 12) ++code_size_;
      ++next_;
    }
    last_ = code;
    for (auto it = stack_.rbegin(); it != stack_.rend() && !done(); ++it) Put(*it);
    return arrow::Status::OK();
  }

  void Put(uint8_t value) {
    raster_[static_cast<size_t>(rows_[row_index_]) * width_ + x_] = value;
    if (++x_ == width_) {
      x_ = 0;
      ++row_index_;
    }
  }

  arrow::Status Broken(int code) const {
    return arrow::Status::Invalid("corrupt GIF: LZW code ", code, " is not in the table (", next_,
                                  " entries) at row ", done() ? -1 : rows_[row_index_]);
  }

  const int min_code_size_;
  const int clear_;
  const int width_;
  std::vector<uint8_t> raster_;
  std::vector<int> rows_;
  std::vector<uint16_t> prefix_;
  std::vector<uint8_t> suffix_;
  std::vector<uint8_t> stack_;
  size_t row_index_ = 0;
  int x_ = 0;
  int next_ = 0;
  int code_size_ = 0;
  int last_ = -1;
  uint8_t first_ = 0;
  uint32_t bits_ = 0;
  int bit_count_ = 0;
  bool ended_ = false;
};

}  // namespace

arrow::Result<DecodedImage> DecodeGif(const uint8_t* data, int64_t size, DecodeLimits limits) {
  GifSource source{data, static_cast<size_t>(size), 0};
  int error = 0;
  std::unique_ptr<GifFileType, GifCloser> gif(DGifOpen(&source, ReadGif, &error));
  if (!gif) return arrow::Status::Invalid("corrupt GIF: ", GifErrorString(error));
  ARROW_RETURN_NOT_OK(CheckImageSize(gif->SWidth, gif->SHeight, limits, "GIF", 1));
  // Records up to the first image: its graphic control extension (transparency) and descriptor.
  GraphicsControlBlock gcb;
  gcb.TransparentColor = NO_TRANSPARENT_COLOR;
  for (;;) {
    GifRecordType record;
    if (DGifGetRecordType(gif.get(), &record) != GIF_OK) {
      // A byte that starts no record is skipped, as Pillow skips it (the byte is consumed).
      if (gif->Error == D_GIF_ERR_WRONG_RECORD) continue;
      return arrow::Status::Invalid("corrupt or truncated GIF: ", GifErrorString(gif->Error));
    }
    if (record == IMAGE_DESC_RECORD_TYPE) break;
    if (record == TERMINATE_RECORD_TYPE) return arrow::Status::Invalid("corrupt GIF: no image");
    if (record != EXTENSION_RECORD_TYPE) return arrow::Status::Invalid("corrupt GIF: unexpected record");
    int code = 0;
    GifByteType* block = nullptr;
    if (DGifGetExtension(gif.get(), &code, &block) != GIF_OK) {
      return arrow::Status::Invalid("corrupt or truncated GIF: ", GifErrorString(gif->Error));
    }
    if (code == GRAPHICS_EXT_FUNC_CODE && block != nullptr && block[0] >= 4) {
      DGifExtensionToGCB(block[0], block + 1, &gcb);
    }
    while (block != nullptr) {
      if (DGifGetExtensionNext(gif.get(), &block) != GIF_OK) {
        return arrow::Status::Invalid("corrupt or truncated GIF: ", GifErrorString(gif->Error));
      }
    }
  }
  if (DGifGetImageDesc(gif.get()) != GIF_OK) {
    return arrow::Status::Invalid("corrupt or truncated GIF: ", GifErrorString(gif->Error));
  }
  const GifImageDesc desc = gif->Image;
  if (desc.Width <= 0 || desc.Height <= 0) {
    return arrow::Status::Invalid("corrupt GIF: frame of ", desc.Width, "x", desc.Height, " pixels");
  }
  // A frame reaching past the logical screen grows the canvas, as in Pillow.
  const bool alpha = gcb.TransparentColor != NO_TRANSPARENT_COLOR;
  const int64_t canvas_width = std::max<int64_t>(gif->SWidth, int64_t{desc.Left} + desc.Width);
  const int64_t canvas_height = std::max<int64_t>(gif->SHeight, int64_t{desc.Top} + desc.Height);
  // The frame's indices (1 byte per pixel, at most the canvas) and the canvas' RGB(A) pixels.
  ARROW_RETURN_NOT_OK(CheckImageSize(canvas_width, canvas_height, limits, "GIF", alpha ? 5 : 4));
  int min_code_size = 0;
  GifByteType* block = nullptr;
  if (DGifGetCode(gif.get(), &min_code_size, &block) != GIF_OK) {
    return arrow::Status::Invalid("corrupt or truncated GIF: ", GifErrorString(gif->Error));
  }
  if (min_code_size < 0 || min_code_size > 11) {
    return arrow::Status::Invalid("corrupt GIF: LZW code size ", min_code_size);
  }
  LzwFrame lzw(min_code_size, desc.Width, desc.Height, desc.Interlace);
  while (block != nullptr && !lzw.done() && !lzw.ended()) {
    ARROW_RETURN_NOT_OK(lzw.Feed(block + 1, block[0]));
    if (lzw.done() || lzw.ended()) break;
    if (DGifGetCodeNext(gif.get(), &block) != GIF_OK) {
      return arrow::Status::Invalid("truncated GIF: the image data ends early (", GifErrorString(gif->Error),
                                    ")");
    }
  }
  if (!lzw.done()) {
    return arrow::Status::Invalid("corrupt or truncated GIF: the image data ends before its last pixel");
  }
  const ColorMapObject* colors = desc.ColorMap ? desc.ColorMap : gif->SColorMap;
  if (colors == nullptr) return arrow::Status::Invalid("corrupt GIF: no color map");
  DecodedImage out;
  out.width = static_cast<int32_t>(canvas_width);
  out.height = static_cast<int32_t>(canvas_height);
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
  for (int y = 0; y < desc.Height; ++y) {
    const int oy = desc.Top + y;
    if (oy < 0 || oy >= out.height) continue;
    for (int x = 0; x < desc.Width; ++x) {
      const int ox = desc.Left + x;
      if (ox < 0 || ox >= out.width) continue;
      const int index = lzw.raster()[static_cast<size_t>(y) * desc.Width + x];
      uint8_t* d = out.pixels.data() + (static_cast<size_t>(oy) * out.width + ox) * channels;
      if (alpha && index == gcb.TransparentColor) continue;  // stays (0, 0, 0, 0)
      if (index < colors->ColorCount) {
        d[0] = colors->Colors[index].Red;
        d[1] = colors->Colors[index].Green;
        d[2] = colors->Colors[index].Blue;
      } else {  // an index past the color map is black, as in Pillow
        d[0] = d[1] = d[2] = 0;
      }
      if (alpha) d[3] = 255;
    }
  }
  return out;
}

}  // namespace ketch::image
