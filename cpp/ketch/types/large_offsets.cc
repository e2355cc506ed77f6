#include "ketch/types/large_offsets.h"

#include <arrow/array/concatenate.h>
#include <arrow/compute/api.h>

namespace ketch {

std::shared_ptr<arrow::DataType> WithLargeOffsets(const std::shared_ptr<arrow::DataType>& type) {
  switch (type->id()) {
    case arrow::Type::BINARY:
      return arrow::large_binary();
    case arrow::Type::STRING:
      return arrow::large_utf8();
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST: {
      const auto& field = type->field(0);
      return arrow::large_list(field->WithType(WithLargeOffsets(field->type())));
    }
    case arrow::Type::FIXED_SIZE_LIST: {
      const auto& list = static_cast<const arrow::FixedSizeListType&>(*type);
      return arrow::fixed_size_list(list.value_field()->WithType(WithLargeOffsets(list.value_type())),
                                    list.list_size());
    }
    case arrow::Type::STRUCT: {
      arrow::FieldVector fields;
      for (const auto& field : type->fields())
        fields.push_back(field->WithType(WithLargeOffsets(field->type())));
      return arrow::struct_(std::move(fields));
    }
    default:
      return type;
  }
}

bool HasSmallOffsets(const std::shared_ptr<arrow::DataType>& type) {
  return !WithLargeOffsets(type)->Equals(*type);
}

arrow::Result<std::shared_ptr<arrow::Array>> ConcatenateWidening(
    const arrow::ArrayVector& chunks, const std::shared_ptr<arrow::DataType>& type) {
  if (chunks.empty()) return arrow::MakeEmptyArray(type);
  if (chunks.size() == 1) return chunks[0];
  auto combined = arrow::Concatenate(chunks);
  if (combined.ok() || !HasSmallOffsets(type)) return combined;
  // Widening the offsets shares the chunks' value buffers: the concatenation is the one copy.
  const auto large = WithLargeOffsets(type);
  arrow::ArrayVector widened;
  for (const auto& chunk : chunks) {
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*chunk, large));
    widened.push_back(std::move(cast));
  }
  return arrow::Concatenate(widened);
}

arrow::Result<std::shared_ptr<arrow::Array>> Compact(const std::shared_ptr<arrow::Array>& array) {
  if (array->offset() == 0) return array;
  return arrow::Concatenate({array});
}

}  // namespace ketch
