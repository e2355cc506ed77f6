#include "ketch/functions/pdf/pdfium_library.h"

#include <arrow/memory_pool.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <thread>
#include <vector>

namespace ketch::pdf {
namespace {

// FPDF_LIBRARY_CONFIG (fpdfview.h). Version 2 reads the fields up to m_v8EmbedderSlot; the later
// ones (platform, renderer, font backend) are zero, pdfium's defaults.
struct LibraryConfig {
  int version = 2;
  const char** user_font_paths = nullptr;  // nullptr: the system's font folders
  void* isolate = nullptr;
  unsigned int v8_embedder_slot = 0;
  void* platform = nullptr;
  int renderer_type = 0;
  int font_library_type = 0;
};

struct Loaded {
  PdfiumApi api{};
  std::string error;  // empty once loaded
  std::string path;   // the file it was loaded from
};

std::vector<std::string> Candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("KETCH_PDFIUM_LIBRARY"); env != nullptr && *env != '\0') {
    out.emplace_back(env);
    return out;  // named explicitly: that library or an error, never another one found silently
  }
  // <site-packages>/pyarrow/libarrow.so.N → <site-packages>/pypdfium2_raw/libpdfium.so
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&arrow::default_memory_pool), &info) != 0 && info.dli_fname != nullptr) {
    std::string path = info.dli_fname;
    for (int up = 0; up < 2; ++up) {
      const size_t slash = path.rfind('/');
      path = slash == std::string::npos ? std::string(".") : path.substr(0, slash);
    }
    out.push_back(path + "/pypdfium2_raw/libpdfium.so");
  }
  return out;
}

template <typename F>
bool Resolve(void* handle, const char* name, F* out, std::string* error) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  if (*out == nullptr) *error += std::string(error->empty() ? "" : "; ") + "no symbol " + name;
  return *out != nullptr;
}

Loaded Load(const std::vector<std::string>& candidates) {
  Loaded loaded;
  std::string tried;
  for (const auto& path : candidates) {
    // RTLD_LOCAL: pdfium's own symbols never satisfy anyone else's references.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(why ? why : path.c_str());
      continue;
    }
    PdfiumApi& a = loaded.api;
    std::string missing;
    void (*init)(const LibraryConfig*) = nullptr;
    bool ok = Resolve(handle, "FPDF_InitLibraryWithConfig", &init, &missing);
    ok &= Resolve(handle, "FPDF_LoadMemDocument64", &a.FPDF_LoadMemDocument64, &missing);
    ok &= Resolve(handle, "FPDF_GetLastError", &a.FPDF_GetLastError, &missing);
    ok &= Resolve(handle, "FPDF_CloseDocument", &a.FPDF_CloseDocument, &missing);
    ok &= Resolve(handle, "FPDF_GetPageCount", &a.FPDF_GetPageCount, &missing);
    ok &= Resolve(handle, "FPDF_GetSecurityHandlerRevision", &a.FPDF_GetSecurityHandlerRevision, &missing);
    ok &= Resolve(handle, "FPDF_GetMetaText", &a.FPDF_GetMetaText, &missing);
    ok &= Resolve(handle, "FPDF_LoadPage", &a.FPDF_LoadPage, &missing);
    ok &= Resolve(handle, "FPDF_ClosePage", &a.FPDF_ClosePage, &missing);
    ok &= Resolve(handle, "FPDF_GetPageWidthF", &a.FPDF_GetPageWidthF, &missing);
    ok &= Resolve(handle, "FPDF_GetPageHeightF", &a.FPDF_GetPageHeightF, &missing);
    ok &= Resolve(handle, "FPDFText_LoadPage", &a.FPDFText_LoadPage, &missing);
    ok &= Resolve(handle, "FPDFText_ClosePage", &a.FPDFText_ClosePage, &missing);
    ok &= Resolve(handle, "FPDFText_CountChars", &a.FPDFText_CountChars, &missing);
    ok &= Resolve(handle, "FPDFText_GetText", &a.FPDFText_GetText, &missing);
    ok &= Resolve(handle, "FPDFBitmap_CreateEx", &a.FPDFBitmap_CreateEx, &missing);
    ok &= Resolve(handle, "FPDFBitmap_Destroy", &a.FPDFBitmap_Destroy, &missing);
    ok &= Resolve(handle, "FPDFBitmap_FillRect", &a.FPDFBitmap_FillRect, &missing);
    ok &= Resolve(handle, "FPDF_RenderPageBitmap", &a.FPDF_RenderPageBitmap, &missing);
    if (!ok) {
      tried += (tried.empty() ? "" : "; ") + path + ": " + missing;
      dlclose(handle);
      continue;
    }
    LibraryConfig config;
    init(&config);
    loaded.path = path;
    return loaded;  // the handle stays open for the life of the process
  }
  loaded.error =
      "pdf functions need pdfium, the libpdfium.so that the pypdfium2 package ships (pip install "
      "\"ketch[media]\", or set KETCH_PDFIUM_LIBRARY to a libpdfium.so); tried: " +
      (tried.empty() ? std::string("no candidate path") : tried);
  return loaded;
}

// Another copy of the library at `path`: its bytes in a memfd, loaded from /proc/self/fd/N (a
// new inode, so dlopen maps it again, with globals of its own). Error text on failure.
Loaded LoadCopy(const std::string& path) {
  Loaded failed;
  const int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const int fd = memfd_create("ketch-pdfium", MFD_CLOEXEC);
  bool copied = in >= 0 && fd >= 0;
  char buffer[1 << 16];
  for (ssize_t n; copied && (n = read(in, buffer, sizeof(buffer))) != 0;) {
    copied = n > 0 && write(fd, buffer, static_cast<size_t>(n)) == n;
  }
  if (in >= 0) close(in);
  if (!copied) {
    if (fd >= 0) close(fd);
    failed.error = "could not copy " + path + " into memory";
    return failed;
  }
  Loaded loaded = Load({"/proc/self/fd/" + std::to_string(fd)});
  close(fd);  // the mapping keeps the memfd's pages
  return loaded;
}

// The copies of pdfium and which are in use. Never freed: see the header.
struct Copies {
  std::mutex mutex;
  std::condition_variable released;
  std::vector<std::unique_ptr<Loaded>> loaded;
  std::vector<bool> busy;
  std::string error;  // the first load's failure: every Acquire fails with it
  size_t max_copies = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
};

Copies& AllCopies() {
  static Copies* copies = new Copies();
  return *copies;
}

}  // namespace

arrow::Result<PdfiumLock> PdfiumLock::Acquire() {
  Copies& copies = AllCopies();
  std::unique_lock<std::mutex> lock(copies.mutex);
  // Copies are loaded under the mutex, so each one's FPDF_InitLibraryWithConfig runs before any
  // other call into it.
  if (copies.loaded.empty() && copies.error.empty()) {
    auto first = std::make_unique<Loaded>(Load(Candidates()));
    if (!first->error.empty()) {
      copies.error = first->error;
    } else {
      copies.loaded.push_back(std::move(first));
      copies.busy.push_back(false);
    }
  }
  if (!copies.error.empty()) return arrow::Status::IOError(copies.error);
  while (true) {
    for (size_t i = 0; i < copies.loaded.size(); ++i) {
      if (!copies.busy[i]) {
        copies.busy[i] = true;
        return PdfiumLock(copies.loaded[i].get(), &copies.loaded[i]->api);
      }
    }
    if (copies.loaded.size() < copies.max_copies) {
      auto copy = std::make_unique<Loaded>(LoadCopy(copies.loaded[0]->path));
      if (copy->error.empty()) {
        copies.loaded.push_back(std::move(copy));
        copies.busy.push_back(false);
        continue;
      }
      copies.max_copies = copies.loaded.size();  // no more copies: share the ones there are
    }
    copies.released.wait(lock);
  }
}

PdfiumLock::~PdfiumLock() {
  if (copy_ == nullptr) return;
  Copies& copies = AllCopies();
  {
    std::lock_guard<std::mutex> lock(copies.mutex);
    for (size_t i = 0; i < copies.loaded.size(); ++i) {
      if (copies.loaded[i].get() == copy_) copies.busy[i] = false;
    }
  }
  copies.released.notify_one();
}

int PdfiumLock::LoadedCopies() {
  Copies& copies = AllCopies();
  std::lock_guard<std::mutex> lock(copies.mutex);
  return static_cast<int>(copies.loaded.size());
}

std::string PdfiumLock::ErrorMessage(unsigned long code) {
  switch (code) {
    case kFpdfErrSuccess:
      return "pdfium reported no error";
    case kFpdfErrFile:
      return "the file could not be opened";
    case kFpdfErrFormat:
      return "not a PDF or corrupted (pdfium could not parse it)";
    case kFpdfErrPassword:
      return "encrypted: a password is required to open it";
    case kFpdfErrSecurity:
      return "encrypted with an unsupported security handler";
    case kFpdfErrPage:
      return "a page could not be found or its content is corrupted";
    default:
      return "pdfium failed with unknown error code " + std::to_string(code);
  }
}

arrow::Result<Document> PdfiumLock::OpenDocument(const void* data, size_t size) const {
  Document document(api_->FPDF_LoadMemDocument64(data, size, nullptr), DocumentCloser{api_});
  if (document == nullptr) return arrow::Status::Invalid(ErrorMessage(api_->FPDF_GetLastError()));
  return document;
}

arrow::Result<Page> PdfiumLock::LoadPage(const Document& document, int index) const {
  Page page(api_->FPDF_LoadPage(document.get(), index), PageCloser{api_});
  if (page == nullptr) {
    return arrow::Status::Invalid("page ", index + 1,
                                  " could not be loaded (its objects are missing or corrupted)");
  }
  return page;
}

}  // namespace ketch::pdf
