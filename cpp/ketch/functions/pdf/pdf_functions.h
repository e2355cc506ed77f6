#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <cstdint>
#include <string>

namespace ketch::pdf {

/// Registers the PDF kernels (pdfium, see pdfium_library.h). Each takes one argument, the PDF's
/// bytes (binary | large_binary) or a File column (read on the I/O pool: first a 1 KiB ranged
/// read whose missing "%PDF-" header refuses the row without reading the rest; a file larger than
/// the query's memory budget is refused before it is read), and the option on_error: "raise"
/// (default: Invalid / IOError naming the source row, the path for File input, and the cause) or
/// "null" (that row becomes null; other rows are unaffected). A null input row gives a null.
///
/// - pdf_page_count(f) → int64: the number of pages.
/// - pdf_text(f) → list<struct<page_number: int64, text: large_string>>: one element per page in
///   page order, page_number 1-based; the text is pdfium's text extraction (FPDFText_GetText)
///   converted from UTF-16 to UTF-8 (unpaired surrogates become U+FFFD), with its "\r\n" line
///   breaks turned into "\n".
/// - pdf_render(f; page: int >= 1, dpi: number in (0, 2400] = 72) → Image[RGB]: page `page`
///   (1-based, as pdf_text's page_number) rendered on white with annotations, width x height =
///   round(points * dpi / 72) of the page's size after its /Rotate. Errors for a page out of range
///   or an output over image::kMaxImagePixels pixels or the memory budget (refused before allocating).
/// - pdf_metadata(f) → struct<page_count: int64, title, author, subject, keywords, creator,
///   producer: utf8 (null when absent or empty), encrypted: bool (true for a document with a
///   security handler that opened without a password, e.g. one with only an owner password)>.
///
/// Causes named in errors: "empty (0 bytes)", "not a PDF: no '%PDF-' header in the first 1024
/// bytes (the bytes look like <MIME type>)", "truncated: no '%%EOF' marker in the last 1024 bytes"
/// (Acrobat's rule; pdfium alone would silently recover what it can), "encrypted: a password is
/// required to open it", "not a PDF or corrupted (pdfium could not parse it)", and pdfium not found.
arrow::Status RegisterPdfFunctions();

/// Bytes at the head / tail of a PDF that the header / %%EOF checks look at (Acrobat's limits).
constexpr int64_t kPdfHeaderWindow = 1024;
constexpr int64_t kPdfTrailerWindow = 1024;

/// OK when `data` can be a whole PDF: not empty, "%PDF-" in its first kPdfHeaderWindow bytes,
/// "%%EOF" in its last kPdfTrailerWindow bytes; Invalid naming the cause otherwise.
arrow::Status CheckPdfBytes(const uint8_t* data, int64_t size);

/// OK when a file's first bytes (at most kPdfHeaderWindow of them) hold the "%PDF-" header.
arrow::Status CheckPdfHeader(const uint8_t* data, int64_t size);

/// The number of pages of the PDF in `data` (the bytes of one document), through pdfium.
arrow::Result<int64_t> PdfPageCount(const uint8_t* data, int64_t size);

}  // namespace ketch::pdf
