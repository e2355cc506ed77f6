// image_encode: Image → encoded bytes (PNG, JPEG, WEBP, TIFF), one row at a time.

#include "ketch/functions/image/codecs.h"
#include "ketch/functions/image/image_function_util.h"
#include "ketch/functions/image/image_functions.h"

namespace ketch::image {
namespace {

class ImageEncode : public ScalarFunction {
 public:
  std::string name() const override { return "image_encode"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectArgs(name(), 1, types.size()));
    ARROW_RETURN_NOT_OK(ExpectImage("image.encode", types[0], exprs[0]));
    ARROW_ASSIGN_OR_RAISE(auto format, Format(options));
    auto mode = DeclaredMode(*types[0]);
    if (format == ImageFormat::kJpeg && mode && (*mode == ImageMode::kLA || *mode == ImageMode::kRGBA)) {
      return arrow::Status::TypeError("image.encode('JPEG'): ", exprs[0]->ToString(), " has mode ",
                                      ModeName(*mode), ", and JPEG has no alpha channel; use image.to_mode",
                                      "('", *mode == ImageMode::kLA ? "L" : "RGB", "') first");
    }
    return arrow::large_binary();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto reader, ImageArrayReader::Make(input));
    ARROW_ASSIGN_OR_RAISE(auto format, Format(options));
    int64_t quality = 75;
    if (HasOption(options, "quality")) {
      ARROW_ASSIGN_OR_RAISE(quality, GetIntOption(options, "quality", "image.encode"));
    }
    arrow::LargeBinaryBuilder out;
    for (int64_t i = 0; i < reader.length(); ++i) {
      if (reader.IsNull(i)) {
        ARROW_RETURN_NOT_OK(out.AppendNull());
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto view, reader.View(i));
      auto bytes = Encode(view, format, static_cast<int>(quality));
      if (!bytes.ok()) {
        return bytes.status().WithMessage("image.encode failed at row ", ctx.SourceRow(i), ": ",
                                          bytes.status().message());
      }
      ARROW_RETURN_NOT_OK(out.Append(bytes->data(), static_cast<int64_t>(bytes->size())));
    }
    return out.Finish();
  }

 private:
  static arrow::Result<ImageFormat> Format(const FunctionOptions& options) {
    ARROW_ASSIGN_OR_RAISE(auto name, GetStringOption(options, "format", "image.encode"));
    ARROW_ASSIGN_OR_RAISE(auto format, ParseFormat(name));
    if (format == ImageFormat::kGif || format == ImageFormat::kBmp) {
      return arrow::Status::NotImplemented("image.encode: ", FormatName(format),
                                           " is not supported (supported: PNG, JPEG, WEBP, TIFF)");
    }
    return format;
  }
};

}  // namespace

arrow::Status RegisterImageEncode() {
  return FunctionRegistry::Global()->Register(std::make_shared<ImageEncode>());
}

}  // namespace ketch::image
