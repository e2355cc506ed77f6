#pragma once

// The regex engine behind Ketch's regex kernels: RE2 (Debian's libre2), reached through
// libketch_re2.so (cpp/re2_engine/re2_engine.cc), which this process loads with dlopen
// (RTLD_LOCAL | RTLD_DEEPBIND). Why not link RE2 directly: the pyarrow wheel's libarrow_compute
// exports the symbols of its own, newer RE2 (33 mangled names are the same in both, e.g.
// re2::RE2::~RE2 and re2::RE2::ReverseProg, with different class layouts), so whichever library
// the dynamic linker meets first would serve both; and Debian's static libre2.a is not PIC. Behind
// DEEPBIND, libre2 and our engine bind to each other first, and Arrow never sees them.

#include <arrow/result.h>

#include <memory>
#include <string>
#include <string_view>

namespace ketch::str {

/// A compiled regular expression (RE2 syntax, UTF-8). Thread-safe for matching.
class Regex {
 public:
  virtual ~Regex() = default;
  /// Searches `text` from byte `pos` (UNANCHORED) with the whole `text` as context, so ^, \A, \b
  /// and $ see the real ends of the string. On a match fills `groups[0..ngroups)` (0: the match;
  /// a group that took no part: an empty view with a null data pointer) and returns true.
  virtual bool Match(std::string_view text, size_t pos, std::string_view* groups, int ngroups) const = 0;
  virtual int NumberOfCapturingGroups() const = 0;
  /// Whether `rewrite` (\0-\9 groups, \\ a backslash) fits this regex; else `*error` says why.
  virtual bool CheckRewriteString(std::string_view rewrite, std::string* error) const = 0;
};

/// Compiles `pattern` (case-insensitive when `ignore_case`). Errors: Invalid "invalid regular
/// expression '<pattern>': <RE2's reason>"; IOError when libketch_re2.so cannot be loaded.
arrow::Result<std::unique_ptr<Regex>> CompileRegex(std::string_view pattern, bool ignore_case);

}  // namespace ketch::str

/// The engine library's one exported symbol: a new Regex, or nullptr with `*error` set.
extern "C" {
using KetchRe2CompileFunction = ketch::str::Regex* (*)(const char* pattern, size_t length, int ignore_case,
                                                       std::string* error);
}
