#include "ketch/io/redact.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace ketch::io {
namespace {

constexpr std::string_view kMask = "***";

bool IsSchemeChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// Characters that end a URL embedded in prose: whitespace, quotes and brackets.
bool EndsUrl(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == '\'' || c == '"' || c == '`' || c == '<' ||
         c == '>' || c == '\\';
}

// Redacts the URL that starts with "://" at `text[pos]`; appends it to `out` and returns the
// index just past it.
size_t RedactUrlAt(std::string_view text, size_t pos, std::string* out) {
  size_t i = pos + 3;
  out->append("://");
  // Authority: up to the first '/', '?', '#' or the URL's end. User-info ends at its last '@'.
  size_t end = i;
  while (end < text.size() && !EndsUrl(text[end]) && text[end] != '/' && text[end] != '?' &&
         text[end] != '#') {
    ++end;
  }
  const auto authority = text.substr(i, end - i);
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    out->append(kMask);
    out->append(authority.substr(at));
  } else {
    out->append(authority);
  }
  i = end;
  // Path: copied as is, up to the query.
  while (i < text.size() && !EndsUrl(text[i]) && text[i] != '?' && text[i] != '#') out->push_back(text[i++]);
  if (i >= text.size() || text[i] != '?') return i;
  out->push_back(text[i++]);
  // Query: name=value pairs split by '&' or ';'; secret values masked.
  while (i < text.size() && !EndsUrl(text[i]) && text[i] != '#') {
    size_t stop = i;
    while (stop < text.size() && !EndsUrl(text[stop]) && text[stop] != '&' && text[stop] != ';' &&
           text[stop] != '#') {
      ++stop;
    }
    const auto pair = text.substr(i, stop - i);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && IsSecretName(pair.substr(0, eq))) {
      out->append(pair.substr(0, eq + 1));
      out->append(kMask);
    } else {
      out->append(pair);
    }
    i = stop;
    if (i < text.size() && (text[i] == '&' || text[i] == ';')) out->push_back(text[i++]);
  }
  return i;
}

std::string ReplaceAll(std::string text, std::string_view secret) {
  size_t pos = 0;
  while ((pos = text.find(secret, pos)) != std::string::npos) {
    text.replace(pos, secret.size(), kMask);
    pos += kMask.size();
  }
  return text;
}

}  // namespace

bool IsSecretName(std::string_view name) {
  std::string key;
  for (char c : name) {
    if (c == '-' || c == '_' || c == ' ') continue;
    key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  // Percent-encoded names (X%2DAmz%2DSignature) are rare; '%' is kept and such names pass through.
  static constexpr std::array<std::string_view, 7> kExact = {"sig", "key",  "auth", "pass",
                                                             "pwd", "code", "sas"};
  static constexpr std::array<std::string_view, 11> kContains = {
      "token",  "secret",    "password", "passwd",     "signature",    "credential",
      "apikey", "accesskey", "keyid",    "privatekey", "authorization"};
  if (std::find(kExact.begin(), kExact.end(), key) != kExact.end()) return true;
  return std::any_of(kContains.begin(), kContains.end(),
                     [&](std::string_view part) { return key.find(part) != std::string::npos; });
}

std::string Redact(std::string_view text, const std::vector<std::string>& secrets) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t found = text.find("://", i);
    if (found == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    // A scheme must precede "://" ("http", "s3", "file"); otherwise copy it and move on.
    size_t scheme = found;
    while (scheme > i && IsSchemeChar(text[scheme - 1])) --scheme;
    out.append(text.substr(i, found - i));
    if (scheme == found) {
      out.append("://");
      i = found + 3;
      continue;
    }
    i = RedactUrlAt(text, found, &out);
  }
  for (const auto& secret : secrets) {
    if (secret.size() >= 4) out = ReplaceAll(std::move(out), secret);
  }
  return out;
}

}  // namespace ketch::io
