#pragma once

#include <arrow/api.h>
#include <arrow/datum.h>

#include <functional>
#include <memory>
#include <string>

namespace ketch {

/// Casts between Ketch's tensor and image layouts that move values, as Daft's cast table allows:
///  - Tensor (variable shape: struct<data: large_list<T>, shape: large_list<uint64>>) to
///    FixedShapeTensor[T; shape] (arrow.fixed_shape_tensor), Embedding[T; n] (fixed_size_list<T>[n])
///    and, for uint8 tensors, FixedShapeImage[mode; h x w] and Image[mode] (shape [h, w, c] with
///    c the mode's channels, or [h, w] for L; an Image without a mode takes it from c);
///  - Image / FixedShapeImage to Tensor[UInt8] (each row's [h, w, c]).
/// True when `from` can be cast to `to` this way (checked at plan time; rows are checked when cast).
bool IsTensorLayoutCast(const arrow::DataType& from, const arrow::DataType& to);

/// `type` as users name it in messages: Tensor[UInt8] for the variable tensor's storage struct,
/// Tensor[Float32; [2, 3]] for arrow.fixed_shape_tensor; anything else as Arrow prints it.
std::string TypeText(const arrow::DataType& type);

/// The cast itself (`num_rows`: the length a scalar input is broadcast to). Invalid naming the row
/// (`source_row(i)`: the source row of input row i), its shape and the target when a row's shape
/// does not fit the target; nulls stay null.
arrow::Result<arrow::Datum> CastTensorLayout(const arrow::Datum& input,
                                             const std::shared_ptr<arrow::DataType>& to, int64_t num_rows,
                                             const std::function<int64_t(int64_t)>& source_row);

}  // namespace ketch
