#include "ketch/expr/storage_cast.h"

#include <arrow/extension/fixed_shape_tensor.h>

#include "ketch/types/image_type.h"

namespace ketch {
namespace {

const arrow::DataType& Storage(const arrow::DataType& type) {
  if (type.id() != arrow::Type::EXTENSION) return type;
  return *static_cast<const arrow::ExtensionType&>(type).storage_type();
}

std::string ExtensionName(const arrow::DataType& type) {
  if (type.id() != arrow::Type::EXTENSION) return "";
  return static_cast<const arrow::ExtensionType&>(type).extension_name();
}

// A FixedShapeImage and a fixed-shape uint8 tensor of shape [H, W, C].
bool ImageMatchesTensor(const arrow::DataType& image, const arrow::DataType& tensor) {
  const auto& fixed = static_cast<const FixedShapeImageType&>(image);
  const auto& t = static_cast<const arrow::extension::FixedShapeTensorType&>(tensor);
  const std::vector<int64_t> shape{fixed.height(), fixed.width(), fixed.channels()};
  return t.value_type()->id() == arrow::Type::UINT8 && t.shape() == shape && t.permutation().empty();
}

}  // namespace

bool CanRewrapStorage(const arrow::DataType& from, const arrow::DataType& to) {
  const std::string from_ext = ExtensionName(from), to_ext = ExtensionName(to);
  if (from_ext.empty() && to_ext.empty()) return false;
  if (!Storage(from).Equals(Storage(to))) return false;
  if (from_ext.empty() || to_ext.empty()) return true;  // extension ↔ its storage
  if (from_ext == "ketch.fixed_shape_image" && to_ext == "arrow.fixed_shape_tensor") {
    return ImageMatchesTensor(from, to);
  }
  if (from_ext == "arrow.fixed_shape_tensor" && to_ext == "ketch.fixed_shape_image") {
    return ImageMatchesTensor(to, from);
  }
  return false;
}

arrow::Result<arrow::Datum> RewrapStorage(const arrow::Datum& input,
                                          const std::shared_ptr<arrow::DataType>& to, int64_t num_rows) {
  std::shared_ptr<arrow::Array> array;
  if (input.is_scalar()) {
    ARROW_ASSIGN_OR_RAISE(array, arrow::MakeArrayFromScalar(*input.scalar(), num_rows));
  } else {
    array = input.make_array();
  }
  std::shared_ptr<arrow::Array> storage = array;
  if (array->type_id() == arrow::Type::EXTENSION)
    storage = static_cast<const arrow::ExtensionArray&>(*array).storage();
  if (to->id() != arrow::Type::EXTENSION) return arrow::Datum(storage);
  return arrow::Datum(arrow::ExtensionType::WrapArray(to, storage));
}

}  // namespace ketch
