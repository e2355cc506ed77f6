#include <png.h>
#include <turbojpeg.h>

#include <cmath>
#include <cstring>

#include "ketch/expr/function_registry.h"
#include "ketch/functions/image/codecs.h"
#include "ketch/functions/image/image_functions.h"
#include "test_util.h"

namespace ketch::image {
namespace {

::testing::Environment* const env = ::testing::AddGlobalTestEnvironment(new testing::Environment);

std::vector<uint8_t> Pattern(int w, int h, int c) {
  std::vector<uint8_t> pixels(static_cast<size_t>(w) * h * c);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>((i * 37 + i / 7) % 256);
  return pixels;
}

std::vector<uint8_t> EncodePng(const std::vector<uint8_t>& pixels, int w, int h, int c) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  png.width = w;
  png.height = h;
  png.format = c == 1 ? PNG_FORMAT_GRAY : c == 2 ? PNG_FORMAT_GA : c == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
  png_alloc_size_t size = 0;
  EXPECT_TRUE(png_image_write_to_memory(&png, nullptr, &size, 0, pixels.data(), 0, nullptr));
  std::vector<uint8_t> out(size);
  EXPECT_TRUE(png_image_write_to_memory(&png, out.data(), &size, 0, pixels.data(), 0, nullptr));
  out.resize(size);
  return out;
}

TEST(ImageCodecs, PngRoundTripIsExactForEveryMode) {
  for (int c = 1; c <= 4; ++c) {
    auto pixels = Pattern(13, 7, c);
    auto png = EncodePng(pixels, 13, 7, c);
    ASSERT_EQ(SniffFormat(png.data(), png.size()), ImageFormat::kPng);
    auto decoded = Decode(png.data(), png.size(), kMaxImagePixels);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(decoded->width, 13);
    EXPECT_EQ(decoded->height, 7);
    EXPECT_EQ(ModeChannels(decoded->mode), c);
    EXPECT_EQ(decoded->pixels, pixels);
  }
}

TEST(ImageCodecs, JpegDecodesCloseToSource) {
  // A smooth gradient survives JPEG at quality 95 within a few levels.
  const int w = 32, h = 24;
  std::vector<uint8_t> pixels(w * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int ch = 0; ch < 3; ++ch)
        pixels[(y * w + x) * 3 + ch] = static_cast<uint8_t>(x * 4 + y * 2 + ch * 10);
  tjhandle handle = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  ASSERT_EQ(tjCompress2(handle, pixels.data(), w, 0, h, TJPF_RGB, &jpeg, &size, TJSAMP_444, 95, 0), 0);
  auto decoded = Decode(jpeg, size, kMaxImagePixels);
  tjFree(jpeg);
  tjDestroy(handle);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->mode, ImageMode::kRGB);
  double total = 0;
  for (size_t i = 0; i < pixels.size(); ++i) total += std::abs(int(decoded->pixels[i]) - int(pixels[i]));
  EXPECT_LT(total / pixels.size(), 2.0);
}

TEST(ImageCodecs, FailedJpegHeaderDoesNotPoisonTheNextJpeg) {
  // The header pass and the decode pass share one TurboJPEG handle per thread: a JPEG cut before
  // its scan data must not make the next (valid) JPEG fail on this thread.
  const int w = 16, h = 8;
  auto pixels = Pattern(w, h, 3);
  tjhandle handle = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  ASSERT_EQ(tjCompress2(handle, pixels.data(), w, 0, h, TJPF_RGB, &jpeg, &size, TJSAMP_420, 90, 0), 0);
  std::vector<uint8_t> good(jpeg, jpeg + size);
  tjFree(jpeg);
  tjDestroy(handle);
  size_t sos = 0;
  for (size_t i = 0; i + 1 < good.size(); ++i) {
    if (good[i] == 0xFF && good[i + 1] == 0xDA) {
      sos = i;
      break;
    }
  }
  ASSERT_GT(sos, 0u);
  for (int round = 0; round < 3; ++round) {
    EXPECT_FALSE(ReadJpegHeader(good.data(), static_cast<int64_t>(sos), kMaxImagePixels).ok());
    auto header = ReadJpegHeader(good.data(), static_cast<int64_t>(good.size()), kMaxImagePixels);
    ASSERT_TRUE(header.ok()) << header.status().ToString();
    EXPECT_FALSE(ReadJpegHeader(good.data(), static_cast<int64_t>(sos), kMaxImagePixels).ok());
    std::vector<uint8_t> out(header->num_bytes());
    auto st = DecodeJpegInto(good.data(), static_cast<int64_t>(good.size()), *header, out.data());
    ASSERT_TRUE(st.ok()) << st.ToString();
    auto reference = Decode(good.data(), static_cast<int64_t>(good.size()), kMaxImagePixels);
    ASSERT_TRUE(reference.ok());
    EXPECT_EQ(out, reference->pixels);
  }
}

TEST(ImageCodecs, CorruptAndOversizeInputsAreRefused) {
  auto png = EncodePng(Pattern(8, 8, 3), 8, 8, 3);
  auto truncated = std::vector<uint8_t>(png.begin(), png.begin() + png.size() / 2);
  EXPECT_FALSE(Decode(truncated.data(), truncated.size(), kMaxImagePixels).ok());
  EXPECT_FALSE(Decode(png.data(), 0, kMaxImagePixels).ok());
  const uint8_t garbage[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto unknown = Decode(garbage, sizeof(garbage), kMaxImagePixels);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unrecognized"), std::string::npos);
  // The header's size is checked before any pixel buffer is allocated.
  auto oversize = Decode(png.data(), png.size(), 63);
  ASSERT_FALSE(oversize.ok());
  EXPECT_NE(oversize.status().message().find("exceeds"), std::string::npos);
}

TEST(ImageCodecs, ModeConversionFollowsPillow) {
  const uint8_t rgb[] = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
  auto grey = ConvertMode(ImageView{rgb, 1, 4, ImageMode::kRGB}, ImageMode::kL);
  // Pillow: L = (R*299 + G*587 + B*114) / 1000, rounded.
  EXPECT_EQ(grey.pixels, (std::vector<uint8_t>{76, 150, 29, 18}));
  auto rgba = ConvertMode(ImageView{rgb, 1, 4, ImageMode::kRGB}, ImageMode::kRGBA);
  EXPECT_EQ(rgba.pixels[3], 255);
  EXPECT_EQ(rgba.pixels[4], 0);
  EXPECT_EQ(rgba.pixels[5], 255);
}

TEST(ImageResize, SameSizeIsIdentityAndConstantStaysConstant) {
  auto pixels = Pattern(9, 5, 3);
  std::vector<uint8_t> out(pixels.size());
  ResizeBilinear(ImageView{pixels.data(), 5, 9, ImageMode::kRGB}, 9, 5, out.data());
  EXPECT_EQ(out, pixels);
  std::vector<uint8_t> flat(40 * 30, 77), small(7 * 3);
  ResizeBilinear(ImageView{flat.data(), 30, 40, ImageMode::kL}, 7, 3, small.data());
  for (auto v : small) EXPECT_EQ(v, 77);
}

TEST(ImageResize, DownscaleByTwoAveragesNeighbourhoods) {
  // 4x1 → 2x1: Pillow's bilinear with support 2 at scale 2 weighs taps (0.25, 0.75, 0.75, 0.25)/2.
  const uint8_t row[] = {0, 100, 200, 40};
  uint8_t out[2];
  ResizeBilinear(ImageView{row, 1, 4, ImageMode::kL}, 2, 1, out);
  // center 1.0: taps x=0..2 with weights 0.75, 0.75, 0.25 (normalised /1.75) → (0*.75+100*.75+200*.25)/1.75
  EXPECT_EQ(out[0], static_cast<uint8_t>(std::lround((0 * 0.75 + 100 * 0.75 + 200 * 0.25) / 1.75)));
  EXPECT_EQ(out[1], static_cast<uint8_t>(std::lround((100 * 0.25 + 200 * 0.75 + 40 * 0.75) / 1.75)));
}

TEST(ImageFunctions, DecodeNamesTheFailingRow) {
  auto good = EncodePng(Pattern(4, 4, 3), 4, 4, 3);
  arrow::LargeBinaryBuilder builder;
  ASSERT_OK(builder.Append(good.data(), good.size()));
  ASSERT_OK(builder.Append(good.data(), 10));
  std::shared_ptr<arrow::Array> bytes;
  ASSERT_OK(builder.Finish(&bytes));
  std::shared_ptr<ScalarFunction> decode;
  ASSERT_OK_AND_ASSIGN(decode, FunctionRegistry::Global()->Get("image_decode"));
  auto result = decode->Execute({arrow::Datum(bytes)}, {}, EvalContext{100, 2});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("row 101"), std::string::npos) << result.status().ToString();
  FunctionOptions null_on_error{{"on_error", arrow::MakeScalar("null")}};
  arrow::Datum decoded;
  ASSERT_OK_AND_ASSIGN(decoded, decode->Execute({arrow::Datum(bytes)}, null_on_error, EvalContext{0, 2}));
  EXPECT_EQ(decoded.make_array()->null_count(), 1);
  EXPECT_TRUE(decoded.make_array()->IsNull(1));
}

}  // namespace
}  // namespace ketch::image
