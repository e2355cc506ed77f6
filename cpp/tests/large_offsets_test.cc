#include "ketch/types/large_offsets.h"

#include <arrow/compute/api.h>
#include <gtest/gtest.h>

namespace ketch {
namespace {

std::shared_ptr<arrow::Array> Binary(const std::vector<std::string>& values) {
  arrow::BinaryBuilder builder;
  for (const auto& v : values) EXPECT_TRUE(builder.Append(v).ok());
  return builder.Finish().ValueOrDie();
}

TEST(LargeOffsetsTest, WidensEveryNestedOffsetType) {
  EXPECT_TRUE(WithLargeOffsets(arrow::binary())->Equals(*arrow::large_binary()));
  EXPECT_TRUE(WithLargeOffsets(arrow::utf8())->Equals(*arrow::large_utf8()));
  auto nested =
      arrow::struct_({arrow::field("frames", arrow::list(arrow::binary())), arrow::field("n", arrow::int64()),
                      arrow::field("tags", arrow::fixed_size_list(arrow::utf8(), 2))});
  auto widened = arrow::struct_({arrow::field("frames", arrow::large_list(arrow::large_binary())),
                                 arrow::field("n", arrow::int64()),
                                 arrow::field("tags", arrow::fixed_size_list(arrow::large_utf8(), 2))});
  EXPECT_TRUE(WithLargeOffsets(nested)->Equals(*widened));
  EXPECT_TRUE(HasSmallOffsets(nested));
  EXPECT_FALSE(HasSmallOffsets(widened));
  EXPECT_FALSE(HasSmallOffsets(arrow::int32()));
  EXPECT_FALSE(HasSmallOffsets(arrow::large_list(arrow::large_utf8())));
}

TEST(LargeOffsetsTest, ConcatenatesChunksThatFitInTheirOwnType) {
  auto one = Binary({"ab", "c"});
  auto two = Binary({"", "defg"});
  auto out = ConcatenateWidening({one, two}, arrow::binary()).ValueOrDie();
  EXPECT_TRUE(out->type()->Equals(*arrow::binary()));
  EXPECT_TRUE(out->Equals(*Binary({"ab", "c", "", "defg"})));
  EXPECT_EQ(ConcatenateWidening({one}, arrow::binary()).ValueOrDie(), one);  // no copy
  EXPECT_EQ(ConcatenateWidening({}, arrow::binary()).ValueOrDie()->length(), 0);
}

TEST(LargeOffsetsTest, CompactRebasesASliceSoANarrowingCastSeesItsOwnValues) {
  auto large = arrow::compute::Cast(*Binary({"xx", "yyy", "z"}), arrow::large_binary()).ValueOrDie();
  auto slice = large->Slice(1, 2);
  auto compact = Compact(slice).ValueOrDie();
  EXPECT_EQ(compact->offset(), 0);
  EXPECT_EQ(static_cast<const arrow::LargeBinaryArray&>(*compact).value_offset(0), 0);
  EXPECT_TRUE(compact->Equals(*slice));
  EXPECT_EQ(Compact(large).ValueOrDie(), large);  // not a slice: as it is
}

}  // namespace
}  // namespace ketch
