#include "ketch/functions/pdf/pdfium_library.h"

#include <arrow/memory_pool.h>
#include <dlfcn.h>

#include <cstdlib>
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
};

std::mutex& GlobalMutex() {
  static std::mutex mutex;
  return mutex;
}

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

Loaded LoadOnce() {
  Loaded loaded;
  std::string tried;
  for (const auto& path : Candidates()) {
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
    return loaded;  // the handle stays open for the life of the process
  }
  loaded.error =
      "pdf functions need pdfium, the libpdfium.so that the pypdfium2 package ships (pip install "
      "pypdfium2, or set KETCH_PDFIUM_LIBRARY to a libpdfium.so); tried: " +
      (tried.empty() ? std::string("no candidate path") : tried);
  return loaded;
}

}  // namespace

arrow::Result<PdfiumLock> PdfiumLock::Acquire() {
  std::unique_lock<std::mutex> lock(GlobalMutex());
  // Loaded under the same mutex, so FPDF_InitLibraryWithConfig runs once, before any other call.
  static const Loaded* loaded = new Loaded(LoadOnce());  // never freed: see the header
  if (!loaded->error.empty()) return arrow::Status::IOError(loaded->error);
  return PdfiumLock(std::move(lock), &loaded->api);
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
