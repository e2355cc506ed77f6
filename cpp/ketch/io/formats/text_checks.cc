#include "ketch/io/formats/text_checks.h"

#include <arrow/buffer.h>

#include <cstring>

namespace ketch::io {

// ---- JSON ------------------------------------------------------------------------------------------

namespace {

// Bytes the JSON pass must look at: outside strings the structural ones, inside strings the
// quote and backslash; everywhere newlines and non-ASCII bytes. The rest are skipped in bulk.
struct JsonBytes {
  bool outside[256] = {};
  bool inside[256] = {};
  JsonBytes() {
    for (int c = 0x80; c < 256; ++c) outside[c] = inside[c] = true;
    for (unsigned char c : {'\n', '"', '\\'}) outside[c] = inside[c] = true;
    for (unsigned char c : {'[', ']', '{', '}'}) outside[c] = true;
  }
};
const JsonBytes kJsonBytes;

}  // namespace

// The loops below keep their state in locals and store it back at the end: the input is bytes,
// which may alias any member, so member state would be reloaded after every store.
arrow::Status JsonLineChecker::Consume(const uint8_t* data, int64_t size) {
  int depth = depth_;
  bool in_string = in_string_, escaped = escaped_;
  int pending = utf8_pending_;
  uint8_t low = utf8_low_, high = utf8_high_;
  int64_t line = line_;
  auto bad_utf8 = [&] { return arrow::Status::Invalid("JSON line ", line, " is not valid UTF-8"); };
  for (int64_t i = 0; i < size; ++i) {
    if (pending == 0 && !escaped) {
      const bool* look = in_string ? kJsonBytes.inside : kJsonBytes.outside;
      while (i < size && !look[data[i]]) ++i;
      if (i == size) break;
    }
    const uint8_t c = data[i];
    if (pending > 0) {
      if (c < low || c > high) return bad_utf8();
      low = 0x80;
      high = 0xBF;
      --pending;
      continue;
    }
    if (c >= 0x80) {
      // The lead byte of a multi-byte sequence (RFC 3629's table); never structural JSON. A
      // two-byte character inside the block (Latin, Greek, Cyrillic...) is checked at once.
      if (c >= 0xC2 && c <= 0xDF && i + 1 < size && (data[i + 1] & 0xC0) == 0x80) {
        ++i;
        escaped = false;
        continue;
      }
      if (c >= 0xC2 && c <= 0xDF) {
        pending = 1;
      } else if (c >= 0xE0 && c <= 0xEF) {
        pending = 2;
        if (c == 0xE0) low = 0xA0;   // no overlong forms
        if (c == 0xED) high = 0x9F;  // no surrogates
      } else if (c >= 0xF0 && c <= 0xF4) {
        pending = 3;
        if (c == 0xF0) low = 0x90;   // no overlong forms
        if (c == 0xF4) high = 0x8F;  // nothing past U+10FFFF
      } else {
        return bad_utf8();
      }
      escaped = false;
      continue;
    }
    if (c == '\n') {
      // Arrow reads one JSON value per line: all nesting and string state ends here.
      const int64_t end = offset_ + i + 1;
      RecordEnds(end);
      ++line;
      record_start_ = end;
      record_line_ = line;
      depth = 0;
      in_string = false;
      escaped = false;
      continue;
    }
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > kMaxJsonNesting) {
          return arrow::Status::Invalid("JSON line ", line, " nests arrays/objects deeper than ",
                                        kMaxJsonNesting, " levels (Ketch's limit for JSON)");
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  depth_ = depth;
  in_string_ = in_string;
  escaped_ = escaped;
  utf8_pending_ = pending;
  utf8_low_ = low;
  utf8_high_ = high;
  line_ = line;
  offset_ += size;
  return arrow::Status::OK();
}

arrow::Status JsonLineChecker::Finish() {
  if (utf8_pending_ > 0) {  // the file ends inside a multi-byte character
    return arrow::Status::Invalid("JSON line ", line_, " is not valid UTF-8");
  }
  if (offset_ > record_start_) RecordEnds(offset_);
  return arrow::Status::OK();
}

// ---- CSV -------------------------------------------------------------------------------------------

CsvQuoteChecker::CsvQuoteChecker(const CsvOptions& options) : options_(options) {
  // Bytes that end an unquoted field's run (delimiter, newlines, escape) and a quoted field's
  // (quote, newlines, escape); everything else is skipped in bulk.
  for (unsigned char c : {'\n', '\r'}) stops_field_[c] = stops_quoted_[c] = true;
  stops_field_[static_cast<unsigned char>(options_.delimiter)] = true;
  if (options_.quoting) stops_quoted_[static_cast<unsigned char>(options_.quote)] = true;
  if (options_.escape != 0) {
    stops_field_[static_cast<unsigned char>(options_.escape)] = true;
    stops_quoted_[static_cast<unsigned char>(options_.escape)] = true;
  }
}

arrow::Status CsvQuoteChecker::Consume(const uint8_t* data, int64_t size) {
  const bool escaping = options_.escape != 0, quoting = options_.quoting,
             double_quote = options_.double_quote;
  const char delimiter = options_.delimiter, quote = options_.quote, escape = options_.escape;
  State state = state_, before_escape = before_escape_;
  bool escaped = escaped_;
  int64_t line = line_, row = row_, record_start = record_start_, record_line = record_line_;
  auto end_row = [&](int64_t end) {
    if (end - record_start > longest_) {
      longest_ = end - record_start;
      longest_line_ = record_line;
    }
    ++row;
    record_start = end;
  };
  int64_t i = 0;
  if (offset_ == 0 && size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) {
    i = 3;  // Arrow skips a UTF-8 byte order mark: the first field starts after it
  }
  for (; i < size; ++i) {
    if (!escaped) {
      if (state == State::kField) {
        while (i < size && !stops_field_[data[i]]) ++i;
      } else if (state == State::kQuoted) {
        while (i < size && !stops_quoted_[data[i]]) ++i;
      }
      if (i == size) break;
    }
    const char c = static_cast<char>(data[i]);
    const int64_t end = offset_ + i + 1;  // file offset just past this byte
    // Physical lines: "\n", "\r\n" and a lone "\r" each end one, quoted or not.
    if (c == '\n') {
      if (!(i > 0 ? data[i - 1] == '\r' : last_was_cr_)) ++line;
    } else if (c == '\r') {
      ++line;
    }
    if (escaped) {  // the byte after an escape character is data
      escaped = false;
      state = before_escape;
      continue;
    }
    switch (state) {
      case State::kAfterCr:
        if (c == '\n') {  // "\r\n" is one row end
          record_start = end;
          state = State::kLineStart;
          break;
        }
        [[fallthrough]];
      case State::kLineStart:
        if (c == '\n' || c == '\r') {  // an empty line: Arrow skips it and does not count it
          record_start = end;
          state = c == '\r' ? State::kAfterCr : State::kLineStart;
          break;
        }
        record_line = line;
        [[fallthrough]];
      case State::kFieldStart:
        if (quoting && c == quote) {
          state = State::kQuoted;
          quote_row_ = row;
          quote_line_ = line;
          break;
        }
        [[fallthrough]];
      case State::kField:
      case State::kQuoteInQuoted:
        if (state == State::kQuoteInQuoted && double_quote && c == quote) {
          state = State::kQuoted;  // "" is a quote inside the field
          break;
        }
        // (After a closing quote the field continues unquoted: Arrow's rule.)
        if (escaping && c == escape) {
          escaped = true;
          before_escape = State::kField;
        } else if (c == delimiter) {
          state = State::kFieldStart;
        } else if (c == '\n' || c == '\r') {
          end_row(end);
          state = c == '\r' ? State::kAfterCr : State::kLineStart;
        } else {
          state = State::kField;
        }
        break;
      case State::kQuoted:
        if (escaping && c == escape) {
          escaped = true;
          before_escape = State::kQuoted;
        } else if (c == quote) {
          state = State::kQuoteInQuoted;
        }
        break;
    }
  }
  state_ = state;
  before_escape_ = before_escape;
  escaped_ = escaped;
  line_ = line;
  row_ = row;
  record_start_ = record_start;
  record_line_ = record_line;
  if (size > 0) last_was_cr_ = data[size - 1] == '\r';
  offset_ += size;
  return arrow::Status::OK();
}

arrow::Status CsvQuoteChecker::Finish() {
  if (state_ == State::kQuoted || (escaped_ && before_escape_ == State::kQuoted)) {
    return arrow::Status::Invalid("CSV parse error: Row #", quote_row_, ": the quoted field opened on line ",
                                  quote_line_,
                                  " is never closed (an unterminated quote runs to the end of the file)");
  }
  if (offset_ > record_start_) RecordEnds(offset_);
  return arrow::Status::OK();
}

arrow::Status FastCsvQuoteChecker::Consume(const uint8_t* data, int64_t size) {
  if (!options_.quoting || size == 0) return arrow::Status::OK();
  const uint8_t quote = static_cast<uint8_t>(options_.quote);
  const uint8_t delimiter = static_cast<uint8_t>(options_.delimiter);
  int64_t i = 0;
  if (offset_ == 0 && size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) {
    i = 3;  // Arrow skips a UTF-8 byte order mark: the first field starts after it
  }
  const int64_t first = i;
  if (quote_at_block_end_) {  // the previous block ended on a quote inside a quoted field
    quote_at_block_end_ = false;
    if (options_.double_quote && data[0] == quote) {
      i = 1;  // "" split across blocks: still quoted
    } else {
      quoted_ = false;
    }
  }
  while (i < size) {
    const auto* found = static_cast<const uint8_t*>(std::memchr(data + i, quote, size - i));
    if (found == nullptr) break;
    const int64_t at = found - data;
    if (!quoted_) {
      // A quote opens a quoted field only at the start of a field; elsewhere it is data.
      const uint8_t before = at == first ? previous_ : data[at - 1];
      if (before == delimiter || before == '\n' || before == '\r') {
        quoted_ = true;
        quote_offset_ = offset_ + at;
      }
      i = at + 1;
      continue;
    }
    if (at + 1 == size) {
      quote_at_block_end_ = true;
      i = size;
      break;
    }
    if (options_.double_quote && data[at + 1] == quote) {
      i = at + 2;  // "" is a quote inside the field
      continue;
    }
    quoted_ = false;  // closed; the field continues unquoted up to the next delimiter
    i = at + 1;
  }
  if (size > first)
    previous_ = data[size - 1];  // (a block holding only the byte order mark starts the field)
  offset_ += size;
  return arrow::Status::OK();
}

arrow::Status FastCsvQuoteChecker::Finish() {
  if (quoted_ && !quote_at_block_end_) {
    return arrow::Status::Invalid("CSV parse error: the quoted field opened at byte ", quote_offset_,
                                  " is never closed (an unterminated quote runs to the end of the file) ",
                                  kRecheckForRow);
  }
  return arrow::Status::OK();
}

// ---- the stream ------------------------------------------------------------------------------------

arrow::Status CheckedInputStream::Check(const uint8_t* data, int64_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (size > 0) return checker_->Consume(data, size);
  if (finished_) return arrow::Status::OK();
  finished_ = true;
  return checker_->Finish();
}

arrow::Result<int64_t> CheckedInputStream::Read(int64_t nbytes, void* out) {
  ARROW_ASSIGN_OR_RAISE(const int64_t n, stream_->Read(nbytes, out));
  ARROW_RETURN_NOT_OK(Check(static_cast<const uint8_t*>(out), n));
  return n;
}

arrow::Result<std::shared_ptr<arrow::Buffer>> CheckedInputStream::Read(int64_t nbytes) {
  ARROW_ASSIGN_OR_RAISE(auto buffer, stream_->Read(nbytes));
  ARROW_RETURN_NOT_OK(Check(buffer->data(), buffer->size()));
  return buffer;
}

arrow::Status CheckWholeStream(arrow::io::InputStream* stream, TextChecker* checker) {
  constexpr int64_t kChunk = 4 << 20;
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto buffer, stream->Read(kChunk));
    if (buffer->size() == 0) return checker->Finish();
    ARROW_RETURN_NOT_OK(checker->Consume(buffer->data(), buffer->size()));
  }
}

}  // namespace ketch::io
