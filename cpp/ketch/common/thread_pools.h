#pragma once

#include <arrow/result.h>
#include <arrow/util/future.h>
#include <arrow/util/thread_pool.h>

#include <memory>
#include <type_traits>
#include <utility>

namespace ketch {

/// Separate process-wide pools for compute (kernels, expression evaluation; one thread per core by
/// default) and I/O (file reads, downloads). Both are Arrow thread pools, created on first use and
/// resized to the requested capacity on each call. Never shared with pyarrow's own pools.
arrow::internal::ThreadPool* ComputePool(int32_t num_threads);
arrow::internal::ThreadPool* IoPool(int32_t num_threads);

/// `fn()` (returning arrow::Result<T>) as a task of `pool`, or run right here when the caller is
/// itself one of `pool`'s threads. A pool task that submits to its own pool and waits deadlocks
/// once every thread does so: an I/O stage (run on the I/O pool) whose kernel reads through the
/// I/O pool, e.g. `file_read` or `url_download` split into a stage of their own.
template <typename Fn, typename T = typename std::invoke_result_t<Fn&>::ValueType>
arrow::Future<T> SubmitOrRunHere(arrow::internal::ThreadPool* pool, Fn&& fn) {
  if (pool->OwnsThisThread()) return arrow::Future<T>::MakeFinished(fn());
  return arrow::DeferNotOk(pool->Submit(std::forward<Fn>(fn)));
}

}  // namespace ketch
