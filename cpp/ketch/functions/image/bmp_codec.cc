// BMP, read the way Pillow's BmpImagePlugin reads it (header types, pixel depths and compressions it
// accepts; palette entries past the end of the file are black): uncompressed 1/4/8-bit palette,
// 16-bit 5-5-5, 24 and 32-bit files and RLE8 / RLE4 files (following Pillow's BmpRleDecoder) are
// decoded here; bit-field files go through stb_image (Debian's libstb shared library). Palette files
// decode to RGB, or L when the palette is all grays. Files too short for the pixel rows their
// header declares are refused as truncated, as Pillow refuses them.

#include <stb_image.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "ketch/functions/image/codec_formats.h"

namespace ketch::image {
namespace {

uint32_t ReadLe(const uint8_t* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A palette BMP (<= 8 bits per pixel) whose palette is all grays: Pillow opens it as mode L.
bool HasGrayPalette(const uint8_t* data, int64_t size) {
  if (size < 54) return false;
  const uint32_t header = ReadLe(data + 14, 4);
  const uint32_t bits = ReadLe(data + 28, 2);
  if (header < 40 || bits > 8 || bits == 0) return false;
  uint32_t colors = ReadLe(data + 46, 4);
  if (colors == 0) colors = 1u << bits;
  const int64_t palette = 14 + static_cast<int64_t>(header);
  if (palette + 4 * static_cast<int64_t>(colors) > size) return false;
  for (uint32_t c = 0; c < colors; ++c) {
    const uint8_t* e = data + palette + 4 * c;
    if (e[0] != e[1] || e[1] != e[2]) return false;
  }
  return true;
}

// 32 bits per pixel without bit-field masks (BI_RGB): the 4th byte is reserved, not alpha (as Pillow
// reads it).
bool ReservedFourthByte(const uint8_t* data, int64_t size) {
  if (size < 54) return false;
  return ReadLe(data + 14, 4) >= 40 && ReadLe(data + 28, 2) == 32 && ReadLe(data + 30, 4) == 0;
}

// The parts of a BMP header that decide where the pixels are and how many bytes they need.
struct BmpLayout {
  int64_t header_size = 0;
  int64_t width = 0;
  int64_t height = 0;  // rows, positive
  bool top_down = false;
  int64_t bits = 0;
  int64_t compression = 0;  // 0 RGB, 1 RLE8, 2 RLE4, 3 BITFIELDS
  int64_t colors = 0;       // palette entries (bits <= 8)
  int64_t palette_offset = 0;
  int64_t palette_entry = 4;  // bytes per palette entry (3 for OS/2 1.x headers)
  int64_t data_offset = 0;
};

arrow::Result<BmpLayout> ReadBmpLayout(const uint8_t* data, int64_t size) {
  if (size < 18) return arrow::Status::Invalid("truncated BMP: ", size, " bytes cannot hold its header");
  BmpLayout layout;
  layout.header_size = ReadLe(data + 14, 4);
  if (size < 14 + layout.header_size) {
    return arrow::Status::Invalid("truncated BMP: ", size, " bytes cannot hold its ", layout.header_size,
                                  "-byte header");
  }
  if (layout.header_size == 12) {
    layout.width = ReadLe(data + 18, 2);
    layout.height = ReadLe(data + 20, 2);
    layout.bits = ReadLe(data + 24, 2);
    layout.palette_entry = 3;
  } else if (layout.header_size == 40 || layout.header_size == 52 || layout.header_size == 56 ||
             layout.header_size == 64 || layout.header_size == 108 || layout.header_size == 124) {
    layout.width = static_cast<int32_t>(ReadLe(data + 18, 4));
    const auto height = static_cast<int32_t>(ReadLe(data + 22, 4));
    layout.top_down = height < 0;
    layout.height = height < 0 ? -int64_t{height} : height;
    layout.bits = ReadLe(data + 28, 2);
    layout.compression = ReadLe(data + 30, 4);
    layout.colors = ReadLe(data + 46, 4);
  } else {
    return arrow::Status::Invalid("corrupt BMP: unsupported header size ", layout.header_size);
  }
  if (layout.bits != 1 && layout.bits != 4 && layout.bits != 8 && layout.bits != 16 && layout.bits != 24 &&
      layout.bits != 32) {
    return arrow::Status::Invalid("corrupt BMP: unsupported pixel depth ", layout.bits);
  }
  if (layout.compression > 3) {
    return arrow::Status::Invalid("corrupt BMP: unsupported compression ", layout.compression);
  }
  if (layout.bits <= 8 && layout.colors == 0) layout.colors = int64_t{1} << layout.bits;
  layout.palette_offset = 14 + layout.header_size;
  const int64_t palette_bytes = layout.bits <= 8 ? layout.palette_entry * layout.colors : 0;
  layout.data_offset = ReadLe(data + 10, 4);
  // As Pillow: an offset pointing at the palette (or none) means the pixels follow the palette.
  if (layout.data_offset == 0 || (layout.data_offset == layout.palette_offset && layout.bits <= 8)) {
    layout.data_offset = layout.palette_offset + palette_bytes;
  }
  return layout;
}

// Uncompressed and bit-field BMPs: every row must be there.
arrow::Status CheckBmpRows(const BmpLayout& layout, int64_t size) {
  if (layout.compression != 0 && layout.compression != 3) return arrow::Status::OK();
  const int64_t stride = ((layout.width * layout.bits + 31) >> 3) & ~int64_t{3};
  const int64_t needed = layout.data_offset + stride * layout.height;
  if (needed > size) {
    return arrow::Status::Invalid("truncated BMP: ", size, " bytes, but its ", layout.width, "x",
                                  layout.height, " pixel rows end at byte ", needed);
  }
  return arrow::Status::OK();
}

// RLE8 / RLE4 pixel data to palette indices, in file row order, with Pillow's BmpRleDecoder rules
// (runs clipped to the row, end-of-line pads the row, delta skips, absolute runs word-aligned in the
// file). Data that ends (or an end-of-bitmap) before every pixel is set is refused, as Pillow does.
arrow::Result<std::vector<uint8_t>> DecodeBmpRle(const uint8_t* data, int64_t size, const BmpLayout& layout) {
  const bool rle4 = layout.compression == 2;
  const int64_t width = layout.width;
  const int64_t total = width * layout.height;
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(total));
  int64_t pos = layout.data_offset;
  int64_t x = 0;
  auto fill_zero = [&](int64_t count) { out.insert(out.end(), static_cast<size_t>(count), uint8_t{0}); };
  while (static_cast<int64_t>(out.size()) < total) {
    if (pos + 2 > size) break;
    const int64_t count = data[pos];
    const uint8_t value = data[pos + 1];
    pos += 2;
    if (count > 0) {  // encoded run
      const int64_t n = x + count > width ? std::max<int64_t>(0, width - x) : count;
      for (int64_t i = 0; i < n; ++i) {
        out.push_back(rle4 ? static_cast<uint8_t>(i % 2 == 0 ? value >> 4 : value & 0x0F) : value);
      }
      x += n;
    } else if (value == 0) {  // end of line
      const int64_t rem = static_cast<int64_t>(out.size()) % width;
      if (rem != 0) fill_zero(width - rem);
      x = 0;
    } else if (value == 1) {  // end of bitmap
      break;
    } else if (value == 2) {  // delta: right, up
      if (pos + 2 > size) break;
      const int64_t skip = data[pos] + int64_t{data[pos + 1]} * width;
      pos += 2;
      fill_zero(std::min(total - static_cast<int64_t>(out.size()), skip));
      x = static_cast<int64_t>(out.size()) % width;
    } else {  // absolute run of `value` pixels
      const int64_t wanted = std::min<int64_t>(total - static_cast<int64_t>(out.size()), value);
      const int64_t byte_count = rle4 ? (wanted + 1) / 2 : wanted;
      const int64_t got = std::min(byte_count, size - pos);
      for (int64_t i = 0; i < got; ++i) {
        if (rle4) {
          out.push_back(data[pos + i] >> 4);
          if (i * 2 + 1 < wanted) out.push_back(data[pos + i] & 0x0F);
        } else {
          out.push_back(data[pos + i]);
        }
      }
      pos += got;
      if (got < byte_count || static_cast<int64_t>(out.size()) == total) break;
      x += value;
      if (pos % 2 != 0) ++pos;
    }
  }
  if (static_cast<int64_t>(out.size()) < total) {
    return arrow::Status::Invalid("corrupt or truncated BMP: its RLE data sets ", out.size(), " of ", total,
                                  " pixels");
  }
  return out;
}

// Palette indices (in file row order: bottom-up unless the height is negative) to RGB, or L when the
// palette is all grays. An index past the palette is black, as in Pillow.
DecodedImage PaletteImage(const std::vector<uint8_t>& indices, const BmpLayout& layout, const uint8_t* data,
                          int64_t size) {
  DecodedImage out;
  out.width = static_cast<int32_t>(layout.width);
  out.height = static_cast<int32_t>(layout.height);
  out.mode = ImageMode::kRGB;
  out.pixels.resize(indices.size() * 3);
  const uint8_t* palette = data + layout.palette_offset;
  // As Pillow reads it: the entries the file holds (a palette may run past the end of the file).
  const int64_t colors =
      std::min(layout.colors, std::max<int64_t>(0, size - layout.palette_offset) / layout.palette_entry);
  for (int64_t row = 0; row < layout.height; ++row) {
    const int64_t dst_row = layout.top_down ? row : layout.height - 1 - row;
    for (int64_t col = 0; col < layout.width; ++col) {
      const uint8_t index = indices[static_cast<size_t>(row * layout.width + col)];
      uint8_t* d = out.pixels.data() + (dst_row * layout.width + col) * 3;
      if (index < colors) {
        const uint8_t* e = palette + index * layout.palette_entry;  // B, G, R(, X)
        d[0] = e[2], d[1] = e[1], d[2] = e[0];
      } else {
        d[0] = d[1] = d[2] = 0;
      }
    }
  }
  if (HasGrayPalette(data, size)) return ConvertMode(out.view(), ImageMode::kL);
  return out;
}

arrow::Status CheckPalette(const BmpLayout& layout, int64_t size) {
  if (layout.colors <= 0 || layout.colors > 65536) {
    return arrow::Status::Invalid("corrupt BMP: palette of ", layout.colors, " colors");
  }
  // Pillow keeps what the file holds of the palette, and refuses more than 256 entries.
  const int64_t bytes = std::min(layout.colors * layout.palette_entry, size - layout.palette_offset);
  if (bytes > 256 * layout.palette_entry) {
    return arrow::Status::Invalid("corrupt BMP: palette of ", layout.colors, " colors (at most 256)");
  }
  return arrow::Status::OK();
}

arrow::Result<DecodedImage> DecodeRleBmp(const uint8_t* data, int64_t size, const BmpLayout& layout) {
  if (layout.bits != (layout.compression == 2 ? 4 : 8)) {
    return arrow::Status::Invalid("corrupt BMP: RLE", layout.compression == 2 ? 4 : 8, " with ", layout.bits,
                                  " bits per pixel");
  }
  ARROW_RETURN_NOT_OK(CheckPalette(layout, size));
  ARROW_ASSIGN_OR_RAISE(auto indices, DecodeBmpRle(data, size, layout));
  return PaletteImage(indices, layout, data, size);
}

// Uncompressed 1, 4 and 8 bits per pixel (rows already checked to fit in the file).
arrow::Result<DecodedImage> DecodePaletteBmp(const uint8_t* data, int64_t size, const BmpLayout& layout) {
  ARROW_RETURN_NOT_OK(CheckPalette(layout, size));
  const int64_t bits = layout.bits;
  const int64_t stride = ((layout.width * bits + 31) >> 3) & ~int64_t{3};
  std::vector<uint8_t> indices(static_cast<size_t>(layout.width * layout.height));
  for (int64_t row = 0; row < layout.height; ++row) {
    const uint8_t* src = data + layout.data_offset + row * stride;
    uint8_t* dst = indices.data() + row * layout.width;
    for (int64_t col = 0; col < layout.width; ++col) {
      const int64_t bit = col * bits;
      dst[col] = static_cast<uint8_t>((src[bit >> 3] >> (8 - bits - (bit & 7))) & ((1 << bits) - 1));
    }
  }
  return PaletteImage(indices, layout, data, size);
}

// Uncompressed 16 (5-5-5), 24 and 32 bits per pixel (B, G, R, unused), as Pillow reads them: RGB.
DecodedImage DecodeDirectBmp(const uint8_t* data, const BmpLayout& layout) {
  const int64_t stride = ((layout.width * layout.bits + 31) >> 3) & ~int64_t{3};
  DecodedImage out;
  out.width = static_cast<int32_t>(layout.width);
  out.height = static_cast<int32_t>(layout.height);
  out.mode = ImageMode::kRGB;
  out.pixels.resize(static_cast<size_t>(layout.width * layout.height * 3));
  for (int64_t row = 0; row < layout.height; ++row) {
    const uint8_t* src = data + layout.data_offset + row * stride;
    const int64_t dst_row = layout.top_down ? row : layout.height - 1 - row;
    uint8_t* dst = out.pixels.data() + dst_row * layout.width * 3;
    for (int64_t col = 0; col < layout.width; ++col, dst += 3) {
      if (layout.bits == 16) {
        const uint32_t v = ReadLe(src + col * 2, 2);
        dst[0] = static_cast<uint8_t>(((v >> 10) & 31) * 255 / 31);
        dst[1] = static_cast<uint8_t>(((v >> 5) & 31) * 255 / 31);
        dst[2] = static_cast<uint8_t>((v & 31) * 255 / 31);
      } else {
        const uint8_t* p = src + col * (layout.bits / 8);
        dst[0] = p[2], dst[1] = p[1], dst[2] = p[0];
      }
    }
  }
  return out;
}

}  // namespace

arrow::Result<DecodedImage> DecodeBmp(const uint8_t* data, int64_t size, DecodeLimits limits) {
  if (size > INT32_MAX) return arrow::Status::Invalid("BMP file too large (", size, " bytes)");
  const int len = static_cast<int>(size);
  ARROW_ASSIGN_OR_RAISE(auto layout, ReadBmpLayout(data, size));
  ARROW_RETURN_NOT_OK(CheckImageSize(layout.width, layout.height, limits, "BMP",
                                     layout.bits == 32 || layout.bits == 16 ? 4 : 3));
  if (layout.compression == 1 || layout.compression == 2) return DecodeRleBmp(data, size, layout);
  ARROW_RETURN_NOT_OK(CheckBmpRows(layout, size));
  if (layout.compression == 0) {
    if (layout.bits <= 8) return DecodePaletteBmp(data, size, layout);
    return DecodeDirectBmp(data, layout);
  }
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(data, len, &width, &height, &channels)) {
    return arrow::Status::Invalid("corrupt BMP: ", stbi_failure_reason());
  }
  ARROW_RETURN_NOT_OK(CheckImageSize(width, height, limits, "BMP", channels));
  std::unique_ptr<stbi_uc, decltype(&stbi_image_free)> pixels(
      stbi_load_from_memory(data, len, &width, &height, &channels, 0), &stbi_image_free);
  if (!pixels) return arrow::Status::Invalid("corrupt or truncated BMP: ", stbi_failure_reason());
  if (channels < 1 || channels > 4) return arrow::Status::Invalid("BMP with ", channels, " channels");
  DecodedImage out;
  out.width = width;
  out.height = height;
  out.mode = static_cast<ImageMode>(channels);
  out.pixels.assign(pixels.get(), pixels.get() + static_cast<size_t>(width) * height * channels);
  if (channels == 3 && HasGrayPalette(data, size)) return ConvertMode(out.view(), ImageMode::kL);
  if (channels == 4 && ReservedFourthByte(data, size)) return ConvertMode(out.view(), ImageMode::kRGB);
  return out;
}

}  // namespace ketch::image
