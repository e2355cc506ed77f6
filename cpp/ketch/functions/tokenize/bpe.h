#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ketch::tokenize {

/// One line of a tiktoken BPE file: the token's bytes and its rank (= its token id).
struct RankedToken {
  std::string bytes;
  uint32_t rank = 0;
};

/// A special token: a text matched literally (never split by the pattern) and its id.
struct SpecialToken {
  std::string text;
  uint32_t id = 0;
};

/// Parses a tiktoken BPE file: one token per line, "BASE64 RANK" (standard base64 alphabet,
/// padded; the rank a decimal id below 2^32 - 1). Anything after the second space-separated field
/// is ignored (as Daft); empty lines and a final "\r" are skipped. Errors: Invalid naming the
/// 1-based line for a line without a rank, bad base64 or a bad rank; Invalid for a file without
/// tokens.
arrow::Result<std::vector<RankedToken>> ParseTiktokenBpe(std::string_view text);

class BytePairEncoder;

/// Per-thread working memory of BytePairEncoder::Encode (PCRE2 match data and JIT stack, the
/// merge loop's parts). Create one per thread and call (not shareable between threads).
class EncodeScratch {
 public:
  ~EncodeScratch();
  EncodeScratch(const EncodeScratch&) = delete;
  EncodeScratch& operator=(const EncodeScratch&) = delete;

 private:
  friend class BytePairEncoder;
  EncodeScratch() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A byte-pair encoder with tiktoken's semantics (github.com/openai/tiktoken, src/lib.rs, CoreBPE):
/// the text is split into pieces by a regular expression (`pattern`, PCRE2 with UTF and Unicode
/// properties, JIT-compiled: the tiktoken patterns use lookaheads such as `\s+(?!\S)`); a piece
/// that is a token is that token, otherwise its bytes are merged pairwise, always merging the
/// adjacent pair whose concatenation has the lowest rank (the leftmost one on ties), until no
/// adjacent pair is a token (tiktoken's `_byte_pair_merge`). Immutable after Make: shareable
/// between threads. PCRE2's Unicode classes agree with tiktoken's regex engine on every code point
/// but U+180E, which PCRE2's `\s` still matches (Unicode dropped it from White_Space in 6.3).
class BytePairEncoder {
 public:
  /// Errors: Invalid when two tokens share a rank or bytes, when a special token's id is also an
  /// ordinary rank or its text is empty, or when `pattern` does not compile (naming the pattern
  /// and PCRE2's message with its offset).
  static arrow::Result<std::shared_ptr<const BytePairEncoder>> Make(std::vector<RankedToken> ranks,
                                                                    std::vector<SpecialToken> specials,
                                                                    const std::string& pattern);

  /// Checks that `pattern` compiles (plan-time validation); Invalid as Make otherwise.
  static arrow::Status CheckPattern(const std::string& pattern);

  ~BytePairEncoder();

  arrow::Result<std::unique_ptr<EncodeScratch>> NewScratch() const;

  /// Appends the token ids of `text` (valid UTF-8, unchecked) to `out`. With
  /// `use_special_tokens`, occurrences of special-token texts become their ids (leftmost first,
  /// the longest one at a position) and the text between them is encoded on its own (tiktoken's
  /// `encode` with every special token allowed); without, special texts are ordinary text
  /// (tiktoken's `encode_ordinary`). Errors: Invalid when a byte has no token of its own (a
  /// vocabulary without all 256 single bytes) or PCRE2 fails (match or JIT stack limit).
  arrow::Status Encode(std::string_view text, bool use_special_tokens, EncodeScratch* scratch,
                       std::vector<uint32_t>* out) const;

  /// Appends the bytes of `tokens` (ordinary and special) to `out`; the caller checks UTF-8.
  /// Errors: Invalid naming the first id that is neither a rank nor a special token's id.
  arrow::Status Decode(const uint32_t* tokens, int64_t count, std::string* out) const;

  /// The bytes of one token id; false when the id is unknown.
  bool TokenBytes(uint32_t id, std::string_view* bytes) const;

  /// The largest ordinary rank.
  uint32_t max_rank() const { return max_rank_; }
  int64_t num_tokens() const { return static_cast<int64_t>(entries_.size()); }
  const std::vector<SpecialToken>& special_tokens() const { return specials_; }

  /// Pieces longer than this many bytes merge with a heap (O(n log n)) instead of tiktoken's
  /// linear rescans (O(n^2)); both give the same tokens. Tests lower it to compare the two.
  static constexpr size_t kLinearMergeMaxBytes = 256;
  /// Encodes one piece (no pre-tokenization): the merge loop alone, `heap` choosing the variant.
  arrow::Status EncodePiece(std::string_view piece, bool heap, EncodeScratch* scratch,
                            std::vector<uint32_t>* out) const;

 private:
  BytePairEncoder() = default;
  static constexpr uint32_t kNoRank = UINT32_MAX;

  /// The rank of these bytes, kNoRank when they are not a token.
  uint32_t Lookup(const uint8_t* bytes, size_t length) const;
  arrow::Status EncodeOrdinary(const char* text, size_t length, EncodeScratch* scratch,
                               std::vector<uint32_t>* out) const;
  arrow::Status MergeLinear(const uint8_t* piece, size_t length, EncodeScratch* scratch,
                            std::vector<uint32_t>* out) const;
  arrow::Status MergeHeap(const uint8_t* piece, size_t length, EncodeScratch* scratch,
                          std::vector<uint32_t>* out) const;
  arrow::Status AppendToken(const uint8_t* bytes, size_t length, std::vector<uint32_t>* out) const;
  /// The next special token at or after `from`: its position and index, or npos.
  std::pair<size_t, size_t> FindSpecial(std::string_view text, size_t from) const;

  struct Entry {
    uint64_t offset;  ///< into arena_
    uint32_t length;
    uint32_t rank;
  };
  std::string arena_;            // all token bytes, back to back
  std::vector<Entry> entries_;   // one per ordinary token
  std::vector<uint32_t> slots_;  // open addressing: entry index + 1, 0 = empty
  uint64_t slot_mask_ = 0;
  std::vector<int64_t> by_rank_;  // rank → entry index (-1: none) when ranks are dense
  std::unordered_map<uint32_t, uint32_t> sparse_by_rank_;  // otherwise
  uint32_t max_rank_ = 0;

  std::vector<SpecialToken> specials_;
  std::unordered_map<uint32_t, uint32_t> special_by_id_;       // id → index into specials_
  std::vector<std::vector<uint32_t>> specials_by_first_byte_;  // 256 lists, longest text first

  struct Regex;
  std::unique_ptr<Regex> regex_;
};

}  // namespace ketch::tokenize
