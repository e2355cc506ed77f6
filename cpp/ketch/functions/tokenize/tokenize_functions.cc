// tokenize_encode / tokenize_decode (Daft's names and options): byte-pair encoding with a tiktoken
// BPE file read once per query through the object readers (local, s3://, http(s)://).

#include "ketch/functions/tokenize/tokenize_functions.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/utf8.h>

#include <cstring>
#include <future>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ketch/common/query_scope.h"
#include "ketch/expr/function_registry.h"
#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/tokenize/bpe.h"
#include "ketch/functions/url/url_functions.h"
#include "ketch/io/object_reader.h"
#include "ketch/io/redact.h"

namespace ketch::tokenize {
namespace {

// --- Token sets -------------------------------------------------------------------------------------
// The pre-tokenization patterns and special tokens of tiktoken's sets, as the tiktoken-rs crate that
// Daft uses defines them (tiktoken_ext/openai_public.rs); Daft's largest ordinary ids per set.

constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct KnownSet {
  const char* name;
  const char* pattern;
  std::vector<SpecialToken> specials;
};

const std::vector<KnownSet>& KnownSets() {
  static const std::vector<KnownSet> sets = {
      {"cl100k_base",
       kCl100kPattern,
       {{"<|endoftext|>", 100257},
        {"<|fim_prefix|>", 100258},
        {"<|fim_middle|>", 100259},
        {"<|fim_suffix|>", 100260},
        {"<|endofprompt|>", 100276}}},
      {"o200k_base", kO200kPattern, {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}}},
      {"p50k_base", kGpt2Pattern, {{"<|endoftext|>", 50256}}},
      {"p50k_edit",
       kGpt2Pattern,
       {{"<|endoftext|>", 50256},
        {"<|fim_prefix|>", 50281},
        {"<|fim_middle|>", 50282},
        {"<|fim_suffix|>", 50283}}},
      {"r50k_base", kGpt2Pattern, {{"<|endoftext|>", 50256}}},
  };
  return sets;
}

const KnownSet* FindKnownSet(std::string_view name) {
  for (const auto& set : KnownSets()) {
    if (name == set.name) return &set;
  }
  return nullptr;
}

// The set a file is named after: "dir/cl100k_base.tiktoken" → cl100k_base (query strings cut).
const KnownSet* KnownSetOfFile(std::string_view path) {
  path = path.substr(0, path.find_first_of("?#"));
  path = path.substr(path.find_last_of('/') == std::string_view::npos ? 0 : path.find_last_of('/') + 1);
  constexpr std::string_view kSuffix = ".tiktoken";
  if (path.size() > kSuffix.size() && path.substr(path.size() - kSuffix.size()) == kSuffix) {
    path.remove_suffix(kSuffix.size());
  }
  return FindKnownSet(path);
}

// Daft's "llama3" set (daft-functions-tokenize special_tokens.rs): 256 tokens after the largest rank.
std::vector<std::string> Llama3SpecialTexts() {
  std::vector<std::string> texts = {"<|begin_of_text|>",
                                    "<|end_of_text|>",
                                    "<|reserved_special_token_0|>",
                                    "<|reserved_special_token_1|>",
                                    "<|reserved_special_token_2|>",
                                    "<|reserved_special_token_3|>",
                                    "<|start_header_id|>",
                                    "<|end_header_id|>",
                                    "<|reserved_special_token_4|>",
                                    "<|eot_id|>"};
  for (int i = 5; i < 256; ++i) texts.push_back("<|reserved_special_token_" + std::to_string(i) + "|>");
  return texts;
}

std::string BuiltinNames() {
  std::string names;
  for (const auto& set : KnownSets()) names += (names.empty() ? "" : ", ") + std::string(set.name);
  return names;
}

// --- Options ------------------------------------------------------------------------------------------

struct TokenizerSpec {
  std::string function;  // for errors
  std::string tokens_path;
  std::string pattern;
  const KnownSet* known_set = nullptr;  // the set the file is named after, when no special_tokens
  bool llama3 = false;
  bool use_special_tokens = false;
  io::S3Config s3;

  std::string CacheKey(uint64_t query_id) const {
    return std::to_string(query_id) + '\n' + tokens_path + '\n' + pattern + '\n' +
           (known_set ? known_set->name : "") + '\n' + (llama3 ? "llama3" : "") + '\n' + s3.Key();
  }
};

arrow::Result<std::optional<std::string>> OptionalString(const FunctionOptions& options,
                                                         const std::string& key,
                                                         const std::string& function) {
  if (!HasOption(options, key)) return std::nullopt;
  ARROW_ASSIGN_OR_RAISE(auto value, GetStringOption(options, key, function));
  return value;
}

arrow::Result<TokenizerSpec> SpecFromOptions(const FunctionOptions& options, const std::string& function) {
  TokenizerSpec spec;
  spec.function = function;
  ARROW_ASSIGN_OR_RAISE(spec.tokens_path, GetStringOption(options, "tokens_path", function));
  if (const KnownSet* set = FindKnownSet(spec.tokens_path)) {
    return arrow::Status::NotImplemented(
        function, ": the built-in token set '", set->name,
        "' is downloaded from OpenAI's public storage, which Ketch does not fetch; pass the path or URL "
        "(local, s3://, http(s)://) of a tiktoken BPE file as tokens_path instead, e.g. '/data/",
        set->name, ".tiktoken' (a file named ", set->name, ".tiktoken gets ", set->name,
        "'s pattern and special tokens by default)");
  }
  if (spec.tokens_path.empty()) return arrow::Status::Invalid(function, ": tokens_path is empty");
  ARROW_ASSIGN_OR_RAISE(auto pattern, OptionalString(options, "pattern", function));
  ARROW_ASSIGN_OR_RAISE(auto special_tokens, OptionalString(options, "special_tokens", function));
  if (special_tokens) {
    if (*special_tokens != "llama3") {
      return arrow::Status::Invalid(function, ": special token set '", *special_tokens,
                                    "' is not supported (only 'llama3')");
    }
    spec.llama3 = true;
  }
  const KnownSet* named = KnownSetOfFile(spec.tokens_path);
  if (!special_tokens) spec.known_set = named;
  if (pattern) {
    spec.pattern = *pattern;
  } else if (named) {
    spec.pattern = named->pattern;
  } else {
    return arrow::Status::Invalid(
        function, ": pattern must be provided for a token file that is not named after a built-in set (",
        BuiltinNames(),
        "): the regular expression that splits text into pieces before byte-pair merging, "
        "e.g. the cl100k_base pattern for a Llama 3 tokenizer.model");
  }
  ARROW_ASSIGN_OR_RAISE(spec.use_special_tokens,
                        BoolOption(options, "use_special_tokens", special_tokens.has_value(), function));
  ARROW_ASSIGN_OR_RAISE(spec.s3, url::S3ConfigFromOptions(options));
  return spec;
}

// --- Loading, once per query --------------------------------------------------------------------------

using EncoderPtr = std::shared_ptr<const BytePairEncoder>;

arrow::Result<EncoderPtr> LoadEncoder(const TokenizerSpec& spec) {
  const std::string shown = io::Redact(spec.tokens_path, spec.s3.Secrets());
  auto fail = [&](const arrow::Status& status) {
    return status.WithMessage("cannot load token file '", shown,
                              "': ", io::Redact(status.message(), spec.s3.Secrets()));
  };
  auto buffer = io::ReadObject(spec.tokens_path, spec.s3);
  if (!buffer.ok()) return fail(buffer.status());
  const std::string_view text((*buffer)->data_as<char>(), static_cast<size_t>((*buffer)->size()));
  auto ranks = ParseTiktokenBpe(text);
  if (!ranks.ok()) return fail(ranks.status());
  uint32_t max_rank = 0;
  for (const auto& token : *ranks) max_rank = std::max(max_rank, token.rank);
  std::vector<SpecialToken> specials;
  if (spec.llama3) {
    uint32_t id = max_rank;
    for (auto& text : Llama3SpecialTexts()) specials.push_back({std::move(text), ++id});
  } else if (spec.known_set) {
    specials = spec.known_set->specials;
  }
  auto encoder = BytePairEncoder::Make(std::move(*ranks), std::move(specials), spec.pattern);
  if (!encoder.ok()) return fail(encoder.status());
  return *encoder;
}

// The encoders of recent queries: one load per (query, file, options); morsels of the query that
// arrive while it loads wait for it. Outside a query (QueryScope id 0) every call loads.
arrow::Result<EncoderPtr> EncoderFor(const TokenizerSpec& spec) {
  const uint64_t query_id = QueryScope::Current();
  if (query_id == 0) return LoadEncoder(spec);
  using Loaded = std::shared_future<arrow::Result<EncoderPtr>>;
  static std::mutex mutex;
  static std::list<std::pair<std::string, Loaded>> recent;  // most recent first
  constexpr size_t kMaxEntries = 4;
  const std::string key = spec.CacheKey(query_id);
  std::promise<arrow::Result<EncoderPtr>> promise;
  Loaded loaded;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = recent.begin(); it != recent.end(); ++it) {
      if (it->first == key) {
        recent.splice(recent.begin(), recent, it);
        loaded = it->second;
        break;
      }
    }
    if (!loaded.valid()) {
      recent.emplace_front(key, promise.get_future().share());
      if (recent.size() > kMaxEntries) recent.pop_back();
    }
  }
  if (loaded.valid()) return loaded.get();
  auto result = LoadEncoder(spec);
  promise.set_value(result);
  return result;
}

// --- The functions ------------------------------------------------------------------------------------

std::shared_ptr<arrow::Buffer> ValidityOf(const arrow::Array& array) {
  if (array.null_count() == 0 || !array.null_bitmap()) return nullptr;
  if (array.offset() == 0) return array.null_bitmap();
  auto copied = arrow::internal::CopyBitmap(arrow::default_memory_pool(), array.null_bitmap_data(),
                                            array.offset(), array.length());
  return copied.ok() ? *copied : nullptr;
}

class TokenizeEncode : public ScalarFunction {
 public:
  std::string name() const override { return "tokenize_encode"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    if (types.size() != 1) return arrow::Status::Invalid("tokenize_encode takes one argument");
    if (types[0]->id() != arrow::Type::NA)
      ARROW_RETURN_NOT_OK(CheckArgKind(ArgKind::kString, name(), types[0], *exprs[0]));
    ARROW_ASSIGN_OR_RAISE(auto spec, SpecFromOptions(options, name()));
    auto checked = BytePairEncoder::CheckPattern(spec.pattern);
    if (!checked.ok()) return checked.WithMessage(name(), ": ", checked.message());
    return arrow::large_list(arrow::uint32());
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    const auto type = arrow::large_list(arrow::uint32());
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (input->type_id() == arrow::Type::NA) return arrow::MakeArrayOfNull(type, input->length());
    ARROW_ASSIGN_OR_RAISE(auto spec, SpecFromOptions(options, name()));
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*input, arrow::large_utf8()));
    const auto& texts = static_cast<const arrow::LargeStringArray&>(*cast);
    auto encoder = EncoderFor(spec);
    if (!encoder.ok()) return RunError(name(), encoder.status(), ctx);
    ARROW_ASSIGN_OR_RAISE(auto scratch, (*encoder)->NewScratch());
    std::vector<uint32_t> tokens;
    arrow::TypedBufferBuilder<int64_t> offsets;
    ARROW_RETURN_NOT_OK(offsets.Reserve(texts.length() + 1));
    offsets.UnsafeAppend(0);
    for (int64_t i = 0; i < texts.length(); ++i) {
      if (texts.IsValid(i)) {
        const std::string_view text = texts.GetView(i);
        if (!arrow::util::ValidateUTF8(text)) {
          return arrow::Status::Invalid(name(), ": the string at source row ", ctx.SourceRow(i),
                                        " is not valid UTF-8");
        }
        auto status = (*encoder)->Encode(text, spec.use_special_tokens, scratch.get(), &tokens);
        if (!status.ok()) {
          return status.WithMessage(name(), " failed at source row ", ctx.SourceRow(i), ": ",
                                    status.message());
        }
      }
      ARROW_RETURN_NOT_OK(offsets.Append(static_cast<int64_t>(tokens.size())));
    }
    ARROW_ASSIGN_OR_RAISE(auto values_buffer, arrow::AllocateBuffer(static_cast<int64_t>(tokens.size() * 4)));
    if (!tokens.empty()) std::memcpy(values_buffer->mutable_data(), tokens.data(), tokens.size() * 4);
    auto values =
        std::make_shared<arrow::UInt32Array>(static_cast<int64_t>(tokens.size()), std::move(values_buffer));
    ARROW_ASSIGN_OR_RAISE(auto offsets_buffer, offsets.Finish());
    return std::make_shared<arrow::LargeListArray>(type, texts.length(), std::move(offsets_buffer), values,
                                                   ValidityOf(texts), texts.null_count());
  }
};

class TokenizeDecode : public ScalarFunction {
 public:
  std::string name() const override { return "tokenize_decode"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    if (types.size() != 1) return arrow::Status::Invalid("tokenize_decode takes one argument");
    const auto& type = types[0];
    const bool list = type->id() == arrow::Type::LIST || type->id() == arrow::Type::LARGE_LIST ||
                      type->id() == arrow::Type::FIXED_SIZE_LIST;
    const auto value_type = list ? type->field(0)->type() : nullptr;
    if (type->id() != arrow::Type::NA &&
        !(list && (arrow::is_integer(value_type->id()) || value_type->id() == arrow::Type::NA))) {
      return arrow::Status::TypeError("tokenize_decode expects a list of integer token ids, got ",
                                      exprs[0]->ToString(), " of type ", type->ToString());
    }
    ARROW_ASSIGN_OR_RAISE(auto spec, SpecFromOptions(options, name()));
    auto checked = BytePairEncoder::CheckPattern(spec.pattern);
    if (!checked.ok()) return checked.WithMessage(name(), ": ", checked.message());
    return arrow::large_utf8();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (input->type_id() == arrow::Type::NA)
      return arrow::MakeArrayOfNull(arrow::large_utf8(), input->length());
    ARROW_ASSIGN_OR_RAISE(auto spec, SpecFromOptions(options, name()));
    // One layout for every list type: large_list<int64> (uint64 stays unsigned: no wrap-around).
    const auto value_type = input->type()->field(0)->type();
    const bool is_unsigned = arrow::is_unsigned_integer(value_type->id());
    ARROW_ASSIGN_OR_RAISE(
        auto cast,
        arrow::compute::Cast(*input, arrow::large_list(is_unsigned ? arrow::uint64() : arrow::int64())));
    const auto& lists = static_cast<const arrow::LargeListArray&>(*cast);
    const auto& values = *lists.values();
    const auto* signed_values = values.data()->GetValues<int64_t>(1);
    const auto* unsigned_values = values.data()->GetValues<uint64_t>(1);
    auto encoder = EncoderFor(spec);
    if (!encoder.ok()) return RunError(name(), encoder.status(), ctx);
    arrow::LargeStringBuilder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(lists.length()));
    std::vector<uint32_t> ids;
    std::string text;
    for (int64_t i = 0; i < lists.length(); ++i) {
      if (lists.IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      ids.clear();
      const int64_t begin = lists.value_offset(i);
      const int64_t end = lists.value_offset(i + 1);
      for (int64_t j = begin; j < end; ++j) {
        if (values.IsNull(j)) {
          return arrow::Status::Invalid(name(), ": null token id at source row ", ctx.SourceRow(i));
        }
        const bool in_range = is_unsigned ? unsigned_values[j] < UINT32_MAX
                                          : signed_values[j] >= 0 && signed_values[j] < int64_t{UINT32_MAX};
        if (!in_range) {
          return arrow::Status::Invalid(
              name(), ": token id ",
              is_unsigned ? std::to_string(unsigned_values[j]) : std::to_string(signed_values[j]),
              " at source row ", ctx.SourceRow(i), " is out of range");
        }
        ids.push_back(static_cast<uint32_t>(is_unsigned ? unsigned_values[j]
                                                        : static_cast<uint64_t>(signed_values[j])));
      }
      text.clear();
      auto status = (*encoder)->Decode(ids.data(), static_cast<int64_t>(ids.size()), &text);
      if (!status.ok()) {
        return status.WithMessage(name(), ": ", status.message(), " at source row ", ctx.SourceRow(i),
                                  " (token file '", io::Redact(spec.tokens_path, spec.s3.Secrets()), "')");
      }
      if (!arrow::util::ValidateUTF8(text)) {
        return arrow::Status::Invalid(name(), ": the token ids at source row ", ctx.SourceRow(i),
                                      " decode to bytes that are not valid UTF-8 (a character split between "
                                      "rows or cut at the end?)");
      }
      ARROW_RETURN_NOT_OK(builder.Append(text));
    }
    return builder.Finish();
  }
};

}  // namespace

arrow::Status RegisterTokenizeFunctions() {
  arrow::util::InitializeUTF8();
  ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<TokenizeEncode>()));
  return FunctionRegistry::Global()->Register(std::make_shared<TokenizeDecode>());
}

}  // namespace ketch::tokenize
