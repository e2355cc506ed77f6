#pragma once

#include <arrow/status.h>

namespace ketch::embedding {

/// Registers embedding_cosine_distance(a, b): a and b are fixed-size or variable lists of numbers
/// (Embedding columns, or one literal vector for every row) of equal length per row → float64,
/// 1 - a·b / (|a| |b|). Null when either side is null or has zero norm; Invalid naming the row
/// when the lengths differ. Also embedding_euclidean_distance(a, b) → float64, sqrt(sum((a-b)^2))
/// (the L2 distance, not its square), null when either side or an element is null.
arrow::Status RegisterEmbeddingFunctions();

}  // namespace ketch::embedding
