// image_crop and image_to_mode: pixel-writing kernels other than resize.

#include <cstring>

#include "ketch/functions/image/codecs.h"
#include "ketch/functions/image/image_function_util.h"
#include "ketch/functions/image/image_functions.h"

namespace ketch::image {
namespace {

struct Box {
  int64_t x = 0, y = 0, w = 0, h = 0;
};

/// image_crop(img[, bbox]): bbox as options x, y, w, h (one box for every row) or as a second
/// argument, a list of 4 integers per row [x, y, w, h]. The box is clipped to the image (as the
/// `image` crate and Daft do); an empty intersection is an error naming the row.
class ImageCrop : public ScalarFunction {
 public:
  std::string name() const override { return "image_crop"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    if (types.empty() || types.size() > 2) return ExpectArgs(name(), 2, types.size());
    ARROW_RETURN_NOT_OK(ExpectImage("image.crop", types[0], exprs[0]));
    if (types.size() == 2) {
      const auto id = types[1]->id();
      const bool list =
          id == arrow::Type::LIST || id == arrow::Type::LARGE_LIST || id == arrow::Type::FIXED_SIZE_LIST;
      if (!list || !arrow::is_integer(types[1]->field(0)->type()->id())) {
        return arrow::Status::TypeError("image.crop expects a bbox of 4 integers [x, y, w, h], but ",
                                        exprs[1]->ToString(), " has type ", types[1]->ToString());
      }
    } else {
      ARROW_RETURN_NOT_OK(ConstantBox(options).status());
    }
    return image_type(DeclaredMode(*types[0]));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto reader, ImageArrayReader::Make(input));
    std::shared_ptr<arrow::Array> boxes;  // list<int64> per row, when given as a column
    Box constant;
    if (args.size() == 2) {
      ARROW_ASSIGN_OR_RAISE(auto raw, ToArray(args[1], ctx.num_rows));
      auto target = arrow::large_list(arrow::int64());
      ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*raw, target));
      boxes = cast;
    } else {
      ARROW_ASSIGN_OR_RAISE(constant, ConstantBox(options));
    }
    const auto* box_lists = static_cast<const arrow::LargeListArray*>(boxes.get());
    ImageArrayBuilder builder(DeclaredMode(*input->type()));
    std::vector<uint8_t> pixels;
    for (int64_t i = 0; i < reader.length(); ++i) {
      if (reader.IsNull(i) || (box_lists && box_lists->IsNull(i))) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      Box box = constant;
      if (box_lists) {
        if (box_lists->value_length(i) != 4) {
          return arrow::Status::Invalid("image.crop at row ", ctx.SourceRow(i), ": bbox has ",
                                        box_lists->value_length(i), " values, expected 4 [x, y, w, h]");
        }
        const auto& values = static_cast<const arrow::Int64Array&>(*box_lists->values());
        const int64_t o = box_lists->value_offset(i);
        if (values.IsNull(o) || values.IsNull(o + 1) || values.IsNull(o + 2) || values.IsNull(o + 3)) {
          ARROW_RETURN_NOT_OK(builder.AppendNull());  // a box with a null coordinate crops to null
          continue;
        }
        box = Box{values.Value(o), values.Value(o + 1), values.Value(o + 2), values.Value(o + 3)};
      }
      ARROW_ASSIGN_OR_RAISE(auto view, reader.View(i));
      const int64_t x0 = std::clamp<int64_t>(box.x, 0, view.width);
      const int64_t y0 = std::clamp<int64_t>(box.y, 0, view.height);
      // Saturating: x + w must not overflow for huge widths.
      const int64_t x1 =
          box.x >= view.width
              ? view.width
              : std::clamp<int64_t>(box.x + std::min<int64_t>(box.w, view.width * 2 + 2), 0, view.width);
      const int64_t y1 =
          box.y >= view.height
              ? view.height
              : std::clamp<int64_t>(box.y + std::min<int64_t>(box.h, view.height * 2 + 2), 0, view.height);
      if (box.w <= 0 || box.h <= 0 || x1 <= x0 || y1 <= y0) {
        return arrow::Status::Invalid("image.crop at row ", ctx.SourceRow(i), ": bbox [", box.x, ", ", box.y,
                                      ", ", box.w, ", ", box.h, "] does not overlap the ", view.width, "x",
                                      view.height, " image");
      }
      const int64_t c = view.channels();
      const int64_t out_w = x1 - x0, out_h = y1 - y0;
      pixels.resize(static_cast<size_t>(out_w * out_h * c));
      for (int64_t y = 0; y < out_h; ++y) {
        std::memcpy(pixels.data() + y * out_w * c, view.data + ((y0 + y) * view.width + x0) * c, out_w * c);
      }
      ARROW_RETURN_NOT_OK(builder.Append(
          ImageView{pixels.data(), static_cast<int32_t>(out_h), static_cast<int32_t>(out_w), view.mode}));
    }
    return builder.Finish();
  }

 private:
  static arrow::Result<Box> ConstantBox(const FunctionOptions& options) {
    Box box;
    ARROW_ASSIGN_OR_RAISE(box.x, GetIntOption(options, "x", "image.crop"));
    ARROW_ASSIGN_OR_RAISE(box.y, GetIntOption(options, "y", "image.crop"));
    ARROW_ASSIGN_OR_RAISE(box.w, GetIntOption(options, "w", "image.crop"));
    ARROW_ASSIGN_OR_RAISE(box.h, GetIntOption(options, "h", "image.crop"));
    if (box.w <= 0 || box.h <= 0) {
      return arrow::Status::Invalid("image.crop: bbox width and height must be positive, got ", box.w, "x",
                                    box.h);
    }
    return box;
  }
};

/// image_to_mode(img; mode): converts every image to L, LA, RGB or RGBA (Pillow's convert rules).
/// A FixedShapeImage stays fixed-shape (one contiguous block).
class ImageToMode : public ScalarFunction {
 public:
  std::string name() const override { return "image_to_mode"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectArgs(name(), 1, types.size()));
    ARROW_RETURN_NOT_OK(ExpectImage("image.to_mode", types[0], exprs[0]));
    ARROW_ASSIGN_OR_RAISE(auto mode, Mode(options));
    return OutputType(*types[0], mode);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto reader, ImageArrayReader::Make(input));
    ARROW_ASSIGN_OR_RAISE(auto mode, Mode(options));
    auto type = OutputType(*input->type(), mode);
    const int64_t n = reader.length();
    if (static_cast<const arrow::ExtensionType&>(*type).extension_name() == "ketch.fixed_shape_image") {
      ARROW_ASSIGN_OR_RAISE(auto fixed_out,
                            BuildFixedShapeImages(type, reader, [&](const ImageView& view, uint8_t* dst) {
                              auto converted = ConvertMode(view, mode);
                              std::memcpy(dst, converted.pixels.data(), converted.pixels.size());
                            }));
      return fixed_out;
    }
    ImageArrayBuilder builder(mode);
    for (int64_t i = 0; i < n; ++i) {
      if (reader.IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto view, reader.View(i));
      if (view.mode == mode) {
        ARROW_RETURN_NOT_OK(builder.Append(view));
      } else {
        auto converted = ConvertMode(view, mode);
        ARROW_RETURN_NOT_OK(builder.Append(converted.view()));
      }
    }
    return builder.Finish();
  }

 private:
  static arrow::Result<ImageMode> Mode(const FunctionOptions& options) {
    ARROW_ASSIGN_OR_RAISE(auto name, GetStringOption(options, "mode", "image.to_mode"));
    return ParseMode(name);
  }
  static std::shared_ptr<arrow::DataType> OutputType(const arrow::DataType& input, ImageMode mode) {
    const auto& ext = static_cast<const arrow::ExtensionType&>(input);
    if (ext.extension_name() == "ketch.fixed_shape_image") {
      const auto& fixed = static_cast<const FixedShapeImageType&>(input);
      return fixed_shape_image_type(mode, fixed.height(), fixed.width());
    }
    return image_type(mode);
  }
};

}  // namespace

arrow::Status RegisterImageTransforms() {
  ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<ImageCrop>()));
  return FunctionRegistry::Global()->Register(std::make_shared<ImageToMode>());
}

}  // namespace ketch::image
