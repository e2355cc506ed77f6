#include "ketch/functions/media/video_scan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "media_test_util.h"
#include "test_util.h"

namespace ketch::media {
namespace {

VideoScanOptions Options(int height, int width) {
  VideoScanOptions options;
  options.image_height = height;
  options.image_width = width;
  return options;
}

std::vector<std::string> AllColumns() {
  std::vector<std::string> names;
  const auto schema = VideoFramesSchema(1, 1);
  for (const auto& field : schema->fields()) names.push_back(field->name());
  return names;
}

TEST(VideoFrameStream, BatchesOfAtMostTheAskedFramesWithTheScanSchema) {
  auto stream = VideoFrameStream::Open("clip.y4m", Y4m(32, 16, 10), Options(8, 12), AllColumns(), nullptr);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  EXPECT_EQ((*stream)->row_bytes(), 64 + 8 * 12 * 3);
  std::vector<int64_t> sizes;
  int64_t index = 0;
  while (true) {
    auto batch = (*stream)->Next(4);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    if (*batch == nullptr) break;
    ASSERT_OK((*batch)->ValidateFull());
    EXPECT_TRUE((*batch)->schema()->Equals(*VideoFramesSchema(8, 12)));
    sizes.push_back((*batch)->num_rows());
    const auto& frame_index =
        static_cast<const arrow::Int64Array&>(*(*batch)->GetColumnByName("frame_index"));
    const auto& path = static_cast<const arrow::LargeStringArray&>(*(*batch)->GetColumnByName("path"));
    for (int64_t i = 0; i < (*batch)->num_rows(); ++i, ++index) {
      EXPECT_EQ(frame_index.Value(i), index);
      EXPECT_EQ(path.GetView(i), "clip.y4m");
    }
    // The pixels: 8 x 12 RGB per row, flat gray of the frame's luma.
    const auto& data = static_cast<const arrow::ExtensionArray&>(*(*batch)->GetColumnByName("data"));
    const auto& storage = static_cast<const arrow::FixedSizeListArray&>(*data.storage());
    EXPECT_EQ(storage.value_length(), 8 * 12 * 3);
    const int64_t first = index - (*batch)->num_rows();
    const auto* pixels = static_cast<const arrow::UInt8Array&>(*storage.values()).raw_values();
    const int expected = static_cast<int>(std::lround((20 + 16 * first - 16) * 255.0 / 219.0));
    EXPECT_NEAR(pixels[0], expected, 2);
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ((*stream)->decoded_frames(), 10);
}

TEST(VideoFrameStream, WithoutDataNoPixelsAndOnlyTheAskedColumns) {
  auto stream = VideoFrameStream::Open("clip.y4m", Y4m(32, 16, 6), Options(8, 12),
                                       {"is_key_frame", "frame_index"}, nullptr);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  EXPECT_EQ((*stream)->row_bytes(), 64);
  auto batch = (*stream)->Next(100);
  ASSERT_TRUE(batch.ok() && *batch != nullptr);
  EXPECT_EQ((*batch)->num_rows(), 6);
  ASSERT_EQ((*batch)->num_columns(), 2);
  EXPECT_EQ((*batch)->schema()->field(0)->name(), "is_key_frame");
  EXPECT_EQ((*batch)->schema()->field(1)->name(), "frame_index");
  auto end = (*stream)->Next(100);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, nullptr);
}

TEST(VideoFrameStream, StopsAfterTheAskedFramesAndRefusesBadInput) {
  auto stream = VideoFrameStream::Open("clip.y4m", Y4m(32, 16, 50), Options(8, 12), AllColumns(), nullptr);
  ASSERT_TRUE(stream.ok());
  auto batch = (*stream)->Next(3);
  ASSERT_TRUE(batch.ok() && *batch != nullptr);
  EXPECT_EQ((*batch)->num_rows(), 3);
  EXPECT_EQ((*stream)->decoded_frames(), 3);  // not the clip's 50
  EXPECT_TRUE(
      VideoFrameStream::Open("x", arrow::Buffer::FromString(""), Options(8, 12), AllColumns(), nullptr)
          .status()
          .IsInvalid());
  EXPECT_TRUE(
      VideoFrameStream::Open("x", Y4m(32, 16, 2), Options(8, 12), {"nope"}, nullptr).status().IsKeyError());
  EXPECT_TRUE(VideoFrameStream::Open("x", Y4m(32, 16, 2), Options(0, 12), AllColumns(), nullptr)
                  .status()
                  .IsInvalid());
}

}  // namespace
}  // namespace ketch::media
