#include "ketch/functions/media/media_engine.h"

#include <dlfcn.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <vector>

namespace ketch::media {
namespace {

struct Loaded {
  const MediaEngine* engine = nullptr;
  std::string error;
};

// libketch_media.so: beside the object holding this code (the installed _core module), else where
// the build put it (ketch_tests).
const Loaded& Load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&Load), &info) != 0 && info.dli_fname != nullptr) {
      std::string self = info.dli_fname;
      const size_t slash = self.rfind('/');
      candidates.push_back((slash == std::string::npos ? std::string(".") : self.substr(0, slash)) +
                           "/libketch_media.so");
    }
#ifdef KETCH_MEDIA_ENGINE_BUILD_PATH
    // Only where that build still exists (an installed wheel's core carries the path too).
    if (access(KETCH_MEDIA_ENGINE_BUILD_PATH, F_OK) == 0) candidates.push_back(KETCH_MEDIA_ENGINE_BUILD_PATH);
#endif
    for (const auto& path : candidates) {
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* reason = dlerror();
        loaded.error += std::string(loaded.error.empty() ? "" : "; ") + (reason ? reason : path);
        continue;
      }
      auto entry = reinterpret_cast<KetchMediaEngineFunction>(dlsym(handle, "ketch_media_engine"));
      if (entry != nullptr) {
        loaded.engine = entry();
        return;
      }
      loaded.error += "; " + path + " has no ketch_media_engine";
    }
  });
  return loaded;
}

}  // namespace

arrow::Result<const MediaEngine*> LoadMediaEngine() {
  const Loaded& loaded = Load();
  if (loaded.engine == nullptr) {
    return arrow::Status::IOError(
        "audio and video need FFmpeg 5.1's shared libraries (libavformat.so.59, libavcodec.so.59, "
        "libavutil.so.57, libswscale.so.6, libswresample.so.4), which the Ketch wheel does not bundle; "
        "on Debian 12: apt install libavformat59 libavcodec59 libswscale6 libswresample4 "
        "(the media engine libketch_media.so could not be loaded: ",
        loaded.error, ")");
  }
  return loaded.engine;
}

arrow::Result<DecodedAudio> DecodeAudio(std::shared_ptr<arrow::Buffer> bytes,
                                        const AudioDecodeOptions& options) {
  ARROW_ASSIGN_OR_RAISE(const MediaEngine* engine, LoadMediaEngine());
  return engine->DecodeAudio(std::move(bytes), options);
}

arrow::Result<AudioMetadata> ReadAudioMetadata(std::shared_ptr<arrow::Buffer> bytes, const AvLimits& limits) {
  ARROW_ASSIGN_OR_RAISE(const MediaEngine* engine, LoadMediaEngine());
  return engine->ReadAudioMetadata(std::move(bytes), limits);
}

arrow::Result<VideoMetadata> ReadVideoMetadata(std::shared_ptr<arrow::Buffer> bytes, const AvLimits& limits) {
  ARROW_ASSIGN_OR_RAISE(const MediaEngine* engine, LoadMediaEngine());
  return engine->ReadVideoMetadata(std::move(bytes), limits);
}

arrow::Result<std::unique_ptr<VideoFrameDecoder>> VideoFrameDecoder::Open(
    std::shared_ptr<arrow::Buffer> bytes, VideoFrameOptions options) {
  ARROW_ASSIGN_OR_RAISE(const MediaEngine* engine, LoadMediaEngine());
  return engine->OpenVideoFrames(std::move(bytes), std::move(options));
}

}  // namespace ketch::media
