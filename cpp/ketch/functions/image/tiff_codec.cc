// TIFF through libtiff on in-memory streams (TIFFClientOpen). Decoding uses TIFFReadRGBAImage, which
// handles every photometric interpretation, bit depth and compression libtiff knows; the result
// keeps the file's channels (L, LA, RGB, RGBA). Encoding writes 8-bit strips, LZW-compressed.

#include <tiffio.h>

#include <cstring>
#include <memory>
#include <string>

#include "ketch/functions/image/codec_formats.h"

namespace ketch::image {
namespace {

struct MemoryStream {
  const uint8_t* data = nullptr;        // reading
  std::vector<uint8_t>* out = nullptr;  // writing
  toff_t size = 0;
  toff_t pos = 0;
};

tsize_t StreamRead(thandle_t h, tdata_t buf, tsize_t n) {
  auto* s = static_cast<MemoryStream*>(h);
  if (!s->data || s->pos >= s->size) return 0;
  const toff_t take = std::min<toff_t>(static_cast<toff_t>(n), s->size - s->pos);
  std::memcpy(buf, s->data + s->pos, take);
  s->pos += take;
  return static_cast<tsize_t>(take);
}

tsize_t StreamWrite(thandle_t h, tdata_t buf, tsize_t n) {
  auto* s = static_cast<MemoryStream*>(h);
  if (!s->out) return 0;
  if (s->pos + n > s->out->size()) s->out->resize(s->pos + n);
  std::memcpy(s->out->data() + s->pos, buf, n);
  s->pos += n;
  s->size = std::max<toff_t>(s->size, s->pos);
  return n;
}

toff_t StreamSeek(thandle_t h, toff_t off, int whence) {
  auto* s = static_cast<MemoryStream*>(h);
  toff_t base = whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->size : 0;
  s->pos = base + off;
  return s->pos;
}

int StreamClose(thandle_t) { return 0; }
toff_t StreamSize(thandle_t h) { return static_cast<MemoryStream*>(h)->size; }
int StreamMap(thandle_t, tdata_t*, toff_t*) { return 0; }
void StreamUnmap(thandle_t, tdata_t, toff_t) {}

// libtiff reports through global handlers; the last message of this thread is kept for the Status.
thread_local std::string tiff_error;
void OnTiffError(const char* module, const char* fmt, va_list ap) {
  char buf[512];
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  tiff_error = std::string(module ? module : "tiff") + ": " + buf;
}
void OnTiffWarning(const char*, const char*, va_list) {}

struct TiffCloser {
  void operator()(TIFF* tif) const { TIFFClose(tif); }
};

void InstallHandlers() {
  static const bool installed = [] {
    TIFFSetErrorHandler(OnTiffError);
    TIFFSetWarningHandler(OnTiffWarning);
    return true;
  }();
  (void)installed;
}

}  // namespace

arrow::Result<DecodedImage> DecodeTiff(const uint8_t* data, int64_t size, DecodeLimits limits) {
  InstallHandlers();
  tiff_error.clear();
  MemoryStream stream{data, nullptr, static_cast<toff_t>(size), 0};
  std::unique_ptr<TIFF, TiffCloser> tif(TIFFClientOpen("memory", "rm", &stream, StreamRead, StreamWrite,
                                                       StreamSeek, StreamClose, StreamSize, StreamMap,
                                                       StreamUnmap));
  if (!tif) return arrow::Status::Invalid("corrupt TIFF: ", tiff_error);
  uint32_t width = 0, height = 0;
  uint16_t samples = 1, extra_count = 0;
  uint16_t* extra = nullptr;
  TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &height);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLESPERPIXEL, &samples);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
  ARROW_RETURN_NOT_OK(CheckImageSize(width, height, limits, "TIFF"));
  uint16_t bits = 8, planar = PLANARCONFIG_CONTIG, photometric = PHOTOMETRIC_MINISBLACK;
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetField(tif.get(), TIFFTAG_PHOTOMETRIC, &photometric);
  const int plain_channels = samples;
  if (bits == 8 && planar == PLANARCONFIG_CONTIG && !TIFFIsTiled(tif.get()) && plain_channels >= 1 &&
      plain_channels <= 4 && extra_count <= 1 &&
      ((photometric == PHOTOMETRIC_MINISBLACK && samples - extra_count == 1) ||
       (photometric == PHOTOMETRIC_RGB && samples - extra_count == 3))) {
    // 8-bit gray or RGB in strips: the stored samples as they are (alpha not premultiplied).
    DecodedImage out;
    out.width = static_cast<int32_t>(width);
    out.height = static_cast<int32_t>(height);
    out.mode = static_cast<ImageMode>(plain_channels);
    const size_t row_bytes = static_cast<size_t>(width) * plain_channels;
    if (static_cast<size_t>(TIFFScanlineSize(tif.get())) != row_bytes) {
      return arrow::Status::Invalid("corrupt TIFF: unexpected scanline size");
    }
    out.pixels.resize(row_bytes * height);
    for (uint32_t y = 0; y < height; ++y) {
      if (TIFFReadScanline(tif.get(), out.pixels.data() + y * row_bytes, y, 0) < 0) {
        return arrow::Status::Invalid("corrupt or truncated TIFF: ", tiff_error);
      }
    }
    return out;
  }
  // Everything else (palette, YCbCr/JPEG, CMYK, 1/4/16-bit, tiles) through libtiff's RGBA reader.
  std::vector<uint32_t> raster(static_cast<size_t>(width) * height);
  if (!TIFFReadRGBAImageOriented(tif.get(), width, height, raster.data(), ORIENTATION_TOPLEFT, 0)) {
    return arrow::Status::Invalid("corrupt or unsupported TIFF: ", tiff_error);
  }
  const bool alpha = extra_count > 0;
  // Palette, YCbCr, CMYK and Lab images come out of the RGBA reader in color.
  const bool color = samples - extra_count >= 3 ||
                     (photometric != PHOTOMETRIC_MINISBLACK && photometric != PHOTOMETRIC_MINISWHITE);
  DecodedImage out;
  out.width = static_cast<int32_t>(width);
  out.height = static_cast<int32_t>(height);
  out.mode = color ? (alpha ? ImageMode::kRGBA : ImageMode::kRGB) : (alpha ? ImageMode::kLA : ImageMode::kL);
  const int channels = ModeChannels(out.mode);
  out.pixels.resize(raster.size() * channels);
  for (size_t p = 0; p < raster.size(); ++p) {
    const uint32_t v = raster[p];
    uint8_t* d = out.pixels.data() + p * channels;
    if (color) {
      d[0] = TIFFGetR(v), d[1] = TIFFGetG(v), d[2] = TIFFGetB(v);
    } else {
      d[0] = TIFFGetR(v);
    }
    if (alpha) d[channels - 1] = TIFFGetA(v);
  }
  return out;
}

arrow::Result<std::vector<uint8_t>> EncodeTiff(const ImageView& image) {
  InstallHandlers();
  tiff_error.clear();
  std::vector<uint8_t> bytes;
  MemoryStream stream{nullptr, &bytes, 0, 0};
  std::unique_ptr<TIFF, TiffCloser> tif(TIFFClientOpen("memory", "w", &stream, StreamRead, StreamWrite,
                                                       StreamSeek, StreamClose, StreamSize, StreamMap,
                                                       StreamUnmap));
  if (!tif) return arrow::Status::Invalid("TIFF encoding failed: ", tiff_error);
  const int channels = image.channels();
  const bool color = channels >= 3;
  TIFFSetField(tif.get(), TIFFTAG_IMAGEWIDTH, static_cast<uint32_t>(image.width));
  TIFFSetField(tif.get(), TIFFTAG_IMAGELENGTH, static_cast<uint32_t>(image.height));
  TIFFSetField(tif.get(), TIFFTAG_SAMPLESPERPIXEL, static_cast<uint16_t>(channels));
  TIFFSetField(tif.get(), TIFFTAG_BITSPERSAMPLE, static_cast<uint16_t>(8));
  TIFFSetField(tif.get(), TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(tif.get(), TIFFTAG_PHOTOMETRIC, color ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  TIFFSetField(tif.get(), TIFFTAG_COMPRESSION, COMPRESSION_LZW);
  if (channels == 2 || channels == 4) {
    uint16_t kind = EXTRASAMPLE_UNASSALPHA;
    TIFFSetField(tif.get(), TIFFTAG_EXTRASAMPLES, 1, &kind);
  }
  TIFFSetField(tif.get(), TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif.get(), 0));
  const size_t row_bytes = static_cast<size_t>(image.width) * channels;
  std::vector<uint8_t> row(row_bytes);
  for (int32_t y = 0; y < image.height; ++y) {
    std::memcpy(row.data(), image.data + y * row_bytes, row_bytes);
    if (TIFFWriteScanline(tif.get(), row.data(), static_cast<uint32_t>(y), 0) < 0) {
      return arrow::Status::Invalid("TIFF encoding failed: ", tiff_error);
    }
  }
  tif.reset();  // flushes the directory into `bytes`
  return bytes;
}

}  // namespace ketch::image
