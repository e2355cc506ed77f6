#pragma once

#include <arrow/result.h>
#include <arrow/util/thread_pool.h>

#include <memory>

namespace ketch {

/// Separate process-wide pools for compute (kernels, expression evaluation; one thread per core by
/// default) and I/O (file reads, downloads). Both are Arrow thread pools, created on first use and
/// resized to the requested capacity on each call. Never shared with pyarrow's own pools.
arrow::internal::ThreadPool* ComputePool(int32_t num_threads);
arrow::internal::ThreadPool* IoPool(int32_t num_threads);

}  // namespace ketch
