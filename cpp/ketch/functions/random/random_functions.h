#pragma once

#include <arrow/status.h>

namespace ketch::random {

/// Registers the random-value functions:
/// - random_int (no arguments; low, high, seed options) → int64: a uniform value in the closed
///   interval [low, high] for each row. The value is SplitMix64 (Steele, Lea & Flood, "Fast
///   splittable pseudorandom number generators", OOPSLA 2014) of the seed mixed with the row's
///   source row and its position in the morsel, reduced to the interval by Lemire's multiply-shift
///   ("Fast random integer generation in an interval", ACM TOMACS 2019; bias below 2^-64 × range).
///   The same seed and the same row layout give the same values (Daft's "best-effort stable");
///   another partitioning gives others. InvalidArgument when low > high.
arrow::Status RegisterRandomFunctions();

}  // namespace ketch::random
