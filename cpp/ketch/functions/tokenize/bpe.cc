// Byte-pair encoding as tiktoken does it (github.com/openai/tiktoken, src/lib.rs: CoreBPE,
// `_byte_pair_merge`, `encode_ordinary`, `encode`), with PCRE2 for the pre-tokenization pattern.

#include "ketch/functions/tokenize/bpe.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <queue>

namespace ketch::tokenize {

namespace {

// -1 for characters outside the standard base64 alphabet.
int Base64Value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Strict RFC 4648 base64 (standard alphabet, padded), as Rust's base64 STANDARD engine.
bool DecodeBase64(std::string_view text, std::string* out) {
  out->clear();
  if (text.size() % 4 != 0) return false;
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : 1;
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    uint32_t group = 0;
    for (size_t j = 0; j < 4; ++j) {
      const bool pad = last && j >= 4 - padding;
      int v = pad ? 0 : Base64Value(static_cast<unsigned char>(text[i + j]));
      if (v < 0) return false;
      group = (group << 6) | static_cast<uint32_t>(v);
    }
    out->push_back(static_cast<char>(group >> 16));
    if (!(last && padding == 2)) out->push_back(static_cast<char>((group >> 8) & 0xFF));
    if (!(last && padding >= 1)) out->push_back(static_cast<char>(group & 0xFF));
  }
  return true;
}

// Length in bytes of the UTF-8 character that starts with `lead` (1 for a stray byte).
size_t Utf8CharLength(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

std::string Pcre2Message(int code) {
  PCRE2_UCHAR buffer[256];
  int n = pcre2_get_error_message(code, buffer, sizeof(buffer));
  return n < 0 ? "PCRE2 error " + std::to_string(code) : std::string(reinterpret_cast<char*>(buffer));
}

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
using CodePtr = std::unique_ptr<pcre2_code, CodeDeleter>;

arrow::Result<CodePtr> CompilePattern(const std::string& pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  CodePtr code(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                             PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr));
  if (!code) {
    return arrow::Status::Invalid("invalid tokenizer pattern '", pattern, "': ", Pcre2Message(error),
                                  " at offset ", offset);
  }
  return code;
}

}  // namespace

arrow::Result<std::vector<RankedToken>> ParseTiktokenBpe(std::string_view text) {
  std::vector<RankedToken> tokens;
  size_t line_start = 0;
  int64_t line_number = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) {
      return arrow::Status::Invalid("invalid line ", line_number,
                                    " in token file (expected 'BASE64 RANK'): '", line.substr(0, 80), "'");
    }
    std::string_view encoded = line.substr(0, space);
    std::string_view rank_text = line.substr(space + 1);
    rank_text = rank_text.substr(0, rank_text.find(' '));
    RankedToken token;
    if (!DecodeBase64(encoded, &token.bytes)) {
      return arrow::Status::Invalid("invalid base64 token '", encoded.substr(0, 80), "' on line ",
                                    line_number, " of the token file");
    }
    uint64_t rank = 0;
    bool ok = !rank_text.empty() && rank_text.size() <= 10;
    for (char c : rank_text) {
      if (c < '0' || c > '9') ok = false;
      rank = rank * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!ok || rank >= UINT32_MAX) {
      return arrow::Status::Invalid("invalid rank '", rank_text.substr(0, 20), "' on line ", line_number,
                                    " of the token file (expected a decimal number below 4294967295)");
    }
    token.rank = static_cast<uint32_t>(rank);
    tokens.push_back(std::move(token));
  }
  if (tokens.empty()) return arrow::Status::Invalid("token file has no tokens");
  return tokens;
}

struct BytePairEncoder::Regex {
  CodePtr code;
  bool jit = false;
};

struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};
struct MatchContextDeleter {
  void operator()(pcre2_match_context* context) const { pcre2_match_context_free(context); }
};
struct JitStackDeleter {
  void operator()(pcre2_jit_stack* stack) const { pcre2_jit_stack_free(stack); }
};

struct EncodeScratch::Impl {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match_data;
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> match_context;
  std::unique_ptr<pcre2_jit_stack, JitStackDeleter> jit_stack;
  // The merge loop's parts: (start byte, rank of the pair starting there).
  std::vector<std::pair<uint32_t, uint32_t>> parts;
  // The heap merge's linked list.
  std::vector<uint32_t> next, prev, pair_rank, version;
};

EncodeScratch::~EncodeScratch() = default;

BytePairEncoder::~BytePairEncoder() = default;

arrow::Status BytePairEncoder::CheckPattern(const std::string& pattern) {
  return CompilePattern(pattern).status();
}

arrow::Result<std::shared_ptr<const BytePairEncoder>> BytePairEncoder::Make(
    std::vector<RankedToken> ranks, std::vector<SpecialToken> specials, const std::string& pattern) {
  std::shared_ptr<BytePairEncoder> encoder(new BytePairEncoder());
  ARROW_ASSIGN_OR_RAISE(auto code, CompilePattern(pattern));
  encoder->regex_ = std::make_unique<Regex>();
  // JIT when the library has it; the interpreter otherwise (same results, slower).
  encoder->regex_->jit = pcre2_jit_compile(code.get(), PCRE2_JIT_COMPLETE) == 0;
  encoder->regex_->code = std::move(code);

  size_t arena_bytes = 0;
  uint32_t max_rank = 0;
  for (const auto& token : ranks) {
    arena_bytes += token.bytes.size();
    max_rank = std::max(max_rank, token.rank);
  }
  encoder->max_rank_ = max_rank;
  encoder->arena_.reserve(arena_bytes);
  encoder->entries_.reserve(ranks.size());
  uint64_t slots = 16;
  while (slots < 2 * ranks.size()) slots <<= 1;
  encoder->slots_.assign(slots, 0);
  encoder->slot_mask_ = slots - 1;
  const bool dense = max_rank < 4 * ranks.size() + 256;
  if (dense) encoder->by_rank_.assign(static_cast<size_t>(max_rank) + 1, -1);
  for (auto& token : ranks) {
    if (token.bytes.empty())
      return arrow::Status::Invalid("token file has an empty token (rank ", token.rank, ")");
    if (token.bytes.size() > UINT32_MAX)
      return arrow::Status::Invalid("token of rank ", token.rank, " is too long");
    const auto* bytes = reinterpret_cast<const uint8_t*>(token.bytes.data());
    if (encoder->Lookup(bytes, token.bytes.size()) != kNoRank) {
      return arrow::Status::Invalid("token file lists the same token bytes twice (ranks ",
                                    encoder->Lookup(bytes, token.bytes.size()), " and ", token.rank, ")");
    }
    const auto index = static_cast<uint32_t>(encoder->entries_.size());
    if (dense) {
      if (encoder->by_rank_[token.rank] >= 0) {
        return arrow::Status::Invalid("token file gives rank ", token.rank, " to two tokens");
      }
      encoder->by_rank_[token.rank] = index;
    } else if (!encoder->sparse_by_rank_.emplace(token.rank, index).second) {
      return arrow::Status::Invalid("token file gives rank ", token.rank, " to two tokens");
    }
    encoder->entries_.push_back(
        {encoder->arena_.size(), static_cast<uint32_t>(token.bytes.size()), token.rank});
    encoder->arena_.append(token.bytes);
    uint64_t slot = XXH3_64bits(bytes, token.bytes.size()) & encoder->slot_mask_;
    while (encoder->slots_[slot] != 0) slot = (slot + 1) & encoder->slot_mask_;
    encoder->slots_[slot] = index + 1;
  }

  encoder->specials_by_first_byte_.resize(256);
  for (uint32_t i = 0; i < specials.size(); ++i) {
    const auto& special = specials[i];
    if (special.text.empty()) return arrow::Status::Invalid("a special token's text is empty");
    std::string_view unused;
    if (encoder->TokenBytes(special.id, &unused)) {
      return arrow::Status::Invalid("special token '", special.text, "' has id ", special.id,
                                    ", which is also an ordinary token's rank");
    }
    if (!encoder->special_by_id_.emplace(special.id, i).second) {
      return arrow::Status::Invalid("two special tokens have id ", special.id);
    }
    encoder->specials_by_first_byte_[static_cast<unsigned char>(special.text[0])].push_back(i);
  }
  encoder->specials_ = std::move(specials);
  for (auto& candidates : encoder->specials_by_first_byte_) {
    std::stable_sort(candidates.begin(), candidates.end(), [&](uint32_t a, uint32_t b) {
      return encoder->specials_[a].text.size() > encoder->specials_[b].text.size();
    });
  }
  return std::shared_ptr<const BytePairEncoder>(std::move(encoder));
}

arrow::Result<std::unique_ptr<EncodeScratch>> BytePairEncoder::NewScratch() const {
  std::unique_ptr<EncodeScratch> scratch(new EncodeScratch());
  scratch->impl_ = std::make_unique<EncodeScratch::Impl>();
  auto& impl = *scratch->impl_;
  impl.match_data.reset(pcre2_match_data_create_from_pattern(regex_->code.get(), nullptr));
  impl.match_context.reset(pcre2_match_context_create(nullptr));
  if (!impl.match_data || !impl.match_context) return arrow::Status::OutOfMemory("PCRE2 match data");
  if (regex_->jit) {
    // PCRE2's default JIT stack is 32 KiB on the machine stack; patterns that backtrack over long
    // runs need more. 64 KiB growing to 8 MiB, allocated lazily by PCRE2.
    impl.jit_stack.reset(pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr));
    if (!impl.jit_stack) return arrow::Status::OutOfMemory("PCRE2 JIT stack");
    pcre2_jit_stack_assign(impl.match_context.get(), nullptr, impl.jit_stack.get());
  }
  return scratch;
}

uint32_t BytePairEncoder::Lookup(const uint8_t* bytes, size_t length) const {
  uint64_t slot = XXH3_64bits(bytes, length) & slot_mask_;
  while (true) {
    const uint32_t index = slots_[slot];
    if (index == 0) return kNoRank;
    const Entry& entry = entries_[index - 1];
    if (entry.length == length && std::memcmp(arena_.data() + entry.offset, bytes, length) == 0)
      return entry.rank;
    slot = (slot + 1) & slot_mask_;
  }
}

bool BytePairEncoder::TokenBytes(uint32_t id, std::string_view* bytes) const {
  int64_t index = -1;
  if (!by_rank_.empty()) {
    if (id < by_rank_.size()) index = by_rank_[id];
  } else if (auto it = sparse_by_rank_.find(id); it != sparse_by_rank_.end()) {
    index = it->second;
  }
  if (index >= 0) {
    const Entry& entry = entries_[static_cast<size_t>(index)];
    *bytes = std::string_view(arena_.data() + entry.offset, entry.length);
    return true;
  }
  if (auto it = special_by_id_.find(id); it != special_by_id_.end()) {
    *bytes = specials_[it->second].text;
    return true;
  }
  return false;
}

arrow::Status BytePairEncoder::AppendToken(const uint8_t* bytes, size_t length,
                                           std::vector<uint32_t>* out) const {
  const uint32_t rank = Lookup(bytes, length);
  if (rank == kNoRank) {
    // Only single bytes can get here: every merged part is a token by construction.
    return arrow::Status::Invalid("byte 0x", "0123456789abcdef"[bytes[0] >> 4],
                                  "0123456789abcdef"[bytes[0] & 15],
                                  " has no token of its own in the vocabulary");
  }
  out->push_back(rank);
  return arrow::Status::OK();
}

// tiktoken's `_byte_pair_merge`: parts[i] = (start, rank of parts[i]'s bytes joined with the next
// part's); merge the lowest rank (leftmost on ties), update the two ranks around it, rescan.
arrow::Status BytePairEncoder::MergeLinear(const uint8_t* piece, size_t length, EncodeScratch* scratch,
                                           std::vector<uint32_t>* out) const {
  auto& parts = scratch->impl_->parts;
  parts.clear();
  uint32_t min_rank = kNoRank;
  size_t min_index = 0;
  for (size_t i = 0; i + 1 < length; ++i) {
    const uint32_t rank = Lookup(piece + i, 2);
    if (rank < min_rank) {
      min_rank = rank;
      min_index = i;
    }
    parts.emplace_back(static_cast<uint32_t>(i), rank);
  }
  parts.emplace_back(static_cast<uint32_t>(length - 1), kNoRank);
  parts.emplace_back(static_cast<uint32_t>(length), kNoRank);
  // The rank of parts[i] joined with parts[i + 1] once parts[i + 1] and parts[i + 2] merge: read
  // before parts[i + 1] is removed, hence i + 3.
  auto rank_at = [&](size_t i) {
    if (i + 3 >= parts.size()) return kNoRank;
    return Lookup(piece + parts[i].first, parts[i + 3].first - parts[i].first);
  };
  while (min_rank != kNoRank) {
    const size_t i = min_index;
    if (i > 0) parts[i - 1].second = rank_at(i - 1);
    parts[i].second = rank_at(i);
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    min_rank = kNoRank;
    for (size_t j = 0; j + 1 < parts.size(); ++j) {
      if (parts[j].second < min_rank) {
        min_rank = parts[j].second;
        min_index = j;
      }
    }
  }
  for (size_t j = 0; j + 1 < parts.size(); ++j) {
    ARROW_RETURN_NOT_OK(AppendToken(piece + parts[j].first, parts[j + 1].first - parts[j].first, out));
  }
  return arrow::Status::OK();
}

// The same merges in the same order with a min-heap keyed by (rank, start byte): the linear scan
// takes the lowest rank at the lowest index, and indices follow start bytes. Parts form a linked
// list over their start bytes; a heap entry is stale once its part's pair rank changed (version).
arrow::Status BytePairEncoder::MergeHeap(const uint8_t* piece, size_t length, EncodeScratch* scratch,
                                         std::vector<uint32_t>* out) const {
  auto& impl = *scratch->impl_;
  const auto n = static_cast<uint32_t>(length);
  impl.next.resize(n + 1);
  impl.prev.resize(n + 1);
  impl.pair_rank.assign(n + 1, kNoRank);
  impl.version.assign(n + 1, 0);
  for (uint32_t i = 0; i <= n; ++i) {
    impl.next[i] = i + 1;
    impl.prev[i] = i == 0 ? UINT32_MAX : i - 1;
  }
  impl.next[n] = n;
  struct Candidate {
    uint32_t rank, start, version;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : start > other.start;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  // The rank of part `i` joined with the part after it (kNoRank at the end).
  auto pair_rank = [&](uint32_t i) {
    const uint32_t after = impl.next[i];
    if (after >= n) return kNoRank;
    return Lookup(piece + i, impl.next[after] - i);
  };
  for (uint32_t i = 0; i + 1 < n; ++i) {
    impl.pair_rank[i] = pair_rank(i);
    if (impl.pair_rank[i] != kNoRank) heap.push({impl.pair_rank[i], i, 0});
  }
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    const uint32_t i = top.start;
    if (top.version != impl.version[i] || impl.pair_rank[i] != top.rank) continue;  // stale
    const uint32_t removed = impl.next[i];
    impl.next[i] = impl.next[removed];
    if (impl.next[i] < n) impl.prev[impl.next[i]] = i;
    impl.pair_rank[removed] = kNoRank;
    ++impl.version[removed];
    impl.pair_rank[i] = pair_rank(i);
    ++impl.version[i];
    if (impl.pair_rank[i] != kNoRank) heap.push({impl.pair_rank[i], i, impl.version[i]});
    if (i > 0) {
      const uint32_t before = impl.prev[i];
      impl.pair_rank[before] = pair_rank(before);
      ++impl.version[before];
      if (impl.pair_rank[before] != kNoRank)
        heap.push({impl.pair_rank[before], before, impl.version[before]});
    }
  }
  for (uint32_t i = 0; i < n; i = impl.next[i]) {
    ARROW_RETURN_NOT_OK(AppendToken(piece + i, impl.next[i] - i, out));
  }
  return arrow::Status::OK();
}

arrow::Status BytePairEncoder::EncodePiece(std::string_view piece, bool heap, EncodeScratch* scratch,
                                           std::vector<uint32_t>* out) const {
  const auto* bytes = reinterpret_cast<const uint8_t*>(piece.data());
  if (piece.empty()) return arrow::Status::OK();
  if (const uint32_t rank = Lookup(bytes, piece.size()); rank != kNoRank) {
    out->push_back(rank);
    return arrow::Status::OK();
  }
  if (piece.size() == 1) return AppendToken(bytes, 1, out);
  return heap ? MergeHeap(bytes, piece.size(), scratch, out) : MergeLinear(bytes, piece.size(), scratch, out);
}

arrow::Status BytePairEncoder::EncodeOrdinary(const char* text, size_t length, EncodeScratch* scratch,
                                              std::vector<uint32_t>* out) const {
  auto& impl = *scratch->impl_;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text);
  size_t offset = 0;
  while (offset <= length) {
    const int rc = pcre2_match(regex_->code.get(), subject, length, offset, PCRE2_NO_UTF_CHECK,
                               impl.match_data.get(), impl.match_context.get());
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) return arrow::Status::Invalid("tokenizer pattern failed: ", Pcre2Message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(impl.match_data.get());
    const size_t start = ovector[0];
    const size_t end = ovector[1];
    if (end <= start) {  // an empty match (or \K past the end) yields no piece: step one character
      if (start >= length) break;
      offset = start + Utf8CharLength(static_cast<unsigned char>(text[start]));
      continue;
    }
    const std::string_view piece(text + start, end - start);
    ARROW_RETURN_NOT_OK(EncodePiece(piece, piece.size() > kLinearMergeMaxBytes, scratch, out));
    offset = end;
  }
  return arrow::Status::OK();
}

std::pair<size_t, size_t> BytePairEncoder::FindSpecial(std::string_view text, size_t from) const {
  for (size_t p = from; p < text.size(); ++p) {
    const auto& candidates = specials_by_first_byte_[static_cast<unsigned char>(text[p])];
    for (uint32_t index : candidates) {
      const std::string& special = specials_[index].text;
      if (text.size() - p >= special.size() && text.compare(p, special.size(), special) == 0)
        return {p, index};
    }
  }
  return {std::string_view::npos, 0};
}

arrow::Status BytePairEncoder::Encode(std::string_view text, bool use_special_tokens, EncodeScratch* scratch,
                                      std::vector<uint32_t>* out) const {
  if (!use_special_tokens || specials_.empty()) return EncodeOrdinary(text.data(), text.size(), scratch, out);
  // tiktoken's `encode`: the pattern runs on the text between special tokens, each span alone.
  size_t start = 0;
  while (true) {
    auto [at, index] = FindSpecial(text, start);
    const size_t end = at == std::string_view::npos ? text.size() : at;
    ARROW_RETURN_NOT_OK(EncodeOrdinary(text.data() + start, end - start, scratch, out));
    if (at == std::string_view::npos) break;
    out->push_back(specials_[index].id);
    start = at + specials_[index].text.size();
  }
  return arrow::Status::OK();
}

arrow::Status BytePairEncoder::Decode(const uint32_t* tokens, int64_t count, std::string* out) const {
  std::string_view bytes;
  for (int64_t i = 0; i < count; ++i) {
    if (!TokenBytes(tokens[i], &bytes)) {
      return arrow::Status::Invalid("token id ", tokens[i], " is not in the vocabulary (ranks up to ",
                                    max_rank_, specials_.empty() ? "" : " and the special tokens", ")");
    }
    out->append(bytes);
  }
  return arrow::Status::OK();
}

}  // namespace ketch::tokenize
