#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include "ketch/exec/sinks/write_sink.h"
#include "ketch/io/formats/ndjson_writer.h"

namespace ketch {
namespace {

TEST(WritersTest, HivePathSegmentsEscapeEverythingButUnreservedBytes) {
  EXPECT_EQ(EscapeHivePathSegment("2024-01_x.y~z"), "2024-01_x.y~z");
  EXPECT_EQ(EscapeHivePathSegment("../../etc"), "..%2F..%2Fetc");
  EXPECT_EQ(EscapeHivePathSegment("a/b\\c"), "a%2Fb%5Cc");
  EXPECT_EQ(EscapeHivePathSegment(std::string("n\0l", 3)), "n%00l");
  EXPECT_EQ(EscapeHivePathSegment("100% = é"), "100%25%20%3D%20%C3%A9");
  EXPECT_EQ(EscapeHivePathSegment(""), "");
}

TEST(WritersTest, JsonStringsEscapeQuotesBackslashesAndControlCharacters) {
  std::string out;
  io::AppendJsonString("q\"b\\n\n\r\t\b\f\x01\x1f\x7f é", &out);
  EXPECT_EQ(out, "\"q\\\"b\\\\n\\n\\r\\t\\b\\f\\u0001\\u001f\x7f é\"");
}

TEST(WritersTest, NdjsonRowsWithNullsNestedValuesAndTimestamps) {
  auto schema = arrow::schema({arrow::field("i", arrow::int32()), arrow::field("f", arrow::float64()),
                               arrow::field("l", arrow::list(arrow::int64())),
                               arrow::field("t", arrow::timestamp(arrow::TimeUnit::SECOND, "UTC"))});
  auto batch = arrow::RecordBatch::Make(
      schema, 2,
      {arrow::json::ArrayFromJSONString(arrow::int32(), "[1, null]").ValueOrDie(),
       arrow::json::ArrayFromJSONString(arrow::float64(), "[2, 0.5]").ValueOrDie(),
       arrow::json::ArrayFromJSONString(arrow::list(arrow::int64()), "[[1, null], null]").ValueOrDie(),
       arrow::json::ArrayFromJSONString(arrow::timestamp(arrow::TimeUnit::SECOND, "UTC"), "[86400, null]")
           .ValueOrDie()});
  ASSERT_TRUE(io::CheckNdjsonSchema(*schema, "write_json").ok());
  std::string out;
  ASSERT_TRUE(io::AppendNdjson(*batch, &out).ok());
  EXPECT_EQ(out,
            "{\"i\":1,\"f\":2.0,\"l\":[1,null],\"t\":\"1970-01-02T00:00:00Z\"}\n"
            "{\"i\":null,\"f\":0.5,\"l\":null,\"t\":null}\n");
  auto binary = arrow::schema({arrow::field("b", arrow::binary())});
  auto refused = io::CheckNdjsonSchema(*binary, "write_json");
  EXPECT_TRUE(refused.IsTypeError());
  EXPECT_NE(refused.message().find("column 'b' has type binary"), std::string::npos);
}

}  // namespace
}  // namespace ketch
