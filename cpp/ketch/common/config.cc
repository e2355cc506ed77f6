#include "ketch/common/config.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace ketch {

int32_t AvailableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    return std::max(1, CPU_COUNT(&set));
  }
  return static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
}

ExecutionConfig ExecutionConfig::Resolved() const {
  ExecutionConfig out = *this;
  if (out.num_compute_threads <= 0) out.num_compute_threads = AvailableCores();
  if (out.num_io_threads <= 0) out.num_io_threads = 8;
  if (out.max_morsels_in_flight <= 0) out.max_morsels_in_flight = 2 * out.num_compute_threads + 2;
  if (out.morsel_size_rows <= 0) out.morsel_size_rows = 128 * 1024;
  return out;
}

}  // namespace ketch
