#include "ketch/functions/media/video_decoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "media_test_util.h"

namespace ketch::media {
namespace {

struct Collected : VideoFrameSink {
  std::vector<std::vector<uint8_t>> pixels;
  std::vector<VideoFrameInfo> infos;
  arrow::Result<uint8_t*> Prepare(int64_t bytes) override {
    pixels.emplace_back(static_cast<size_t>(bytes));
    return pixels.back().data();
  }
  arrow::Status Commit(const VideoFrameInfo& info) override {
    infos.push_back(info);
    return arrow::Status::OK();
  }
};

// The RGB value of flat gray luma `y` (neutral chroma): libswscale reads y4m as limited range (BT.601).
int Gray(int y) { return static_cast<int>(std::lround((y - 16) * 255.0 / 219.0)); }

Collected DecodeAll(std::shared_ptr<arrow::Buffer> bytes, VideoFrameOptions options) {
  Collected out;
  auto decoder = VideoFrameDecoder::Open(std::move(bytes), std::move(options));
  EXPECT_TRUE(decoder.ok()) << decoder.status().ToString();
  if (!decoder.ok()) return out;
  while (true) {
    auto more = (*decoder)->Next(&out);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
  }
  return out;
}

TEST(VideoDecoder, MetadataFromTheHeader) {
  auto meta = ReadVideoMetadata(Y4m(64, 48, 10), AvLimits{});
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_EQ(meta->width, 64);
  EXPECT_EQ(meta->height, 48);
  ASSERT_TRUE(meta->fps.has_value());
  EXPECT_DOUBLE_EQ(*meta->fps, 25.0);
  ASSERT_TRUE(meta->time_base.has_value());
  EXPECT_DOUBLE_EQ(*meta->time_base, 1.0 / 25);
}

TEST(VideoDecoder, EveryFrameWithTimesAndPixels) {
  auto frames = DecodeAll(Y4m(64, 48, 10), VideoFrameOptions{});
  ASSERT_EQ(frames.infos.size(), 10u);
  for (int k = 0; k < 10; ++k) {
    const auto& info = frames.infos[k];
    EXPECT_EQ(info.frame_index, k);
    ASSERT_TRUE(info.frame_time.has_value());
    EXPECT_NEAR(*info.frame_time, k / 25.0, 1e-9);
    EXPECT_EQ(info.frame_time_base, "1/25");
    EXPECT_EQ(info.width, 64);
    EXPECT_EQ(info.height, 48);
    ASSERT_EQ(frames.pixels[k].size(), 64u * 48 * 3);
    for (uint8_t value : frames.pixels[k]) ASSERT_NEAR(value, Gray(20 + 16 * k), 2) << "frame " << k;
  }
}

TEST(VideoDecoder, ResizeTimeRangeAndSampling) {
  VideoFrameOptions options;
  options.width = 32;
  options.height = 20;
  options.start_time = 0.1;  // frames 3.. (0.12 s)
  options.end_time = 0.3;    // ..7 (0.28 s)
  auto frames = DecodeAll(Y4m(64, 48, 10), options);
  ASSERT_EQ(frames.infos.size(), 5u);
  EXPECT_EQ(frames.infos.front().frame_index, 3);
  EXPECT_EQ(frames.pixels.front().size(), 32u * 20 * 3);
  EXPECT_NEAR(frames.pixels.front()[0], Gray(20 + 16 * 3), 2);

  VideoFrameOptions sampled;
  sampled.sample_interval_seconds = 0.1;  // 0, 0.12, 0.2, 0.32
  frames = DecodeAll(Y4m(64, 48, 10), sampled);
  std::vector<int64_t> indexes;
  for (const auto& info : frames.infos) indexes.push_back(info.frame_index);
  EXPECT_EQ(indexes, (std::vector<int64_t>{0, 3, 5, 8}));
}

TEST(VideoDecoder, OneFrameByIndex) {
  VideoFrameOptions options;
  options.only_index = 7;
  auto frames = DecodeAll(Y4m(64, 48, 10), options);
  ASSERT_EQ(frames.infos.size(), 1u);
  EXPECT_EQ(frames.infos[0].frame_index, 7);
  EXPECT_NEAR(frames.pixels[0][0], Gray(20 + 16 * 7), 2);
}

TEST(VideoDecoder, PartsOfASplitVideoInOrderEqualTheWhole) {
  for (std::optional<double> interval : {std::optional<double>(), std::optional<double>(0.1)}) {
    VideoFrameOptions whole_options;
    whole_options.counter_index = true;
    whole_options.sample_interval_seconds = interval;
    auto whole = DecodeAll(Y4m(64, 48, 10), whole_options);
    std::vector<int64_t> expected, got;
    for (const auto& info : whole.infos) expected.push_back(info.frame_index);
    std::vector<uint8_t> first_pixels;
    for (int32_t part = 0; part < 3; ++part) {
      VideoFrameOptions options = whole_options;
      options.range_index = part;
      options.range_count = 3;
      auto frames = DecodeAll(Y4m(64, 48, 10), options);
      EXPECT_FALSE(frames.infos.empty()) << "part " << part;
      for (size_t k = 0; k < frames.infos.size(); ++k) {
        const int64_t index = frames.infos[k].frame_index;
        got.push_back(index);
        EXPECT_NEAR(frames.pixels[k][0], Gray(20 + 16 * static_cast<int>(index)), 2) << "frame " << index;
      }
    }
    EXPECT_EQ(got, expected);
  }
  VideoFrameOptions bad;
  bad.counter_index = true;
  bad.range_index = 3;
  bad.range_count = 3;
  EXPECT_TRUE(VideoFrameDecoder::Open(Y4m(64, 48, 10), bad).status().IsInvalid());
}

TEST(VideoDecoder, RefusesBadInput) {
  VideoFrameOptions options;
  options.max_pixels = 1000;
  auto big = VideoFrameDecoder::Open(Y4m(64, 48, 1), options);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("claims 64x48"), std::string::npos) << big.status().ToString();

  auto empty = VideoFrameDecoder::Open(arrow::Buffer::FromString(""), VideoFrameOptions{});
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(empty.status().IsInvalid());

  VideoFrameOptions budget;
  budget.max_output_bytes = 64 * 48 * 3 * 2;
  auto decoder = VideoFrameDecoder::Open(Y4m(64, 48, 10), budget);
  ASSERT_TRUE(decoder.ok());
  Collected sink;
  EXPECT_TRUE((*decoder)->Next(&sink).ok());
  EXPECT_TRUE((*decoder)->Next(&sink).ok());
  auto third = (*decoder)->Next(&sink);
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.status().message().find("memory budget"), std::string::npos);
}

}  // namespace
}  // namespace ketch::media
