#include "ketch/expr/tensor_cast.h"

#include <arrow/extension/fixed_shape_tensor.h>

#include <numeric>
#include <string>
#include <vector>

#include "ketch/types/image_array.h"
#include "ketch/types/image_type.h"

namespace ketch {
namespace {

using arrow::extension::FixedShapeTensorType;

bool IsVariableTensor(const arrow::DataType& type) {
  if (type.id() != arrow::Type::STRUCT || type.num_fields() != 2) return false;
  const auto& data = *type.field(0);
  const auto& shape = *type.field(1);
  return data.name() == "data" && shape.name() == "shape" && data.type()->id() == arrow::Type::LARGE_LIST &&
         shape.type()->id() == arrow::Type::LARGE_LIST &&
         shape.type()->field(0)->type()->id() == arrow::Type::UINT64;
}

std::shared_ptr<arrow::DataType> TensorValueType(const arrow::DataType& tensor) {
  return tensor.field(0)->type()->field(0)->type();
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// The element count, shape and (images) mode a fixed-size target needs; empty shape: any.
struct Target {
  std::vector<int64_t> shape;  // FixedShapeTensor / Embedding / FixedShapeImage
  bool image = false;          // a variable Image
  std::optional<ImageMode> mode;
};

std::optional<Target> TargetOf(const arrow::DataType& tensor, const arrow::DataType& to) {
  const auto value = TensorValueType(tensor);
  if (to.id() == arrow::Type::EXTENSION) {
    const auto& ext = static_cast<const arrow::ExtensionType&>(to);
    if (ext.extension_name() == "arrow.fixed_shape_tensor") {
      const auto& fixed = static_cast<const FixedShapeTensorType&>(to);
      if (!fixed.value_type()->Equals(*value) || !fixed.dim_names().empty() || !fixed.permutation().empty()) {
        return std::nullopt;
      }
      return Target{fixed.shape(), false, std::nullopt};
    }
    if (value->id() != arrow::Type::UINT8) return std::nullopt;
    if (ext.extension_name() == "ketch.fixed_shape_image") {
      const auto& image = static_cast<const FixedShapeImageType&>(to);
      return Target{{image.height(), image.width(), image.channels()}, false, image.mode()};
    }
    if (ext.extension_name() == "ketch.image") {
      return Target{{}, true, static_cast<const ImageType&>(to).mode()};
    }
    return std::nullopt;
  }
  if (to.id() == arrow::Type::FIXED_SIZE_LIST) {  // Embedding
    const auto& list = static_cast<const arrow::FixedSizeListType&>(to);
    if (!list.value_type()->Equals(*value)) return std::nullopt;
    return Target{{list.list_size()}, false, std::nullopt};
  }
  return std::nullopt;
}

arrow::Result<std::shared_ptr<arrow::Array>> AsArray(const arrow::Datum& input, int64_t num_rows) {
  if (input.is_scalar()) return arrow::MakeArrayFromScalar(*input.scalar(), num_rows);
  return input.make_array();
}

// Row i's shape of a variable tensor column.
std::vector<int64_t> RowShape(const arrow::LargeListArray& shapes, int64_t i) {
  const auto& dims = static_cast<const arrow::UInt64Array&>(*shapes.values());
  std::vector<int64_t> shape;
  for (int64_t k = shapes.value_offset(i); k < shapes.value_offset(i + 1); ++k) {
    shape.push_back(static_cast<int64_t>(dims.Value(k)));
  }
  return shape;
}

arrow::Status ShapeMismatch(const arrow::DataType& to, int64_t row, const std::vector<int64_t>& shape) {
  return arrow::Status::Invalid("cannot cast the tensor of shape ", ShapeText(shape), " at row ", row, " to ",
                                TypeText(to));
}

arrow::Result<arrow::Datum> TensorToFixed(const arrow::StructArray& tensors, const Target& target,
                                          const std::shared_ptr<arrow::DataType>& to,
                                          const std::function<int64_t(int64_t)>& source_row) {
  const auto& data = static_cast<const arrow::LargeListArray&>(*tensors.field(0));
  const auto& shapes = static_cast<const arrow::LargeListArray&>(*tensors.field(1));
  const int64_t size =
      std::accumulate(target.shape.begin(), target.shape.end(), int64_t{1}, std::multiplies<>());
  std::unique_ptr<arrow::ArrayBuilder> values;
  ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), data.value_type(), &values));
  ARROW_RETURN_NOT_OK(values->Reserve(size * tensors.length()));
  for (int64_t i = 0; i < tensors.length(); ++i) {
    if (tensors.IsNull(i) || data.IsNull(i)) {
      ARROW_RETURN_NOT_OK(values->AppendEmptyValues(size));
      continue;
    }
    const auto shape = RowShape(shapes, i);
    // An L image may come as [h, w].
    const bool grey = target.mode == ImageMode::kL && shape.size() == 2 && target.shape.size() == 3 &&
                      shape[0] == target.shape[0] && shape[1] == target.shape[1];
    if (shape != target.shape && !grey) return ShapeMismatch(*to, source_row(i), shape);
    if (data.value_length(i) != size) return ShapeMismatch(*to, source_row(i), shape);
    ARROW_RETURN_NOT_OK(values->AppendArraySlice(*data.values()->data(), data.value_offset(i), size));
  }
  ARROW_ASSIGN_OR_RAISE(auto flat, values->Finish());
  const auto list_type = arrow::fixed_size_list(data.value_type(), static_cast<int32_t>(size));
  std::shared_ptr<arrow::Buffer> validity;
  if (tensors.null_count() > 0 || data.null_count() > 0) {
    ARROW_ASSIGN_OR_RAISE(validity, arrow::AllocateEmptyBitmap(tensors.length()));
    for (int64_t i = 0; i < tensors.length(); ++i) {
      if (!tensors.IsNull(i) && !data.IsNull(i)) arrow::bit_util::SetBit(validity->mutable_data(), i);
    }
  }
  auto storage = std::make_shared<arrow::FixedSizeListArray>(list_type, tensors.length(), flat, validity);
  if (to->id() != arrow::Type::EXTENSION)
    return arrow::Datum(std::static_pointer_cast<arrow::Array>(storage));
  return arrow::Datum(arrow::ExtensionType::WrapArray(to, storage));
}

arrow::Result<arrow::Datum> TensorToImage(const arrow::StructArray& tensors, const Target& target,
                                          const std::shared_ptr<arrow::DataType>& to,
                                          const std::function<int64_t(int64_t)>& source_row) {
  const auto& data = static_cast<const arrow::LargeListArray&>(*tensors.field(0));
  const auto& shapes = static_cast<const arrow::LargeListArray&>(*tensors.field(1));
  const auto* pixels = static_cast<const arrow::UInt8Array&>(*data.values()).raw_values();
  ImageArrayBuilder builder(target.mode);
  for (int64_t i = 0; i < tensors.length(); ++i) {
    if (tensors.IsNull(i) || data.IsNull(i)) {
      ARROW_RETURN_NOT_OK(builder.AppendNull());
      continue;
    }
    const auto shape = RowShape(shapes, i);
    const int64_t channels = shape.size() == 2 ? 1 : shape.size() == 3 ? shape[2] : 0;
    auto mode = ModeForChannels(static_cast<int32_t>(channels));
    if (shape.size() < 2 || shape.size() > 3 || !mode.ok() || (target.mode && *target.mode != *mode) ||
        shape[0] * shape[1] * channels != data.value_length(i) || shape[0] > INT32_MAX ||
        shape[1] > INT32_MAX) {
      return ShapeMismatch(*to, source_row(i), shape);
    }
    ARROW_RETURN_NOT_OK(
        builder.Append(ImageView{pixels + data.value_offset(i), static_cast<int32_t>(shape[0]),
                                 static_cast<int32_t>(shape[1]), *mode}));
  }
  ARROW_ASSIGN_OR_RAISE(auto out, builder.Finish());
  return arrow::Datum(out);
}

arrow::Result<arrow::Datum> ImageToTensor(const std::shared_ptr<arrow::Array>& images,
                                          const std::shared_ptr<arrow::DataType>& to) {
  ARROW_ASSIGN_OR_RAISE(auto reader, ImageArrayReader::Make(images));
  arrow::LargeListBuilder data(arrow::default_memory_pool(), std::make_shared<arrow::UInt8Builder>());
  arrow::LargeListBuilder shape(arrow::default_memory_pool(), std::make_shared<arrow::UInt64Builder>());
  auto* bytes = static_cast<arrow::UInt8Builder*>(data.value_builder());
  auto* dims = static_cast<arrow::UInt64Builder*>(shape.value_builder());
  std::vector<bool> valid;
  for (int64_t i = 0; i < reader.length(); ++i) {
    valid.push_back(!reader.IsNull(i));
    if (reader.IsNull(i)) {
      ARROW_RETURN_NOT_OK(data.AppendNull());
      ARROW_RETURN_NOT_OK(shape.AppendNull());
      continue;
    }
    ARROW_ASSIGN_OR_RAISE(auto view, reader.View(i));
    ARROW_RETURN_NOT_OK(data.Append());
    ARROW_RETURN_NOT_OK(bytes->AppendValues(view.data, view.num_bytes()));
    ARROW_RETURN_NOT_OK(shape.Append());
    ARROW_RETURN_NOT_OK(
        dims->AppendValues({static_cast<uint64_t>(view.height), static_cast<uint64_t>(view.width),
                            static_cast<uint64_t>(view.channels())}));
  }
  ARROW_ASSIGN_OR_RAISE(auto data_array, data.Finish());
  ARROW_ASSIGN_OR_RAISE(auto shape_array, shape.Finish());
  std::shared_ptr<arrow::Buffer> validity;
  if (images->null_count() > 0) {
    ARROW_ASSIGN_OR_RAISE(validity, arrow::AllocateEmptyBitmap(images->length()));
    for (int64_t i = 0; i < images->length(); ++i) {
      if (valid[static_cast<size_t>(i)]) arrow::bit_util::SetBit(validity->mutable_data(), i);
    }
  }
  auto out = std::make_shared<arrow::StructArray>(to, images->length(),
                                                  arrow::ArrayVector{data_array, shape_array}, validity);
  return arrow::Datum(std::static_pointer_cast<arrow::Array>(out));
}

std::string ValueTypeText(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL:
      return "Bool";
    case arrow::Type::INT8:
      return "Int8";
    case arrow::Type::INT16:
      return "Int16";
    case arrow::Type::INT32:
      return "Int32";
    case arrow::Type::INT64:
      return "Int64";
    case arrow::Type::UINT8:
      return "UInt8";
    case arrow::Type::UINT16:
      return "UInt16";
    case arrow::Type::UINT32:
      return "UInt32";
    case arrow::Type::UINT64:
      return "UInt64";
    case arrow::Type::HALF_FLOAT:
      return "Float16";
    case arrow::Type::FLOAT:
      return "Float32";
    case arrow::Type::DOUBLE:
      return "Float64";
    default:
      return type.ToString();
  }
}

}  // namespace

std::string TypeText(const arrow::DataType& type) {
  if (IsVariableTensor(type)) return "Tensor[" + ValueTypeText(*TensorValueType(type)) + "]";
  if (type.id() == arrow::Type::EXTENSION &&
      static_cast<const arrow::ExtensionType&>(type).extension_name() == "arrow.fixed_shape_tensor") {
    const auto& fixed = static_cast<const FixedShapeTensorType&>(type);
    return "Tensor[" + ValueTypeText(*fixed.value_type()) + "; " + ShapeText(fixed.shape()) + "]";
  }
  return type.ToString();
}

bool IsTensorLayoutCast(const arrow::DataType& from, const arrow::DataType& to) {
  if (IsVariableTensor(from)) return TargetOf(from, to).has_value();
  if (IsImageType(from) && IsVariableTensor(to)) return TensorValueType(to)->id() == arrow::Type::UINT8;
  return false;
}

arrow::Result<arrow::Datum> CastTensorLayout(const arrow::Datum& input,
                                             const std::shared_ptr<arrow::DataType>& to, int64_t num_rows,
                                             const std::function<int64_t(int64_t)>& source_row) {
  ARROW_ASSIGN_OR_RAISE(auto array, AsArray(input, num_rows));
  if (IsImageType(*array->type())) return ImageToTensor(array, to);
  const auto target = TargetOf(*array->type(), *to);
  if (!target)
    return arrow::Status::TypeError("cannot cast ", array->type()->ToString(), " to ", to->ToString());
  const auto& tensors = static_cast<const arrow::StructArray&>(*array);
  if (target->image) return TensorToImage(tensors, *target, to, source_row);
  return TensorToFixed(tensors, *target, to, source_row);
}

}  // namespace ketch
