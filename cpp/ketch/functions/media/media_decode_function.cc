#include "ketch/functions/media/media_decode_function.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "ketch/expr/function_registry.h"
#include "ketch/functions/file/mime_sniff.h"
#include "ketch/functions/media/media_input.h"

namespace ketch::media {
namespace {

constexpr std::array<const char*, 4> kFields = {"image", "audio", "video", "pdf"};
constexpr std::array<const char*, 4> kKernels = {"image_decode", "audio_decode", "video_metadata",
                                                 "pdf_text"};

FunctionOptions NullOptions() { return {{"on_error", std::make_shared<arrow::StringScalar>("null")}}; }

arrow::Result<std::vector<std::shared_ptr<arrow::DataType>>> FamilyTypes() {
  std::vector<std::shared_ptr<arrow::DataType>> types;
  for (const char* kernel : kKernels) {
    ARROW_ASSIGN_OR_RAISE(auto function, FunctionRegistry::Global()->Get(kernel));
    ARROW_ASSIGN_OR_RAISE(auto type,
                          function->ResolveType({arrow::large_binary()}, {nullptr}, NullOptions()));
    types.push_back(std::move(type));
  }
  return types;
}

arrow::Result<std::shared_ptr<arrow::DataType>> OutputType() {
  ARROW_ASSIGN_OR_RAISE(auto types, FamilyTypes());
  arrow::FieldVector fields = {arrow::field("mime_type", arrow::utf8())};
  for (size_t f = 0; f < kFields.size(); ++f) fields.push_back(arrow::field(kFields[f], types[f]));
  return arrow::struct_(std::move(fields));
}

class MediaDecodeFunction : public ScalarFunction {
 public:
  std::string name() const override { return "media_decode"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    if (types.size() != 1) return arrow::Status::Invalid("decode_media takes one argument");
    ARROW_RETURN_NOT_OK(MediaBytes::CheckType("decode_media", types[0], exprs.empty() ? nullptr : exprs[0]));
    ARROW_RETURN_NOT_OK(NullOnError(options, "decode_media").status());
    return OutputType();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(bool null_on_error, NullOnError(options, "decode_media"));
    ARROW_ASSIGN_OR_RAISE(auto type, OutputType());
    ARROW_ASSIGN_OR_RAISE(auto input, MediaBytes::Make(args[0], options, ctx));
    const int64_t n = input.length();
    // Route: each row's MIME type, and the rows of each family.
    arrow::StringBuilder mime_types;
    std::array<std::vector<int64_t>, 4> rows;
    std::vector<std::string> mimes(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      if (input.IsNull(i)) {
        ARROW_RETURN_NOT_OK(mime_types.AppendNull());
        continue;
      }
      auto value = input.Value(i);
      mimes[i] = file::SniffMimeType(value->data(), std::min<int64_t>(value->size(), file::kSniffBytes));
      ARROW_RETURN_NOT_OK(mime_types.Append(mimes[i]));
      const MediaFamily family = FamilyOfMimeType(mimes[i]);
      if (family != MediaFamily::kOther) rows[static_cast<int>(family)].push_back(i);
    }
    arrow::ArrayVector children;
    ARROW_ASSIGN_OR_RAISE(auto mime_array, mime_types.Finish());
    children.push_back(mime_array);
    for (size_t f = 0; f < kKernels.size(); ++f) {
      const auto& field_type = type->field(static_cast<int>(f) + 1)->type();
      if (rows[f].empty()) {
        ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(field_type, n));
        children.push_back(std::move(nulls));
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto routed, Route(f, rows[f], input, mimes, null_on_error, ctx));
      children.push_back(std::move(routed));
    }
    // A null input row is a null struct (its mime_type is null too).
    std::shared_ptr<arrow::Buffer> validity =
        mime_array->null_count() > 0 ? mime_array->null_bitmap() : nullptr;
    ARROW_ASSIGN_OR_RAISE(
        auto out, arrow::StructArray::Make(children, type->fields(), validity, mime_array->null_count()));
    return std::static_pointer_cast<arrow::Array>(out);
  }

 private:
  // Family `f`'s kernel over its `rows` (taken out of the input, with their source rows, so a
  // kernel's error names the right row), spread back to all n rows (null elsewhere).
  static arrow::Result<std::shared_ptr<arrow::Array>> Route(size_t f, const std::vector<int64_t>& rows,
                                                            const MediaBytes& input,
                                                            const std::vector<std::string>& mimes,
                                                            bool null_on_error, const EvalContext& ctx) {
    const int64_t n = input.length();
    arrow::Int64Builder take_builder, source_builder;
    for (int64_t i : rows) {
      ARROW_RETURN_NOT_OK(take_builder.Append(i));
      ARROW_RETURN_NOT_OK(source_builder.Append(ctx.SourceRow(i)));
    }
    ARROW_ASSIGN_OR_RAISE(auto take, take_builder.Finish());
    ARROW_ASSIGN_OR_RAISE(auto sources, source_builder.Finish());
    ARROW_ASSIGN_OR_RAISE(auto subset, arrow::compute::Take(input.bytes(), take));
    EvalContext sub = ctx;
    sub.num_rows = static_cast<int64_t>(rows.size());
    sub.row_offset = 0;
    sub.source_rows = std::static_pointer_cast<arrow::Int64Array>(sources);
    ARROW_ASSIGN_OR_RAISE(auto kernel, FunctionRegistry::Global()->Get(kKernels[f]));
    ARROW_ASSIGN_OR_RAISE(auto result, kernel->Execute({subset}, NullOptions(), sub));
    auto values = result.make_array();
    if (!null_on_error) {
      // A row the kernel could not decode: run it alone with on_error="raise" for its cause.
      for (size_t k = 0; k < rows.size(); ++k) {
        if (!values->IsNull(static_cast<int64_t>(k))) continue;
        EvalContext one = sub;
        one.num_rows = 1;
        one.source_rows =
            std::static_pointer_cast<arrow::Int64Array>(sources->Slice(static_cast<int64_t>(k), 1));
        auto again =
            kernel->Execute({subset.make_array()->Slice(static_cast<int64_t>(k), 1)}, FunctionOptions{}, one);
        const std::string cause = again.ok() ? "no value" : again.status().message();
        return arrow::Status::Invalid("decode_media failed at row ", ctx.SourceRow(rows[k]),
                                      input.Where(rows[k]), " (", mimes[rows[k]], ", ", kKernels[f],
                                      "): ", cause);
      }
    }
    // Back to all rows: position of each row in the subset, null where another family has it.
    arrow::Int64Builder back;
    ARROW_RETURN_NOT_OK(back.Reserve(n));
    size_t next = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (next < rows.size() && rows[next] == i) {
        back.UnsafeAppend(static_cast<int64_t>(next++));
      } else {
        back.UnsafeAppendNull();
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto positions, back.Finish());
    ARROW_ASSIGN_OR_RAISE(auto spread, arrow::compute::Take(values, positions));
    return spread.make_array();
  }
};

}  // namespace

MediaFamily FamilyOfMimeType(std::string_view mime_type) {
  if (mime_type.substr(0, 6) == "image/") return MediaFamily::kImage;
  if (mime_type.substr(0, 6) == "audio/") return MediaFamily::kAudio;
  if (mime_type.substr(0, 6) == "video/") return MediaFamily::kVideo;
  if (mime_type == "application/pdf") return MediaFamily::kPdf;
  return MediaFamily::kOther;
}

arrow::Status RegisterMediaDecodeFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<MediaDecodeFunction>());
}

}  // namespace ketch::media
