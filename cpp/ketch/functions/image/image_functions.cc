#include "ketch/functions/image/image_functions.h"

#include "ketch/common/thread_pools.h"
#include "ketch/expr/function_registry.h"
#include "ketch/functions/image/codecs.h"
#include "ketch/functions/image/image_function_util.h"
#include "ketch/types/file_type.h"
#include "ketch/types/image_array.h"

namespace ketch::image {
namespace {

class ImageDecode : public ScalarFunction {
 public:
  std::string name() const override { return "image_decode"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectArgs(name(), 1, types.size()));
    if (!arrow::is_binary_like(types[0]->id()) && !arrow::is_large_binary_like(types[0]->id()) &&
        !IsFileType(*types[0])) {
      return arrow::Status::TypeError("image.decode expects binary bytes or a File column, but ",
                                      exprs[0]->ToString(), " has type ", types[0]->ToString());
    }
    ARROW_RETURN_NOT_OK(OnError(options, name()).status());
    ARROW_ASSIGN_OR_RAISE(auto mode, OptionalMode(options, name()));
    return image_type(mode);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto on_error, OnError(options, name()));
    ARROW_ASSIGN_OR_RAISE(auto mode, OptionalMode(options, name()));
    if (IsFileType(*input->type())) {
      // A File column: its objects are read first (file_read: the I/O pool, the row's path in errors;
      // with on_error="null" an unreadable file decodes to null).
      ARROW_ASSIGN_OR_RAISE(auto file_read, FunctionRegistry::Global()->Get("file_read"));
      ARROW_ASSIGN_OR_RAISE(auto read, file_read->Execute({arrow::Datum(input)}, options, ctx));
      input = read.make_array();
    }
    ARROW_ASSIGN_OR_RAISE(auto binary, arrow::compute::Cast(*input, arrow::large_binary()));
    const auto& bytes = static_cast<const arrow::LargeBinaryArray&>(*binary);
    ImageArrayBuilder builder(mode);
    // JPEGs whose native mode is the one wanted decode straight into the column: their headers
    // are read first, so the column's pixel buffer is allocated once, at its final size.
    const int64_t n = bytes.length();
    // One decoded image may not need more than the query's whole memory budget: refused from its
    // header, before allocation (an image under the pixel limit can still be hundreds of MB).
    const DecodeLimits limits(kMaxImagePixels,
                              ctx.memory_budget_bytes > 0 ? ctx.memory_budget_bytes : INT64_MAX);
    // Set by the optimizer when a resize follows (image_resize(image_decode(x))): JPEGs decode
    // reduced in the DCT to at least that size (ShrinkOnLoad), the resize does the rest.
    int64_t draft_w = 0, draft_h = 0;
    if (HasOption(options, "draft_w") && HasOption(options, "draft_h")) {
      ARROW_ASSIGN_OR_RAISE(draft_w, GetIntOption(options, "draft_w", name()));
      ARROW_ASSIGN_OR_RAISE(draft_h, GetIntOption(options, "draft_h", name()));
    }
    std::vector<std::optional<JpegHeader>> jpeg(n);
    int64_t direct_bytes = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (bytes.IsNull(i)) continue;
      auto view = bytes.GetView(i);
      const auto* data = reinterpret_cast<const uint8_t*>(view.data());
      if (SniffFormat(data, static_cast<int64_t>(view.size())) != ImageFormat::kJpeg) continue;
      auto header = ReadJpegHeader(data, static_cast<int64_t>(view.size()), limits);
      if (header.ok() && !header->cmyk && (!mode || *mode == header->mode)) {
        jpeg[i] = draft_w > 0
                      ? ShrinkOnLoad(*header, static_cast<int32_t>(draft_w), static_cast<int32_t>(draft_h))
                      : *header;
        direct_bytes += header->num_bytes();
      }
    }
    ARROW_RETURN_NOT_OK(builder.Reserve(n, direct_bytes));
    for (int64_t i = 0; i < n; ++i) {
      if (bytes.IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      auto view = bytes.GetView(i);
      if (jpeg[i]) {
        ARROW_ASSIGN_OR_RAISE(uint8_t * dst, builder.PrepareRow(jpeg[i]->num_bytes()));
        auto st = DecodeJpegInto(reinterpret_cast<const uint8_t*>(view.data()),
                                 static_cast<int64_t>(view.size()), *jpeg[i], dst);
        if (st.ok()) {
          ARROW_RETURN_NOT_OK(builder.CommitRow(jpeg[i]->height, jpeg[i]->width, jpeg[i]->mode));
          continue;
        }
        if (on_error == "null") {
          ARROW_RETURN_NOT_OK(builder.AppendNull());
          continue;
        }
        return arrow::Status::Invalid("image.decode failed at row ", ctx.SourceRow(i), ": ", st.message());
      }
      auto decoded = Decode(reinterpret_cast<const uint8_t*>(view.data()), view.size(), limits);
      if (decoded.ok() && mode && decoded->mode != *mode) decoded = ConvertMode(decoded->view(), *mode);
      if (!decoded.ok()) {
        if (on_error == "null") {
          ARROW_RETURN_NOT_OK(builder.AppendNull());
          continue;
        }
        return arrow::Status::Invalid("image.decode failed at row ", ctx.SourceRow(i), ": ",
                                      decoded.status().message());
      }
      ARROW_RETURN_NOT_OK(builder.Append(decoded->view()));
    }
    return builder.Finish();
  }
};

class ImageResize : public ScalarFunction {
 public:
  std::string name() const override { return "image_resize"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectArgs(name(), 1, types.size()));
    if (!IsImageType(*types[0])) {
      return arrow::Status::TypeError("image.resize expects an Image column, but ", exprs[0]->ToString(),
                                      " has type ", types[0]->ToString());
    }
    ARROW_ASSIGN_OR_RAISE(auto size, Size(options));
    ARROW_ASSIGN_OR_RAISE(auto mode, TypeMode(*types[0]));
    if (mode) return fixed_shape_image_type(*mode, size.second, size.first);
    return image_type(std::nullopt);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto reader, ImageArrayReader::Make(input));
    ARROW_ASSIGN_OR_RAISE(auto size, Size(options));
    const auto [width, height] = size;
    ARROW_ASSIGN_OR_RAISE(auto mode, TypeMode(*input->type()));
    const int64_t n = reader.length();
    if (mode) {
      // Fixed shape: write every row straight into one contiguous (N, H, W, C) block.
      ARROW_ASSIGN_OR_RAISE(auto fixed_out,
                            BuildFixedShapeImages(fixed_shape_image_type(*mode, height, width), reader,
                                                  [&](const ImageView& view, uint8_t* dst) {
                                                    ResizeBilinear(view, width, height, dst);
                                                  }));
      return fixed_out;
    }
    ImageArrayBuilder builder(std::nullopt);
    std::vector<uint8_t> pixels;
    for (int64_t i = 0; i < n; ++i) {
      if (reader.IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto view, reader.View(i));
      pixels.resize(static_cast<size_t>(width) * height * view.channels());
      ResizeBilinear(view, width, height, pixels.data());
      ARROW_RETURN_NOT_OK(builder.Append(ImageView{pixels.data(), height, width, view.mode}));
    }
    return builder.Finish();
  }

 private:
  static arrow::Result<std::pair<int32_t, int32_t>> Size(const FunctionOptions& options) {
    ARROW_ASSIGN_OR_RAISE(auto width, GetIntOption(options, "w", "image.resize"));
    ARROW_ASSIGN_OR_RAISE(auto height, GetIntOption(options, "h", "image.resize"));
    if (width <= 0 || height <= 0 || width > 65535 || height > 65535) {
      return arrow::Status::Invalid("image.resize: width and height must be in 1..65535, got ", width, "x",
                                    height);
    }
    // Refused before any allocation, like a decoded image over the same limit.
    if (width * height > kMaxImagePixels) {
      return arrow::Status::Invalid("image.resize: an output of ", width, "x", height, " = ", width * height,
                                    " pixels exceeds the limit of ", kMaxImagePixels,
                                    " pixels per image (the decoder's limit)");
    }
    return std::make_pair(static_cast<int32_t>(width), static_cast<int32_t>(height));
  }

  static arrow::Result<std::optional<ImageMode>> TypeMode(const arrow::DataType& type) {
    const auto& ext = static_cast<const arrow::ExtensionType&>(type);
    if (ext.extension_name() == "ketch.fixed_shape_image") {
      return std::optional<ImageMode>(static_cast<const FixedShapeImageType&>(type).mode());
    }
    return static_cast<const ImageType&>(type).mode();
  }
};

}  // namespace

arrow::Status RegisterImageFunctions() {
  ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<ImageDecode>()));
  ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<ImageResize>()));
  ARROW_RETURN_NOT_OK(RegisterImageEncode());
  ARROW_RETURN_NOT_OK(RegisterImageTransforms());
  ARROW_RETURN_NOT_OK(RegisterImageHash());
  ARROW_RETURN_NOT_OK(RegisterImageHashDaft());
  return RegisterImageProperties();
}

}  // namespace ketch::image
