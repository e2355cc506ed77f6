#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ketch/functions/pdf/pdf_functions.h"
#include "ketch/functions/pdf/pdfium_library.h"

namespace ketch::pdf {
namespace {

// A PDF of `pages` empty US-letter pages, written byte by byte with a correct xref table.
std::string MinimalPdf(int pages) {
  std::vector<std::string> objects;
  objects.push_back("<< /Type /Catalog /Pages 2 0 R >>");
  std::string kids;
  for (int p = 0; p < pages; ++p) kids += std::to_string(3 + p) + " 0 R ";
  objects.push_back("<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages) + " >>");
  for (int p = 0; p < pages; ++p)
    objects.push_back("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>");
  std::string out = "%PDF-1.4\n";
  std::vector<size_t> offsets;
  for (size_t i = 0; i < objects.size(); ++i) {
    offsets.push_back(out.size());
    out += std::to_string(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
  }
  const size_t xref = out.size();
  out += "xref\n0 " + std::to_string(objects.size() + 1) + "\n0000000000 65535 f \n";
  for (size_t offset : offsets) {
    std::string number = std::to_string(offset);
    out += std::string(10 - number.size(), '0') + number + " 00000 n \n";
  }
  out += "trailer\n<< /Size " + std::to_string(objects.size() + 1) + " /Root 1 0 R >>\nstartxref\n" +
         std::to_string(xref) + "\n%%EOF\n";
  return out;
}

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// pdfium comes from the pypdfium2 wheel beside pyarrow (or KETCH_PDFIUM_LIBRARY): skip, naming
// why, where it is not installed.
#define SKIP_WITHOUT_PDFIUM()                                                                        \
  do {                                                                                               \
    auto probe = PdfiumLock::Acquire();                                                              \
    if (!probe.ok()) GTEST_SKIP() << "pdfium not found (pip install pypdfium2): " << probe.status(); \
  } while (false)

TEST(PdfiumTest, LoadsTheLibraryAndCountsPagesOfAnInMemoryPdf) {
  SKIP_WITHOUT_PDFIUM();
  for (int pages : {1, 3, 40}) {
    const std::string pdf = MinimalPdf(pages);
    auto count = PdfPageCount(Bytes(pdf), static_cast<int64_t>(pdf.size()));
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(*count, pages);
  }
}

TEST(PdfiumTest, PageSizeInPoints) {
  SKIP_WITHOUT_PDFIUM();
  const std::string pdf = MinimalPdf(2);
  auto lock = PdfiumLock::Acquire();
  ASSERT_TRUE(lock.ok());
  auto document = lock->OpenDocument(pdf.data(), pdf.size());
  ASSERT_TRUE(document.ok()) << document.status();
  auto page = lock->LoadPage(*document, 1);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_FLOAT_EQ(lock->api().FPDF_GetPageWidthF(page->get()), 612);
  EXPECT_FLOAT_EQ(lock->api().FPDF_GetPageHeightF(page->get()), 792);
  EXPECT_FALSE(lock->LoadPage(*document, 2).ok());
}

TEST(PdfiumTest, BadBytesAreRefusedWithTheirCause) {
  SKIP_WITHOUT_PDFIUM();
  const std::string pdf = MinimalPdf(1);
  auto count = [](const std::string& bytes) {
    return PdfPageCount(Bytes(bytes), static_cast<int64_t>(bytes.size()));
  };
  EXPECT_NE(count("").status().message().find("empty (0 bytes)"), std::string::npos);
  EXPECT_NE(
      count(std::string(4096, '\0')).status().message().find("no '%PDF-' header in the first 1024 bytes"),
      std::string::npos);
  EXPECT_NE(count(pdf.substr(0, pdf.size() / 2)).status().message().find("truncated"), std::string::npos);
  const std::string garbage = "%PDF-1.7\n" + std::string(2000, 'x') + "\n%%EOF\n";
  EXPECT_NE(count(garbage).status().message().find("not a PDF or corrupted"), std::string::npos);
}

}  // namespace
}  // namespace ketch::pdf
