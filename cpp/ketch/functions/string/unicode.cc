// Lookups over the generated tables in unicode_tables.cc; ASCII answers without a search.

#include <algorithm>

#include "ketch/functions/string/unicode_internal.h"

namespace ketch::str::unicode {
namespace {

bool InRanges(std::span<const CodePointRange> ranges, char32_t c) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), c,
                             [](char32_t value, const CodePointRange& r) { return value < r.first; });
  return it != ranges.begin() && c <= std::prev(it)->last;
}

const CaseMapping* FindMapping(std::span<const CaseMapping> mappings, char32_t c) {
  auto it = std::lower_bound(mappings.begin(), mappings.end(), c,
                             [](const CaseMapping& m, char32_t value) { return m.from < value; });
  return it != mappings.end() && it->from == c ? &*it : nullptr;
}

void AppendMapped(std::span<const CaseMapping> mappings, char32_t c, std::string* out) {
  const CaseMapping* m = FindMapping(mappings, c);
  if (m == nullptr) {
    AppendUtf8(c, out);
    return;
  }
  for (char32_t t : m->to) {
    if (t == 0) break;
    AppendUtf8(t, out);
  }
}

}  // namespace

bool IsAlphanumericNonAscii(char32_t c) { return InRanges(AlphanumericRanges(), c); }
bool IsLowercaseNonAscii(char32_t c) { return InRanges(LowercaseRanges(), c); }
bool IsUppercaseNonAscii(char32_t c) { return InRanges(UppercaseRanges(), c); }

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

void AppendLowerNonAscii(char32_t c, std::string* out) { AppendMapped(LowerMappings(), c, out); }
void AppendUpperNonAscii(char32_t c, std::string* out) { AppendMapped(UpperMappings(), c, out); }

}  // namespace ketch::str::unicode
