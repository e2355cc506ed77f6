#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/result.h>
#include <arrow/status.h>

#include <cstdint>
#include <memory>
#include <mutex>

#include "ketch/io/formats/format_options.h"

namespace ketch::io {

/// JSON values nested deeper than this (arrays and objects, counted per line) are refused before
/// Arrow's parser sees them: RapidJSON recurses once per level (100k levels overflow the stack),
/// Arrow's converters slow down quadratically with depth, and a column nested deeper than this
/// cannot cross Arrow's C Data Interface to Python (ImportSchema stops at 64 levels, the schema
/// itself being one).
inline constexpr int kMaxJsonNesting = 63;

/// A linear pass over the bytes of a text file as they are read, block after block, that refuses
/// what Arrow's readers would crash on or read silently wrong, and measures the longest record
/// (what the reader's block size must hold).
class TextChecker {
 public:
  virtual ~TextChecker() = default;
  /// Checks the next `size` bytes of the file. Errors: Invalid naming the line (and row).
  virtual arrow::Status Consume(const uint8_t* data, int64_t size) = 0;
  /// Called at the end of the file. Errors: Invalid for a record left open (an unterminated quote).
  virtual arrow::Status Finish() = 0;
  /// Bytes of the longest record seen so far (a JSON line, a CSV row with its quoted newlines),
  /// including its line terminator.
  int64_t longest_record() const { return longest_; }
  /// 1-based line on which the longest record starts.
  int64_t longest_record_line() const { return longest_line_; }

 protected:
  void RecordEnds(int64_t end_offset) {
    if (end_offset - record_start_ > longest_) {
      longest_ = end_offset - record_start_;
      longest_line_ = record_line_;
    }
  }
  int64_t offset_ = 0;        ///< bytes consumed before the current block
  int64_t line_ = 1;          ///< current physical line, 1-based
  int64_t record_start_ = 0;  ///< file offset of the current record's first byte
  int64_t record_line_ = 1;   ///< line on which the current record starts
  int64_t longest_ = 0;
  int64_t longest_line_ = 0;
};

/// Newline-delimited JSON: every byte must be valid UTF-8 (Arrow's reader would otherwise store
/// invalid strings), and no line may nest arrays/objects deeper than kMaxJsonNesting. String
/// contents and escapes are skipped when counting depth. Errors name the 1-based line.
class JsonLineChecker final : public TextChecker {
 public:
  arrow::Status Consume(const uint8_t* data, int64_t size) override;
  arrow::Status Finish() override;

 private:
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
  // UTF-8 sequence in progress: continuation bytes still expected, and the range the next one
  // must fall in (narrower after E0, ED, F0, F4: no overlong forms, surrogates or > U+10FFFF).
  int utf8_pending_ = 0;
  uint8_t utf8_low_ = 0x80, utf8_high_ = 0xBF;
};

/// CSV with Arrow's quoting rules (a quote opens a quoted field only at the start of a field;
/// `""` inside one is a quote when double_quote; the escape character takes the next byte
/// literally): counts rows as Arrow does (empty lines skipped) and refuses a quoted field that is
/// still open at the end of the file, naming the row and line where it opened.
class CsvQuoteChecker final : public TextChecker {
 public:
  explicit CsvQuoteChecker(const CsvOptions& options);
  arrow::Status Consume(const uint8_t* data, int64_t size) override;
  arrow::Status Finish() override;

 private:
  enum class State { kLineStart, kFieldStart, kField, kQuoted, kQuoteInQuoted, kAfterCr };
  CsvOptions options_;
  State state_ = State::kLineStart;
  State before_escape_ = State::kField;
  bool escaped_ = false;
  bool last_was_cr_ = false;  ///< the previous block ended with '\r'
  bool stops_field_[256] = {};
  bool stops_quoted_[256] = {};
  int64_t row_ = 1;  ///< 1-based row being read (the header is row 1), as Arrow's errors count
  int64_t quote_row_ = 0, quote_line_ = 0;
};

/// The streaming form of CsvQuoteChecker for CSV without an escape character: it jumps from
/// quote to quote (memchr) instead of following every field, so it costs a fraction of Arrow's
/// parse. An unterminated quote is reported by byte offset with kRecheckForRow in the message:
/// the caller then runs CsvQuoteChecker over the file to name the row and line. It measures no
/// records (longest_record() stays 0).
class FastCsvQuoteChecker final : public TextChecker {
 public:
  /// `options.escape` must be 0 (use CsvQuoteChecker otherwise).
  explicit FastCsvQuoteChecker(const CsvOptions& options) : options_(options) {}
  arrow::Status Consume(const uint8_t* data, int64_t size) override;
  arrow::Status Finish() override;

 private:
  CsvOptions options_;
  bool quoted_ = false;
  bool quote_at_block_end_ = false;  ///< quoted_ and the block ended on a quote ("" or a close?)
  uint8_t previous_ = '\n';          ///< the byte before the current block (a file starts a field)
  int64_t quote_offset_ = -1;        ///< file offset of the quote that opened the current field
};

/// In the message of FastCsvQuoteChecker's error: rerun CsvQuoteChecker for the row and line.
inline constexpr const char* kRecheckForRow = "[recheck for the row]";

/// An input stream that hands every block it reads to a TextChecker before returning it, so a
/// file is checked in the same pass that Arrow's streaming reader parses it. The checker's error
/// replaces the read's result; end of file (a read of 0 bytes) calls Finish once.
class CheckedInputStream final : public arrow::io::InputStream {
 public:
  CheckedInputStream(std::shared_ptr<arrow::io::InputStream> stream, std::unique_ptr<TextChecker> checker)
      : stream_(std::move(stream)), checker_(std::move(checker)) {}

  arrow::Status Close() override { return stream_->Close(); }
  bool closed() const override { return stream_->closed(); }
  arrow::Result<int64_t> Tell() const override { return stream_->Tell(); }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override;
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override;

 private:
  arrow::Status Check(const uint8_t* data, int64_t size);
  std::shared_ptr<arrow::io::InputStream> stream_;
  std::unique_ptr<TextChecker> checker_;
  std::mutex mutex_;  // Arrow's readahead reads from one thread at a time, but not always the same
  bool finished_ = false;
};

/// Runs `checker` over a whole stream (the slow path after a record did not fit in a block).
arrow::Status CheckWholeStream(arrow::io::InputStream* stream, TextChecker* checker);

}  // namespace ketch::io
