#include "ketch/common/config.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
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
  if (out.memory_budget_bytes <= 0) {
    const int64_t pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    out.memory_budget_bytes = pages > 0 && page > 0 ? pages * page / 2 : int64_t{4} << 30;
  }
  if (out.spill_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    out.spill_dir = (tmp && *tmp ? std::string(tmp) : std::string("/tmp")) + "/ketch-spill";
  }
  return out;
}

}  // namespace ketch
