#include "ketch/functions/pdf/pdf_functions.h"

#include <arrow/compute/api.h>
#include <arrow/util/future.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>
#include <string_view>

#include "ketch/common/thread_pools.h"
#include "ketch/expr/function_registry.h"
#include "ketch/functions/file/mime_sniff.h"
#include "ketch/functions/image/image_functions.h"
#include "ketch/functions/pdf/pdfium_library.h"
#include "ketch/functions/url/url_functions.h"
#include "ketch/io/object_reader.h"
#include "ketch/io/redact.h"
#include "ketch/types/file_type.h"
#include "ketch/types/image_array.h"

namespace ketch::pdf {
namespace {

constexpr std::string_view kHeader = "%PDF-";
constexpr std::string_view kEof = "%%EOF";
constexpr double kMaxDpi = 2400;

// "612", "33.3": a number as a person writes it (arrow's message builder prints "612.000000").
std::string Num(double value) {
  std::ostringstream out;
  out.precision(12);
  out << value;
  return out.str();
}

bool Contains(const uint8_t* data, int64_t size, std::string_view needle) {
  std::string_view haystack(reinterpret_cast<const char*>(data), static_cast<size_t>(size));
  return haystack.find(needle) != std::string_view::npos;
}

// The PDF bytes of every row of a call's input: views into a binary column, or buffers read from
// the files of a File column (with a per-row error where reading or the header check failed).
class PdfInputs {
 public:
  static arrow::Result<PdfInputs> Make(const std::shared_ptr<arrow::Array>& input,
                                       const FunctionOptions& options, const EvalContext& ctx) {
    PdfInputs out;
    const int64_t n = input->length();
    out.rows_.resize(n);
    if (!IsFileType(*input->type())) {
      ARROW_ASSIGN_OR_RAISE(out.binary_, arrow::compute::Cast(*input, arrow::large_binary()));
      const auto& bytes = static_cast<const arrow::LargeBinaryArray&>(*out.binary_);
      for (int64_t i = 0; i < n; ++i) {
        if (bytes.IsNull(i)) continue;
        auto view = bytes.GetView(i);
        out.rows_[i].data = reinterpret_cast<const uint8_t*>(view.data());
        out.rows_[i].size = static_cast<int64_t>(view.size());
        out.rows_[i].valid = true;
      }
      return out;
    }
    const auto& storage =
        static_cast<const arrow::StructArray&>(*static_cast<const arrow::ExtensionArray&>(*input).storage());
    const auto& paths = static_cast<const arrow::LargeStringArray&>(*storage.field(0));
    const auto& sizes = static_cast<const arrow::Int64Array&>(*storage.field(1));
    ARROW_ASSIGN_OR_RAISE(auto s3, url::S3ConfigFromOptions(options));
    const int64_t budget = ctx.memory_budget_bytes;
    // One I/O task per row, up to 32 in flight (as file_read).
    auto* pool = IoPool(0);
    constexpr int64_t kWindow = 32;
    for (int64_t start = 0; start < n; start += kWindow) {
      const int64_t end = std::min(n, start + kWindow);
      std::vector<arrow::Future<std::shared_ptr<arrow::Buffer>>> futures;
      for (int64_t i = start; i < end; ++i) {
        if (input->IsNull(i) || paths.IsNull(i)) {
          futures.push_back(arrow::Future<std::shared_ptr<arrow::Buffer>>::MakeFinished(nullptr));
          continue;
        }
        std::string path(paths.GetView(i));
        std::optional<int64_t> known_size;
        if (sizes.IsValid(i)) known_size = sizes.Value(i);
        futures.push_back(SubmitOrRunHere(
            pool, [path, s3, known_size, budget]() -> arrow::Result<std::shared_ptr<arrow::Buffer>> {
              // The header first, with a ranged read: a 1 GB file that is no PDF is never read whole.
              ARROW_ASSIGN_OR_RAISE(auto head, io::ReadObjectPrefix(path, kPdfHeaderWindow, s3));
              if (head->size() == 0) return arrow::Status::Invalid("empty (0 bytes)");
              ARROW_RETURN_NOT_OK(CheckPdfHeader(head->data(), head->size()));
              if (head->size() < kPdfHeaderWindow) return head;  // the whole file
              std::optional<int64_t> size = known_size;
              if (!size) {
                auto stat = io::ObjectSize(path, s3);  // NotImplemented for http(s): read and see
                if (stat.ok()) size = *stat;
              }
              if (size && budget > 0 && *size > budget) {
                return arrow::Status::Invalid("the file's ", *size,
                                              " bytes exceed the query's memory budget of ", budget,
                                              " bytes (memory_budget_bytes)");
              }
              return io::ReadObject(path, s3);
            }));
      }
      for (int64_t i = start; i < end; ++i) {
        auto result = futures[i - start].result();
        Row& row = out.rows_[i];
        if (input->IsNull(i) || paths.IsNull(i)) continue;
        row.path = std::string(paths.GetView(i));
        if (!result.ok()) {
          // Redacted: an s3:// or http(s) URL may carry credentials in its message.
          row.error = result.status().WithMessage(io::Redact(result.status().message(), s3.Secrets()));
          continue;
        }
        row.buffer = *result;
        row.data = row.buffer->data();
        row.size = row.buffer->size();
        row.valid = true;
      }
    }
    return out;
  }

  int64_t length() const { return static_cast<int64_t>(rows_.size()); }
  /// A null input row (no error, no bytes).
  bool IsNull(int64_t i) const { return !rows_[i].valid && rows_[i].error.ok(); }
  /// The error reading row i's file (OK for bytes input and rows read fine).
  const arrow::Status& ReadError(int64_t i) const { return rows_[i].error; }
  const uint8_t* data(int64_t i) const { return rows_[i].data; }
  int64_t size(int64_t i) const { return rows_[i].size; }

  /// "<function> failed at row N ('path'): cause", as IOError for a failed read, else Invalid.
  arrow::Status RowError(const std::string& function, const EvalContext& ctx, int64_t i,
                         const arrow::Status& cause) const {
    std::string where = rows_[i].path.empty() ? "" : " ('" + io::Redact(rows_[i].path) + "')";
    if (cause.IsIOError()) {
      return arrow::Status::IOError(function, " failed at row ", ctx.SourceRow(i), where, ": ",
                                    cause.message());
    }
    return arrow::Status::Invalid(function, " failed at row ", ctx.SourceRow(i), where, ": ",
                                  cause.message());
  }

 private:
  struct Row {
    const uint8_t* data = nullptr;
    int64_t size = 0;
    bool valid = false;
    arrow::Status error;
    std::string path;
    std::shared_ptr<arrow::Buffer> buffer;
  };
  std::shared_ptr<arrow::Array> binary_;
  std::vector<Row> rows_;
};

arrow::Result<std::string> OnError(const FunctionOptions& options, const std::string& function) {
  if (!HasOption(options, "on_error")) return std::string("raise");
  ARROW_ASSIGN_OR_RAISE(auto on_error, GetStringOption(options, "on_error", function));
  if (on_error != "raise" && on_error != "null") {
    return arrow::Status::Invalid(function, ": on_error must be 'raise' or 'null', got '", on_error, "'");
  }
  return on_error;
}

// Appends "\n" for "\r\n" (pdfium's generated line breaks) and UTF-8 for UTF-16 code units.
void AppendUtf16AsUtf8(const unsigned short* units, int64_t count, std::string* out) {
  auto put = [out](uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  };
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t u = units[i];
    if (u == '\r' && i + 1 < count && units[i + 1] == '\n') continue;  // the '\n' follows
    if (u >= 0xD800 && u <= 0xDBFF && i + 1 < count && units[i + 1] >= 0xDC00 && units[i + 1] <= 0xDFFF) {
      put(0x10000 + ((u - 0xD800) << 10) + (units[i + 1] - 0xDC00));
      ++i;
    } else if (u >= 0xD800 && u <= 0xDFFF) {
      put(0xFFFD);
    } else {
      put(u);
    }
  }
}

// The UTF-8 value of the Info dictionary's `tag`; empty when absent.
std::string MetaText(const PdfiumLock& lock, const Document& document, const char* tag) {
  const PdfiumApi& api = lock.api();
  const unsigned long bytes = api.FPDF_GetMetaText(document.get(), tag, nullptr, 0);
  if (bytes <= 2) return {};
  std::vector<unsigned short> units((bytes + 1) / 2, 0);
  api.FPDF_GetMetaText(document.get(), tag, units.data(), static_cast<unsigned long>(units.size() * 2));
  int64_t count = static_cast<int64_t>(units.size());
  while (count > 0 && units[count - 1] == 0) --count;
  std::string out;
  AppendUtf16AsUtf8(units.data(), count, &out);
  return out;
}

// One PDF kernel: the shared input handling (bytes or File, on_error, row errors) around a per-row
// step that runs under the pdfium lock with the opened document.
class PdfFunction : public ScalarFunction {
 public:
  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    if (types.size() != 1) {
      return arrow::Status::Invalid(name(), " takes 1 argument (the PDF's bytes or a File column), got ",
                                    types.size());
    }
    if (!arrow::is_binary_like(types[0]->id()) && !arrow::is_large_binary_like(types[0]->id()) &&
        !IsFileType(*types[0])) {
      return arrow::Status::TypeError(name(), " expects binary bytes or a File column, but ",
                                      exprs[0]->ToString(), " has type ", types[0]->ToString());
    }
    ARROW_RETURN_NOT_OK(OnError(options, name()).status());
    ARROW_RETURN_NOT_OK(CheckOptions(options));
    return OutputType();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto on_error, OnError(options, name()));
    ARROW_RETURN_NOT_OK(CheckOptions(options));
    ARROW_ASSIGN_OR_RAISE(auto inputs, PdfInputs::Make(input, options, ctx));
    ARROW_ASSIGN_OR_RAISE(auto output, MakeOutput(options, inputs.length()));
    for (int64_t i = 0; i < inputs.length(); ++i) {
      if (inputs.IsNull(i)) {
        ARROW_RETURN_NOT_OK(output->AppendNull());
        continue;
      }
      arrow::Status status = inputs.ReadError(i);
      if (status.ok()) status = CheckPdfBytes(inputs.data(i), inputs.size(i));
      if (status.ok()) {
        ARROW_ASSIGN_OR_RAISE(auto lock, PdfiumLock::Acquire());  // pdfium missing: fails the query
        auto document = lock.OpenDocument(inputs.data(i), static_cast<size_t>(inputs.size(i)));
        status = document.ok() ? output->AppendRow(lock, *document, ctx) : document.status();
      }
      if (status.ok()) continue;
      if (on_error == "null") {
        ARROW_RETURN_NOT_OK(output->AppendNull());
        continue;
      }
      return inputs.RowError(name(), ctx, i, status);
    }
    return output->Finish();
  }

 protected:
  // The rows of one call's result.
  class Output {
   public:
    virtual ~Output() = default;
    /// Appends the row for `document`; on error, nothing was appended.
    virtual arrow::Status AppendRow(const PdfiumLock& lock, const Document& document,
                                    const EvalContext& ctx) = 0;
    virtual arrow::Status AppendNull() = 0;
    virtual arrow::Result<std::shared_ptr<arrow::Array>> Finish() = 0;
  };

  virtual std::shared_ptr<arrow::DataType> OutputType() const = 0;
  virtual arrow::Status CheckOptions(const FunctionOptions&) const { return arrow::Status::OK(); }
  virtual arrow::Result<std::unique_ptr<Output>> MakeOutput(const FunctionOptions& options,
                                                            int64_t rows) const = 0;
};

class PdfPageCountFunction : public PdfFunction {
 public:
  std::string name() const override { return "pdf_page_count"; }

 protected:
  std::shared_ptr<arrow::DataType> OutputType() const override { return arrow::int64(); }

  class CountOutput : public Output {
   public:
    arrow::Status AppendRow(const PdfiumLock& lock, const Document& document, const EvalContext&) override {
      return builder_.Append(lock.api().FPDF_GetPageCount(document.get()));
    }
    arrow::Status AppendNull() override { return builder_.AppendNull(); }
    arrow::Result<std::shared_ptr<arrow::Array>> Finish() override { return builder_.Finish(); }

   private:
    arrow::Int64Builder builder_;
  };

  arrow::Result<std::unique_ptr<Output>> MakeOutput(const FunctionOptions&, int64_t) const override {
    return std::make_unique<CountOutput>();
  }
};

std::shared_ptr<arrow::DataType> PageTextType() {
  return arrow::struct_(
      {arrow::field("page_number", arrow::int64()), arrow::field("text", arrow::large_utf8())});
}

class PdfTextFunction : public PdfFunction {
 public:
  std::string name() const override { return "pdf_text"; }

 protected:
  std::shared_ptr<arrow::DataType> OutputType() const override { return arrow::list(PageTextType()); }

  class TextOutput : public Output {
   public:
    TextOutput()
        : pages_(std::make_shared<arrow::StructBuilder>(
              PageTextType(), arrow::default_memory_pool(),
              std::vector<std::shared_ptr<arrow::ArrayBuilder>>{
                  std::make_shared<arrow::Int64Builder>(), std::make_shared<arrow::LargeStringBuilder>()})),
          list_(arrow::default_memory_pool(), pages_, arrow::list(PageTextType())) {}

    arrow::Status AppendRow(const PdfiumLock& lock, const Document& document, const EvalContext&) override {
      const PdfiumApi& api = lock.api();
      const int pages = api.FPDF_GetPageCount(document.get());
      // Extracted whole before anything is appended, so a failing page leaves no partial row.
      std::vector<std::string> texts(std::max(pages, 0));
      std::vector<unsigned short> units;
      for (int p = 0; p < pages; ++p) {
        ARROW_ASSIGN_OR_RAISE(auto page, lock.LoadPage(document, p));
        TextPage text(api.FPDFText_LoadPage(page.get()), TextPageCloser{&api});
        if (text == nullptr) return arrow::Status::Invalid("the text of page ", p + 1, " could not be read");
        const int chars = api.FPDFText_CountChars(text.get());
        if (chars <= 0) continue;
        units.assign(static_cast<size_t>(chars) + 1, 0);
        const int written = api.FPDFText_GetText(text.get(), 0, chars, units.data());
        const int64_t count = std::clamp<int64_t>(written - 1, 0, chars);  // less the terminator
        texts[p].reserve(static_cast<size_t>(count));
        AppendUtf16AsUtf8(units.data(), count, &texts[p]);
      }
      auto& numbers = static_cast<arrow::Int64Builder&>(*pages_->field_builder(0));
      auto& strings = static_cast<arrow::LargeStringBuilder&>(*pages_->field_builder(1));
      ARROW_RETURN_NOT_OK(list_.Append());
      for (int p = 0; p < pages; ++p) {
        ARROW_RETURN_NOT_OK(pages_->Append());
        ARROW_RETURN_NOT_OK(numbers.Append(p + 1));
        ARROW_RETURN_NOT_OK(strings.Append(texts[p]));
      }
      return arrow::Status::OK();
    }
    arrow::Status AppendNull() override { return list_.AppendNull(); }
    arrow::Result<std::shared_ptr<arrow::Array>> Finish() override { return list_.Finish(); }

   private:
    std::shared_ptr<arrow::StructBuilder> pages_;
    arrow::ListBuilder list_;
  };

  arrow::Result<std::unique_ptr<Output>> MakeOutput(const FunctionOptions&, int64_t) const override {
    return std::make_unique<TextOutput>();
  }
};

class PdfRenderFunction : public PdfFunction {
 public:
  std::string name() const override { return "pdf_render"; }

 protected:
  std::shared_ptr<arrow::DataType> OutputType() const override { return image_type(ImageMode::kRGB); }

  static arrow::Result<int64_t> PageOption(const FunctionOptions& options) {
    if (!HasOption(options, "page"))
      return arrow::Status::Invalid("pdf_render needs a page number (1-based)");
    ARROW_ASSIGN_OR_RAISE(auto page, GetIntOption(options, "page", "pdf_render"));
    if (page < 1 || page > INT32_MAX) {
      return arrow::Status::Invalid("pdf_render: page must be a page number >= 1 (pages count from 1), got ",
                                    page);
    }
    return page;
  }

  static arrow::Result<double> DpiOption(const FunctionOptions& options) {
    double dpi = 72;
    auto it = options.find("dpi");
    if (it != options.end() && it->second != nullptr && it->second->is_valid) {
      const auto& scalar = *it->second;
      if (arrow::is_integer(scalar.type->id()) || arrow::is_floating(scalar.type->id())) {
        ARROW_ASSIGN_OR_RAISE(auto as_double, scalar.CastTo(arrow::float64()));
        dpi = static_cast<const arrow::DoubleScalar&>(*as_double).value;
      } else {
        return arrow::Status::TypeError("pdf_render: dpi must be a number, got ", scalar.ToString());
      }
    }
    if (!(dpi > 0 && dpi <= kMaxDpi)) {
      return arrow::Status::Invalid("pdf_render: dpi must be in (0, ", Num(kMaxDpi), "], got ", Num(dpi));
    }
    return dpi;
  }

  arrow::Status CheckOptions(const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(PageOption(options).status());
    return DpiOption(options).status();
  }

  class RenderOutput : public Output {
   public:
    RenderOutput(int64_t page, double dpi) : page_(page), dpi_(dpi), builder_(ImageMode::kRGB) {}

    arrow::Status AppendRow(const PdfiumLock& lock, const Document& document,
                            const EvalContext& ctx) override {
      const PdfiumApi& api = lock.api();
      const int pages = api.FPDF_GetPageCount(document.get());
      if (page_ > pages) {
        return arrow::Status::Invalid("page ", page_, " is out of range: the document has ", pages, " page",
                                      pages == 1 ? "" : "s");
      }
      ARROW_ASSIGN_OR_RAISE(auto page, lock.LoadPage(document, static_cast<int>(page_ - 1)));
      const double scale = dpi_ / 72.0;
      const double width_pt = api.FPDF_GetPageWidthF(page.get());
      const double height_pt = api.FPDF_GetPageHeightF(page.get());
      const double w = std::round(width_pt * scale);
      const double h = std::round(height_pt * scale);
      // Refused before allocating: the same limit as decoded images, and the query's budget.
      if (!(w >= 1 && h >= 1)) {
        return arrow::Status::Invalid("page ", page_, " of ", Num(width_pt), " x ", Num(height_pt),
                                      " points at ", Num(dpi_), " dpi would be ", Num(w), " x ", Num(h),
                                      " pixels: at least 1 x 1 is needed (raise dpi)");
      }
      if (w * h > static_cast<double>(image::kMaxImagePixels)) {
        return arrow::Status::Invalid("page ", page_, " of ", Num(width_pt), " x ", Num(height_pt),
                                      " points at ", Num(dpi_), " dpi would be ", Num(w), " x ", Num(h),
                                      " pixels; the limit is ", image::kMaxImagePixels, " pixels per image");
      }
      const auto width = static_cast<int32_t>(w);
      const auto height = static_cast<int32_t>(h);
      const int64_t bytes = int64_t{width} * height * 3;
      if (ctx.memory_budget_bytes > 0 && bytes > ctx.memory_budget_bytes) {
        return arrow::Status::Invalid("page ", page_, " at ", Num(dpi_), " dpi would need ", bytes,
                                      " bytes, more than the query's memory budget of ",
                                      ctx.memory_budget_bytes, " bytes");
      }
      // Rendered straight into the column, 3 bytes a pixel, R G B (pdfium's reversed byte order).
      ARROW_ASSIGN_OR_RAISE(uint8_t * dst, builder_.PrepareRow(bytes));
      Bitmap bitmap(api.FPDFBitmap_CreateEx(width, height, kFpdfBitmapBgr, dst, width * 3),
                    BitmapDestroyer{&api});
      if (bitmap == nullptr) {
        return arrow::Status::OutOfMemory("pdfium could not create a ", width, " x ", height, " bitmap");
      }
      api.FPDFBitmap_FillRect(bitmap.get(), 0, 0, width, height, 0xFFFFFFFFul);
      api.FPDF_RenderPageBitmap(bitmap.get(), page.get(), 0, 0, width, height, 0,
                                kFpdfRenderAnnotations | kFpdfReverseByteOrder);
      bitmap.reset();
      return builder_.CommitRow(height, width, ImageMode::kRGB);
    }
    arrow::Status AppendNull() override { return builder_.AppendNull(); }
    arrow::Result<std::shared_ptr<arrow::Array>> Finish() override { return builder_.Finish(); }

   private:
    int64_t page_;
    double dpi_;
    ImageArrayBuilder builder_;
  };

  arrow::Result<std::unique_ptr<Output>> MakeOutput(const FunctionOptions& options, int64_t) const override {
    ARROW_ASSIGN_OR_RAISE(auto page, PageOption(options));
    ARROW_ASSIGN_OR_RAISE(auto dpi, DpiOption(options));
    return std::make_unique<RenderOutput>(page, dpi);
  }
};

constexpr const char* kMetaTags[] = {"Title", "Author", "Subject", "Keywords", "Creator", "Producer"};

std::shared_ptr<arrow::DataType> MetadataType() {
  return arrow::struct_({arrow::field("page_count", arrow::int64()), arrow::field("title", arrow::utf8()),
                         arrow::field("author", arrow::utf8()), arrow::field("subject", arrow::utf8()),
                         arrow::field("keywords", arrow::utf8()), arrow::field("creator", arrow::utf8()),
                         arrow::field("producer", arrow::utf8()),
                         arrow::field("encrypted", arrow::boolean())});
}

class PdfMetadataFunction : public PdfFunction {
 public:
  std::string name() const override { return "pdf_metadata"; }

 protected:
  std::shared_ptr<arrow::DataType> OutputType() const override { return MetadataType(); }

  class MetadataOutput : public Output {
   public:
    MetadataOutput() {
      std::vector<std::shared_ptr<arrow::ArrayBuilder>> fields{std::make_shared<arrow::Int64Builder>()};
      for (size_t t = 0; t < std::size(kMetaTags); ++t)
        fields.push_back(std::make_shared<arrow::StringBuilder>());
      fields.push_back(std::make_shared<arrow::BooleanBuilder>());
      builder_ = std::make_unique<arrow::StructBuilder>(MetadataType(), arrow::default_memory_pool(), fields);
    }

    arrow::Status AppendRow(const PdfiumLock& lock, const Document& document, const EvalContext&) override {
      const PdfiumApi& api = lock.api();
      std::vector<std::string> values;
      for (const char* tag : kMetaTags) values.push_back(MetaText(lock, document, tag));
      ARROW_RETURN_NOT_OK(builder_->Append());
      ARROW_RETURN_NOT_OK(static_cast<arrow::Int64Builder&>(*builder_->field_builder(0))
                              .Append(api.FPDF_GetPageCount(document.get())));
      for (size_t t = 0; t < values.size(); ++t) {
        auto& strings = static_cast<arrow::StringBuilder&>(*builder_->field_builder(static_cast<int>(t) + 1));
        ARROW_RETURN_NOT_OK(values[t].empty() ? strings.AppendNull() : strings.Append(values[t]));
      }
      auto& encrypted =
          static_cast<arrow::BooleanBuilder&>(*builder_->field_builder(static_cast<int>(values.size()) + 1));
      return encrypted.Append(api.FPDF_GetSecurityHandlerRevision(document.get()) != -1);
    }
    arrow::Status AppendNull() override { return builder_->AppendNull(); }
    arrow::Result<std::shared_ptr<arrow::Array>> Finish() override { return builder_->Finish(); }

   private:
    std::unique_ptr<arrow::StructBuilder> builder_;
  };

  arrow::Result<std::unique_ptr<Output>> MakeOutput(const FunctionOptions&, int64_t) const override {
    return std::make_unique<MetadataOutput>();
  }
};

}  // namespace

arrow::Status CheckPdfHeader(const uint8_t* data, int64_t size) {
  if (size == 0) return arrow::Status::Invalid("empty (0 bytes)");
  if (Contains(data, std::min(size, kPdfHeaderWindow), kHeader)) return arrow::Status::OK();
  return arrow::Status::Invalid("not a PDF: no '%PDF-' header in the first ", kPdfHeaderWindow,
                                " bytes (the bytes look like ",
                                file::SniffMimeType(data, std::min(size, file::kSniffBytes)), ")");
}

arrow::Status CheckPdfBytes(const uint8_t* data, int64_t size) {
  ARROW_RETURN_NOT_OK(CheckPdfHeader(data, size));
  const int64_t tail = std::min(size, kPdfTrailerWindow);
  if (!Contains(data + size - tail, tail, kEof)) {
    return arrow::Status::Invalid("truncated: no '%%EOF' marker in the last ", kPdfTrailerWindow, " bytes (",
                                  size, " bytes in all)");
  }
  return arrow::Status::OK();
}

arrow::Result<int64_t> PdfPageCount(const uint8_t* data, int64_t size) {
  ARROW_RETURN_NOT_OK(CheckPdfBytes(data, size));
  ARROW_ASSIGN_OR_RAISE(auto lock, PdfiumLock::Acquire());
  ARROW_ASSIGN_OR_RAISE(auto document, lock.OpenDocument(data, static_cast<size_t>(size)));
  return lock.api().FPDF_GetPageCount(document.get());
}

arrow::Status RegisterPdfFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<PdfPageCountFunction>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<PdfTextFunction>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<PdfRenderFunction>()));
  return registry->Register(std::make_shared<PdfMetadataFunction>());
}

}  // namespace ketch::pdf
