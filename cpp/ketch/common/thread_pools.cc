#include "ketch/common/thread_pools.h"

#include <mutex>

namespace ketch {
namespace {

arrow::internal::ThreadPool* GetPool(std::shared_ptr<arrow::internal::ThreadPool>& slot,
                                     int32_t num_threads) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (!slot) {
    slot = arrow::internal::ThreadPool::MakeEternal(num_threads).ValueOrDie();
  } else if (slot->GetCapacity() != num_threads) {
    // Capacity changes are rare (set_execution_config); SetCapacity never fails for n > 0.
    (void)slot->SetCapacity(num_threads);
  }
  return slot.get();
}

}  // namespace

// The pools are never destroyed: a worker may still be leaving its last task while the process
// exits, and destroying a pool under it (static destruction) crashes. The OS reclaims them.
arrow::internal::ThreadPool* ComputePool(int32_t num_threads) {
  static auto* pool = new std::shared_ptr<arrow::internal::ThreadPool>();
  return GetPool(*pool, num_threads);
}

arrow::internal::ThreadPool* IoPool(int32_t num_threads) {
  static auto* pool = new std::shared_ptr<arrow::internal::ThreadPool>();
  return GetPool(*pool, num_threads);
}

}  // namespace ketch
