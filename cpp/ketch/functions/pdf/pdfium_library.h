#pragma once

// pdfium, loaded at first use from the libpdfium.so that the PyPI package pypdfium2 ships
// (pypdfium2_raw/libpdfium.so; pypdfium2 ships no C headers, so the few C functions Ketch calls
// are declared here with pdfium's own names and signatures, from its public/fpdfview.h and
// public/fpdf_text.h).
//
// pdfium is NOT thread-safe: no two threads may be inside one loaded copy of it at once, whatever
// the documents (its state is global). Ketch loads up to one copy per compute thread (the same
// library, loaded again from an in-memory file, so each copy has globals of its own) and every
// call goes through a PdfiumLock, which holds one copy for its lifetime; documents, pages and
// bitmaps must be closed while the lock that opened them is held (declare them after the lock).

#include <arrow/result.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

namespace ketch::pdf {

// Opaque pdfium handles (the same tags as pdfium's fpdfview.h).
struct fpdf_document_t__;
struct fpdf_page_t__;
struct fpdf_textpage_t__;
struct fpdf_bitmap_t__;
using FPDF_DOCUMENT = fpdf_document_t__*;
using FPDF_PAGE = fpdf_page_t__*;
using FPDF_TEXTPAGE = fpdf_textpage_t__*;
using FPDF_BITMAP = fpdf_bitmap_t__*;

/// FPDF_GetLastError codes (fpdfview.h).
constexpr unsigned long kFpdfErrSuccess = 0;
constexpr unsigned long kFpdfErrUnknown = 1;
constexpr unsigned long kFpdfErrFile = 2;
constexpr unsigned long kFpdfErrFormat = 3;
constexpr unsigned long kFpdfErrPassword = 4;
constexpr unsigned long kFpdfErrSecurity = 5;
constexpr unsigned long kFpdfErrPage = 6;
/// FPDFBitmap_CreateEx format: 3 bytes per pixel, B, G, R.
constexpr int kFpdfBitmapBgr = 2;
/// FPDF_RenderPageBitmap flag: draw annotations (form fields, stamps) too, as viewers do.
constexpr int kFpdfRenderAnnotations = 0x01;
/// FPDF_RenderPageBitmap flag: write R G B instead of B G R (into a kFpdfBitmapBgr bitmap).
constexpr int kFpdfReverseByteOrder = 0x10;

/// The pdfium C functions Ketch calls, resolved with dlsym. Call them only under a PdfiumLock.
struct PdfiumApi {
  FPDF_DOCUMENT (*FPDF_LoadMemDocument64)(const void* data, size_t size, const char* password);
  unsigned long (*FPDF_GetLastError)();
  void (*FPDF_CloseDocument)(FPDF_DOCUMENT document);
  int (*FPDF_GetPageCount)(FPDF_DOCUMENT document);
  /// -1 when the document is not encrypted.
  int (*FPDF_GetSecurityHandlerRevision)(FPDF_DOCUMENT document);
  /// Writes the value of the Info dictionary's `tag` as UTF-16LE with a 2-byte terminator; returns
  /// the bytes needed (2 when the tag is absent or empty).
  unsigned long (*FPDF_GetMetaText)(FPDF_DOCUMENT document, const char* tag, void* buffer,
                                    unsigned long length);
  FPDF_PAGE (*FPDF_LoadPage)(FPDF_DOCUMENT document, int page_index);
  void (*FPDF_ClosePage)(FPDF_PAGE page);
  /// Page size in points (1/72 inch), after the page's /Rotate.
  float (*FPDF_GetPageWidthF)(FPDF_PAGE page);
  float (*FPDF_GetPageHeightF)(FPDF_PAGE page);
  FPDF_TEXTPAGE (*FPDFText_LoadPage)(FPDF_PAGE page);
  void (*FPDFText_ClosePage)(FPDF_TEXTPAGE text_page);
  int (*FPDFText_CountChars)(FPDF_TEXTPAGE text_page);
  /// Writes `count` UTF-16LE code units and a terminator; returns the units written, terminator
  /// included.
  int (*FPDFText_GetText)(FPDF_TEXTPAGE text_page, int start, int count, unsigned short* out);
  FPDF_BITMAP (*FPDFBitmap_CreateEx)(int width, int height, int format, void* first_scan, int stride);
  void (*FPDFBitmap_Destroy)(FPDF_BITMAP bitmap);
  /// Returns FPDF_BOOL in current pdfium, void in older releases: the result is not read.
  int (*FPDFBitmap_FillRect)(FPDF_BITMAP bitmap, int left, int top, int width, int height,
                             unsigned long argb);
  void (*FPDF_RenderPageBitmap)(FPDF_BITMAP bitmap, FPDF_PAGE page, int start_x, int start_y, int size_x,
                                int size_y, int rotate, int flags);
};

/// Deleters that close pdfium handles; they run under the PdfiumLock that opened the handle.
struct DocumentCloser {
  const PdfiumApi* api;
  void operator()(FPDF_DOCUMENT document) const { api->FPDF_CloseDocument(document); }
};
struct PageCloser {
  const PdfiumApi* api;
  void operator()(FPDF_PAGE page) const { api->FPDF_ClosePage(page); }
};
struct TextPageCloser {
  const PdfiumApi* api;
  void operator()(FPDF_TEXTPAGE text_page) const { api->FPDFText_ClosePage(text_page); }
};
struct BitmapDestroyer {
  const PdfiumApi* api;
  void operator()(FPDF_BITMAP bitmap) const { api->FPDFBitmap_Destroy(bitmap); }
};
using Document = std::unique_ptr<fpdf_document_t__, DocumentCloser>;
using Page = std::unique_ptr<fpdf_page_t__, PageCloser>;
using TextPage = std::unique_ptr<fpdf_textpage_t__, TextPageCloser>;
using Bitmap = std::unique_ptr<fpdf_bitmap_t__, BitmapDestroyer>;

/// Exclusive use of one loaded copy of pdfium for the lock's lifetime, and that copy's API.
///
/// pdfium is the library named by the environment variable KETCH_PDFIUM_LIBRARY (a path to
/// libpdfium.so; the Python package sets it from pypdfium2's install location when it is unset)
/// when set, else `<site-packages>/pypdfium2_raw/libpdfium.so` beside the pyarrow whose libarrow
/// this process runs (found with dladdr: so Ray workers and the C++ tests find it too). The library
/// is loaded and initialized (FPDF_InitLibraryWithConfig) by the first Acquire and stays so until
/// the process exits: FPDF_DestroyLibrary is never called, since a compute thread could still be
/// inside pdfium while the process exits. When every loaded copy is in use, Acquire loads another
/// (its bytes copied into a memfd and dlopen'ed from /proc/self/fd, so the dynamic loader sees a
/// new file), up to one per hardware thread (at most 16); past that, or when a copy cannot be
/// loaded, it waits for a copy to be released. Each copy costs about 8 MB of memory.
class PdfiumLock {
 public:
  /// Blocks until a copy of pdfium is free. Errors: IOError when libpdfium.so cannot be found or
  /// loaded, or lacks a function (the message names the paths tried and `pip install pypdfium2`);
  /// the same error on every later call.
  static arrow::Result<PdfiumLock> Acquire();
  /// How many copies of pdfium this process has loaded (0 before the first Acquire).
  static int LoadedCopies();

  PdfiumLock(PdfiumLock&& other) noexcept : copy_(other.copy_), api_(other.api_) { other.copy_ = nullptr; }
  PdfiumLock& operator=(PdfiumLock&&) = delete;
  PdfiumLock(const PdfiumLock&) = delete;
  ~PdfiumLock();

  const PdfiumApi& api() const { return *api_; }

  /// Opens `size` bytes at `data` (which must outlive the document). Errors (Invalid): the cause
  /// from FPDF_GetLastError: "encrypted (a password is required)", "not a PDF or corrupted", ...
  arrow::Result<Document> OpenDocument(const void* data, size_t size) const;
  /// Loads page `index` (0-based). Invalid when pdfium cannot parse it.
  arrow::Result<Page> LoadPage(const Document& document, int index) const;
  /// The message for FPDF_GetLastError's code.
  static std::string ErrorMessage(unsigned long code);

 private:
  PdfiumLock(void* copy, const PdfiumApi* api) : copy_(copy), api_(api) {}
  void* copy_;  // the held copy (non-owning; released by the destructor)
  const PdfiumApi* api_;
};

}  // namespace ketch::pdf
