#pragma once

#include <arrow/api.h>
#include <arrow/compute/api.h>

namespace ketch {

/// Casts Arrow's cast kernels do not know, between types that share a storage layout: an
/// extension type and its storage type (either way), and FixedShapeImage[mode; H x W] ↔
/// arrow.fixed_shape_tensor(uint8, [H, W, C]) (same bytes, same order). Embedding ↔
/// FixedSizeList needs nothing: an Embedding is a fixed_size_list.
bool CanRewrapStorage(const arrow::DataType& from, const arrow::DataType& to);

/// Re-labels `input` (array or scalar) as `to` without touching its buffers (`num_rows`: the
/// length a scalar is broadcast to).
arrow::Result<arrow::Datum> RewrapStorage(const arrow::Datum& input,
                                          const std::shared_ptr<arrow::DataType>& to, int64_t num_rows);

}  // namespace ketch
