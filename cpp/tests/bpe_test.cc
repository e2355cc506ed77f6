#include "ketch/functions/tokenize/bpe.h"

#include <random>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace ketch::tokenize {
namespace {

// A failed status whose message contains `part`.
#define EXPECT_THAT_STATUS_MESSAGE(status_expr, part)                                 \
  do {                                                                                \
    const arrow::Status _status = (status_expr);                                      \
    EXPECT_FALSE(_status.ok());                                                       \
    EXPECT_NE(_status.message().find(part), std::string::npos) << _status.ToString(); \
  } while (false)

// All 256 single bytes (rank = byte value) plus `merges` ranked 256, 257, ... in order.
std::vector<RankedToken> Vocabulary(const std::vector<std::string>& merges) {
  std::vector<RankedToken> tokens;
  for (int b = 0; b < 256; ++b)
    tokens.push_back({std::string(1, static_cast<char>(b)), static_cast<uint32_t>(b)});
  for (size_t i = 0; i < merges.size(); ++i) tokens.push_back({merges[i], static_cast<uint32_t>(256 + i)});
  return tokens;
}

std::shared_ptr<const BytePairEncoder> MakeEncoder(const std::vector<std::string>& merges,
                                                   std::vector<SpecialToken> specials = {},
                                                   const std::string& pattern = R"(\S+|\s+)") {
  auto encoder = BytePairEncoder::Make(Vocabulary(merges), std::move(specials), pattern);
  EXPECT_TRUE(encoder.ok()) << encoder.status().ToString();
  return *encoder;
}

std::vector<uint32_t> EncodePiece(const BytePairEncoder& encoder, const std::string& piece, bool heap) {
  auto scratch = encoder.NewScratch();
  EXPECT_TRUE(scratch.ok());
  std::vector<uint32_t> out;
  auto status = encoder.EncodePiece(piece, heap, scratch->get(), &out);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return out;
}

TEST(ParseTiktokenBpe, ReadsLinesAndNamesBadOnes) {
  // "YQ==" = "a", "YWI=" = "ab", "YWJj" = "abc" (RFC 4648 examples' alphabet).
  auto parsed = ParseTiktokenBpe("YQ== 0\r\nYWI= 7 extra\n\nYWJj 12\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ((*parsed)[0].bytes, "a");
  EXPECT_EQ((*parsed)[1].bytes, "ab");
  EXPECT_EQ((*parsed)[1].rank, 7u);
  EXPECT_EQ((*parsed)[2].bytes, "abc");
  EXPECT_EQ((*parsed)[2].rank, 12u);
  EXPECT_THAT_STATUS_MESSAGE(ParseTiktokenBpe("YQ== 0\nYWI=\n").status(), "line 2");
  EXPECT_THAT_STATUS_MESSAGE(ParseTiktokenBpe("Y!== 0\n").status(), "invalid base64");
  EXPECT_THAT_STATUS_MESSAGE(ParseTiktokenBpe("YQ== -1\n").status(), "invalid rank");
  EXPECT_THAT_STATUS_MESSAGE(ParseTiktokenBpe("\n\n").status(), "no tokens");
}

TEST(BytePairEncoder, MergesLowestRankFirst) {
  // "ab" (256) beats "bc" (257): a b c → ab c → abc (258).
  auto encoder = MakeEncoder({"ab", "bc", "abc"});
  for (bool heap : {false, true}) {
    EXPECT_EQ(EncodePiece(*encoder, "abc", heap), (std::vector<uint32_t>{258}));
    // "bc" first when "ab" ranks lower: b c a b → bc a b → bc ab.
    EXPECT_EQ(EncodePiece(*encoder, "bcab", heap), (std::vector<uint32_t>{257, 256}));
  }
  // Ties go left: a a a with "aa" → aa a.
  auto ties = MakeEncoder({"aa"});
  for (bool heap : {false, true})
    EXPECT_EQ(EncodePiece(*ties, "aaa", heap), (std::vector<uint32_t>{256, 'a'}));
}

TEST(BytePairEncoder, HeapMergeEqualsLinearMerge) {
  std::mt19937 rng(7);
  std::vector<std::string> merges;
  std::uniform_int_distribution<int> letter(0, 3);
  std::set<std::string> seen;
  while (merges.size() < 60) {
    std::string token;
    const int length = 2 + static_cast<int>(rng() % 4);
    for (int i = 0; i < length; ++i) token.push_back(static_cast<char>('a' + letter(rng)));
    if (seen.insert(token).second) merges.push_back(token);
  }
  auto encoder = MakeEncoder(merges);
  for (int trial = 0; trial < 300; ++trial) {
    std::string piece;
    const int length = 1 + static_cast<int>(rng() % 80);
    for (int i = 0; i < length; ++i) piece.push_back(static_cast<char>('a' + letter(rng)));
    EXPECT_EQ(EncodePiece(*encoder, piece, false), EncodePiece(*encoder, piece, true)) << piece;
  }
}

TEST(BytePairEncoder, SpecialTokensAndDecode) {
  auto encoder = MakeEncoder({"ab"}, {{"<|end|>", 300}, {"<|end|>x", 301}});
  auto scratch = *encoder->NewScratch();
  std::vector<uint32_t> out;
  ASSERT_TRUE(encoder->Encode("ab<|end|>xab", true, scratch.get(), &out).ok());
  EXPECT_EQ(out, (std::vector<uint32_t>{256, 301, 256}));  // the longest special at a position
  out.clear();
  ASSERT_TRUE(encoder->Encode("ab<|end|>", false, scratch.get(), &out).ok());
  EXPECT_EQ(out.size(), 8u);  // ab, then the 7 bytes of "<|end|>" (no merges among them)
  std::string text;
  ASSERT_TRUE(encoder->Decode(out.data(), static_cast<int64_t>(out.size()), &text).ok());
  EXPECT_EQ(text, "ab<|end|>");
  const uint32_t bad[] = {97, 9999};
  EXPECT_THAT_STATUS_MESSAGE(encoder->Decode(bad, 2, &text), "token id 9999");
}

TEST(BytePairEncoder, LookaheadPatternAndMissingBytes) {
  // The GPT-2 pattern's `\s+(?!\S)` leaves the last space to the next word (PCRE2 lookahead).
  auto encoder = MakeEncoder({}, {}, R"( ?\p{L}+|\s+(?!\S)|\s+)");
  auto scratch = *encoder->NewScratch();
  std::vector<uint32_t> out;
  ASSERT_TRUE(encoder->Encode("a   b", false, scratch.get(), &out).ok());
  EXPECT_EQ(out, (std::vector<uint32_t>{'a', ' ', ' ', ' ', 'b'}));
  EXPECT_THAT_STATUS_MESSAGE(BytePairEncoder::CheckPattern("(unclosed"), "invalid tokenizer pattern");
  auto partial = BytePairEncoder::Make({{"a", 0}}, {}, R"(\S+)");
  ASSERT_TRUE(partial.ok());
  auto partial_scratch = *(*partial)->NewScratch();
  EXPECT_THAT_STATUS_MESSAGE((*partial)->Encode("ab", false, partial_scratch.get(), &out), "byte 0x62");
}

}  // namespace
}  // namespace ketch::tokenize
