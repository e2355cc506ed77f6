#pragma once

#include <arrow/status.h>

namespace ketch::tokenize {

/// Registers Daft's tiktoken-style tokenizer functions (byte-pair encoding, see bpe.h):
///
/// - tokenize_encode(string; tokens_path, pattern?, special_tokens?, use_special_tokens?, s3_*)
///   → large_list<uint32>: the token ids of each string; null stays null.
/// - tokenize_decode(list of integers; tokens_path, pattern?, special_tokens?, s3_*)
///   → large_string: the text of each row's token ids (special ids decode to their text); null
///   stays null.
///
/// `tokens_path` is a tiktoken BPE file ("BASE64 RANK" lines): a local path, file://, s3:// (with
/// the s3_* io_config options) or http(s):// URL, read once per query through io::ReadObject. The
/// names of tiktoken's built-in sets (cl100k_base, o200k_base, p50k_base, p50k_edit, r50k_base)
/// fail at plan time with NotImplemented: their files come from a hub Ketch does not fetch; pass
/// the file's path instead. A file named after such a set (e.g. ".../cl100k_base.tiktoken") gets
/// that set's pattern and special tokens by default; any other file needs `pattern`.
/// `special_tokens` names an extra set appended after the largest rank: only "llama3" (256
/// tokens, as Daft). `use_special_tokens` defaults to whether `special_tokens` was given.
///
/// Errors: plan time: a non-string (encode) / non-integer-list (decode) input (TypeError), a
/// built-in name, a missing or invalid pattern, an unknown special-token set (Invalid). Run time:
/// an unreadable or malformed token file (naming it and the line), an unknown or negative token id
/// (naming the id and the source row), ids whose bytes are not UTF-8 (naming the row).
arrow::Status RegisterTokenizeFunctions();

}  // namespace ketch::tokenize
