#include "ketch/functions/string/regex_engine.h"

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <vector>

namespace ketch::str {
namespace {

struct Engine {
  KetchRe2CompileFunction compile = nullptr;
  std::string error;
};

// libketch_re2.so: beside the object holding this code (the installed _core module), else where
// the build put it.
const Engine& LoadEngine() {
  static Engine engine;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&LoadEngine), &info) != 0 && info.dli_fname != nullptr) {
      std::string self = info.dli_fname;
      const size_t slash = self.rfind('/');
      candidates.push_back((slash == std::string::npos ? std::string(".") : self.substr(0, slash)) +
                           "/libketch_re2.so");
    }
#ifdef KETCH_RE2_ENGINE_BUILD_PATH
    candidates.push_back(KETCH_RE2_ENGINE_BUILD_PATH);
#endif
    for (const auto& path : candidates) {
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (handle == nullptr) {
        engine.error += std::string(engine.error.empty() ? "" : "; ") + dlerror();
        continue;
      }
      engine.compile = reinterpret_cast<KetchRe2CompileFunction>(dlsym(handle, "ketch_re2_compile"));
      if (engine.compile != nullptr) return;
      engine.error += "; " + path + " has no ketch_re2_compile";
    }
  });
  return engine;
}

}  // namespace

arrow::Result<std::unique_ptr<Regex>> CompileRegex(std::string_view pattern, bool ignore_case) {
  const Engine& engine = LoadEngine();
  if (engine.compile == nullptr) {
    return arrow::Status::IOError("the regex engine libketch_re2.so could not be loaded: ", engine.error);
  }
  std::string error;
  std::unique_ptr<Regex> regex(engine.compile(pattern.data(), pattern.size(), ignore_case ? 1 : 0, &error));
  if (!regex) return arrow::Status::Invalid("invalid regular expression '", pattern, "': ", error);
  return regex;
}

}  // namespace ketch::str
