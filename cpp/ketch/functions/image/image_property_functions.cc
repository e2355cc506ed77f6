// image_width, image_height, image_channels (int64) and image_mode (string): read from the image
// column's metadata, no pixels touched.

#include "ketch/functions/image/image_function_util.h"
#include "ketch/functions/image/image_functions.h"

namespace ketch::image {
namespace {

enum class Property { kWidth, kHeight, kChannels, kMode };

class ImageProperty : public ScalarFunction {
 public:
  ImageProperty(std::string name, Property property) : name_(std::move(name)), property_(property) {}
  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgs(name(), 1, types.size()));
    ARROW_RETURN_NOT_OK(ExpectImage("image." + name_.substr(6), types[0], exprs[0]));
    return property_ == Property::kMode ? arrow::utf8() : arrow::int64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto reader, ImageArrayReader::Make(input));
    if (property_ == Property::kMode) {
      arrow::StringBuilder out;
      for (int64_t i = 0; i < reader.length(); ++i) {
        if (reader.IsNull(i)) {
          ARROW_RETURN_NOT_OK(out.AppendNull());
          continue;
        }
        ARROW_ASSIGN_OR_RAISE(auto view, reader.View(i));
        ARROW_RETURN_NOT_OK(out.Append(ModeName(view.mode)));
      }
      return out.Finish();
    }
    arrow::Int64Builder out;
    ARROW_RETURN_NOT_OK(out.Reserve(reader.length()));
    for (int64_t i = 0; i < reader.length(); ++i) {
      if (reader.IsNull(i)) {
        out.UnsafeAppendNull();
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto view, reader.View(i));
      out.UnsafeAppend(property_ == Property::kWidth    ? view.width
                       : property_ == Property::kHeight ? view.height
                                                        : view.channels());
    }
    return out.Finish();
  }

 private:
  std::string name_;
  Property property_;
};

}  // namespace

arrow::Status RegisterImageProperties() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ImageProperty>("image_width", Property::kWidth)));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ImageProperty>("image_height", Property::kHeight)));
  ARROW_RETURN_NOT_OK(
      registry->Register(std::make_shared<ImageProperty>("image_channels", Property::kChannels)));
  return registry->Register(std::make_shared<ImageProperty>("image_mode", Property::kMode));
}

}  // namespace ketch::image
