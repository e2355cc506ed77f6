// libketch_re2.so: RE2 behind the abstract ketch::str::Regex (regex_engine.h explains why it is a
// library of its own). Only `ketch_re2_compile` is exported; nothing here uses Arrow.

#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ketch/functions/string/regex_engine.h"

namespace {

class Re2Regex final : public ketch::str::Regex {
 public:
  Re2Regex(std::string_view pattern, const RE2::Options& options)
      : regex_(re2::StringPiece(pattern.data(), pattern.size()), options) {}

  bool ok() const { return regex_.ok(); }
  const std::string& error() const { return regex_.error(); }

  bool Match(std::string_view text, size_t pos, std::string_view* groups, int ngroups) const override {
    re2::StringPiece local[10];
    std::vector<re2::StringPiece> more;
    re2::StringPiece* found = local;
    if (ngroups > 10) {
      more.resize(ngroups);
      found = more.data();
    }
    if (!regex_.Match(re2::StringPiece(text.data(), text.size()), pos, text.size(), RE2::UNANCHORED, found,
                      ngroups)) {
      return false;
    }
    for (int i = 0; i < ngroups; ++i) groups[i] = std::string_view(found[i].data(), found[i].size());
    return true;
  }

  int NumberOfCapturingGroups() const override { return regex_.NumberOfCapturingGroups(); }

  bool CheckRewriteString(std::string_view rewrite, std::string* error) const override {
    return regex_.CheckRewriteString(re2::StringPiece(rewrite.data(), rewrite.size()), error);
  }

 private:
  RE2 regex_;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) ketch::str::Regex* ketch_re2_compile(const char* pattern,
                                                                                       size_t length,
                                                                                       int ignore_case,
                                                                                       std::string* error) {
  RE2::Options options;  // as Arrow's kernels: UTF-8, errors returned, never logged
  options.set_log_errors(false);
  options.set_case_sensitive(ignore_case == 0);
  auto regex = std::make_unique<Re2Regex>(std::string_view(pattern, length), options);
  if (!regex->ok()) {
    *error = regex->error();
    return nullptr;
  }
  return regex.release();
}
