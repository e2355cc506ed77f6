#include "ketch/io/formats/text_checks.h"

#include <arrow/io/memory.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace ketch::io {
namespace {

// Feeds `text` to `checker` in blocks of `block` bytes (so state crosses block boundaries), then
// finishes it; returns the first error.
arrow::Status Feed(TextChecker* checker, const std::string& text, size_t block) {
  for (size_t i = 0; i < text.size(); i += block) {
    const size_t n = std::min(block, text.size() - i);
    ARROW_RETURN_NOT_OK(checker->Consume(reinterpret_cast<const uint8_t*>(text.data() + i), n));
  }
  return checker->Finish();
}

arrow::Status CheckJson(const std::string& text, size_t block = 1 << 20) {
  JsonLineChecker checker;
  return Feed(&checker, text, block);
}

arrow::Status CheckCsv(const std::string& text, CsvOptions options = {}, size_t block = 1 << 20) {
  CsvQuoteChecker checker(options);
  return Feed(&checker, text, block);
}

TEST(JsonLineChecker, NestingLimitNamesTheLine) {
  std::string ok = "{\"a\":";
  ok.append(kMaxJsonNesting - 1, '[').append(kMaxJsonNesting - 1, ']').append("}\n");
  ASSERT_OK(CheckJson(ok + ok));
  const std::string deep =
      std::string(kMaxJsonNesting + 1, '[') + std::string(kMaxJsonNesting + 1, ']') + "\n";
  for (size_t block : {1, 3, 1 << 20}) {
    auto st = CheckJson(ok + ok + deep, block);
    ASSERT_TRUE(st.IsInvalid()) << st.ToString();
    EXPECT_NE(st.message().find("line 3 "), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(std::to_string(kMaxJsonNesting) + " levels"), std::string::npos)
        << st.message();
  }
  // 100k levels (RapidJSON's stack overflow) are refused at level 101.
  EXPECT_TRUE(CheckJson(std::string(100000, '[')).IsInvalid());
}

TEST(JsonLineChecker, BracketsInStringsAndEscapesDoNotCount) {
  const std::string brackets(500, '[');
  ASSERT_OK(CheckJson("{\"s\": \"" + brackets + "\", \"t\": \"\\\"" + brackets + "\"}\n", 7));
  // An escaped backslash ends the escape: the quote after it closes the string.
  auto st = CheckJson("{\"s\": \"\\\\\", \"t\": " + brackets + "}\n");
  EXPECT_TRUE(st.IsInvalid());
  // Depth is counted per line: unbalanced lines do not add up.
  std::string lines;
  for (int i = 0; i < 10; ++i) lines += std::string(kMaxJsonNesting / 2, '[') + "\n";
  ASSERT_OK(CheckJson(lines));
}

TEST(JsonLineChecker, Utf8IsValidatedAcrossBlocks) {
  const std::string text = "{\"s\": \"h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80\"}\n";  // é € 😀
  for (size_t block : {1, 2, 3, 5, 1 << 20}) ASSERT_OK(CheckJson(text, block));
  for (const std::string bad : {"\xFF", "\xC0\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82", "\x80"}) {
    auto st = CheckJson("{\"a\": 1}\n{\"s\": \"" + bad + "\"}\n", 1);
    ASSERT_TRUE(st.IsInvalid()) << "accepted " << bad;
    EXPECT_NE(st.message().find("line 2 is not valid UTF-8"), std::string::npos) << st.message();
  }
  EXPECT_TRUE(CheckJson("{\"s\": \"\xE2\x82").IsInvalid());  // ends inside a character
}

TEST(JsonLineChecker, MeasuresTheLongestLine) {
  JsonLineChecker checker;
  ASSERT_OK(Feed(&checker, "{}\n{\"a\": 12345}\n{}", 4));
  EXPECT_EQ(checker.longest_record(), 13);
  EXPECT_EQ(checker.longest_record_line(), 2);
}

TEST(CsvQuoteChecker, UnterminatedQuoteNamesRowAndLine) {
  auto st = CheckCsv("a,b\n\n1,2\n\"x\ny\",3\n4,\"5\n6,7\n", {}, 2);
  ASSERT_TRUE(st.IsInvalid()) << st.ToString();
  // Rows as Arrow counts them (the header is row 1, empty lines are skipped); lines as editors do.
  EXPECT_NE(st.message().find("Row #4: the quoted field opened on line 6"), std::string::npos)
      << st.message();
}

TEST(CsvQuoteChecker, ClosedQuotesAndLiteralQuotes) {
  for (size_t block : {1, 2, 1 << 20}) {
    ASSERT_OK(CheckCsv("a,b\r\n1,\"x\"\"y\"\r\n2,z\"w\r\n3,\"ok\"tail\r\n", {}, block));
    ASSERT_OK(CheckCsv("a\n\"\"\n\"\"\"\"\n", {}, block));  // empty quoted field; one quote
  }
  CsvOptions escaped;
  escaped.escape = '\\';
  ASSERT_OK(CheckCsv("a,b\n1,\"x\\\"y\"\n", escaped));
  EXPECT_TRUE(CheckCsv("a,b\n1,\"x\\\"\n", escaped).IsInvalid());
  CsvOptions unquoted;
  unquoted.quoting = false;
  ASSERT_OK(CheckCsv("a,b\n1,\"x\n", unquoted));
  CsvOptions no_double;
  no_double.double_quote = false;
  ASSERT_OK(CheckCsv("a,b\n1,\"x\"\"\n", no_double));  // "x" then a literal quote
}

TEST(CsvQuoteChecker, MeasuresTheLongestRowWithQuotedNewlines) {
  CsvQuoteChecker checker({});
  ASSERT_OK(Feed(&checker, "a,b\n1,\"x\n\nyz\"\n2,3\n", 3));
  EXPECT_EQ(checker.longest_record(), 10);  // 1,"x\n\nyz"\n
  EXPECT_EQ(checker.longest_record_line(), 2);
}

TEST(FastCsvQuoteChecker, AgreesWithTheFullChecker) {
  const std::vector<std::string> inputs = {
      "a,b\n1,2\n",        "a,b\n1,\"x\"\"y\"\n", "a,b\n1,z\"w\n",
      "a,b\n1,\"x\n",      "a,b\n\"x\ny\",3\n",   "a\n\"\"\n\"\"\"\"\n",
      "a\n\"\"\"\n",       "a,b\r\n\"x\r\n",      "a,b\n1,\"ok\"tail\"\n",
      "\xEF\xBB\xBF\"a\n", "\xEF\xBB\xBF\"a\"\n", "\"",
      "a\n\"x\"\"",        "a\n\"x\"\"\"",        "",
  };
  for (const auto& text : inputs) {
    const bool full_ok = CheckCsv(text).ok();
    for (size_t block : {1, 2, 3, 1 << 20}) {
      if (text.rfind("\xEF", 0) == 0 && block < 3) continue;  // a byte order mark is in the first block
      FastCsvQuoteChecker fast({});
      auto st = Feed(&fast, text, block);
      EXPECT_EQ(st.ok(), full_ok) << "input " << text << " block " << block << ": " << st.ToString();
      if (!st.ok()) EXPECT_NE(st.message().find(kRecheckForRow), std::string::npos);
    }
  }
}

TEST(CheckedInputStream, ChecksWhatIsReadAndFinishesAtTheEnd) {
  auto source = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString("a,b\n1,\"2\n"));
  CheckedInputStream stream(source, std::make_unique<CsvQuoteChecker>(CsvOptions{}));
  ASSERT_OK_AND_ASSIGN(auto first, stream.Read(4));
  EXPECT_EQ(first->ToString(), "a,b\n");
  ASSERT_OK_AND_ASSIGN(auto rest, stream.Read(100));
  EXPECT_EQ(rest->size(), 5);
  auto end = stream.Read(100);
  ASSERT_FALSE(end.ok());
  EXPECT_NE(end.status().message().find("Row #2"), std::string::npos) << end.status().message();
}

}  // namespace
}  // namespace ketch::io
