// The ketch._core extension module: registers kernels and extension types, then binds each area.

#include <malloc.h>
#include <nanobind/nanobind.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "interop.h"
#include "ketch/functions/register.h"
#include "ketch/io/object_store.h"

namespace ketch::bindings {
void BindExpressions(nb::module_& m);
void BindPlans(nb::module_& m);
void BindPartitioning(nb::module_& m);
void BindTypes(nb::module_& m);
void BindLance(nb::module_& m);
}  // namespace ketch::bindings

NB_MODULE(_core, m) {
  namespace kb = ketch::bindings;
  kb::ThrowIfError(ketch::RegisterBuiltins());
  // glibc's malloc (used by the engine's std:: buffers, libjpeg, numpy and torch; Arrow's own
  // buffers come from mimalloc) serves a block above its mmap threshold from a fresh mapping,
  // unmapped when freed. Left dynamic, the threshold rises with each large free (to 32 MiB) and
  // multi-MiB blocks then sit in per-thread heaps that rarely shrink. Fixed at 1 MiB (before
  // 2026-12-07) it bounded that, but every torch activation (tens of MiB per batch) became a
  // fresh mapping: a ResNet over 2,000 images spent 16 s of its 27 s in page faults (sys time).
  // Fixed at 128 MiB: blocks below are reused (the ResNet run: 23.7 s, 8 s sys, +7 % RSS;
  // bench_udf_pipeline q6/q7 +9 / +66 MB above start), larger ones still go back to the system.
  // KETCH_MALLOC_MMAP_THRESHOLD (bytes; 0: glibc's dynamic default) overrides it at import.
  long threshold = 128L << 20;
  if (const char* text = std::getenv("KETCH_MALLOC_MMAP_THRESHOLD"))
    threshold = std::strtol(text, nullptr, 10);
  if (threshold > 0) mallopt(M_MMAP_THRESHOLD, static_cast<int>(std::min<long>(threshold, 1L << 30)));
  // Transparent huge pages (Debian's default: "always") make every first touch of a freed and
  // purged allocator page zero 2 MiB: mimalloc (Arrow's pool) returns idle pages to the system
  // after 10 ms, so each hash table or morsel built in reused memory faulted again and the kernel
  // spent a third of TPC-H Q17's time in clear_page (perf). Off for this process (and processes
  // it starts), 4 KiB pages are zeroed only when touched: eight TPC-H SF1 queries' best-of-3 sum
  // fell 6.6 -> 5.6 s, system time 7.3 -> 3.0 s, peak RSS 2 to 6 % lower.
  // KETCH_TRANSPARENT_HUGEPAGES=1 keeps the system's setting.
  const char* thp = std::getenv("KETCH_TRANSPARENT_HUGEPAGES");
  if (thp == nullptr || std::string_view(thp) != "1") prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
  // Plans hold Python UDF callables, whose globals may hold the DataFrame that holds the plan: a
  // cycle Python's GC cannot see through native objects. It only matters at interpreter exit, where
  // nanobind would print a leak report for it.
  nanobind::set_leak_warnings(false);
  kb::BindTypes(m);
  kb::BindExpressions(m);
  kb::BindPlans(m);
  kb::BindPartitioning(m);
  kb::BindLance(m);
  // Registered with atexit by ketch/__init__.py: the AWS SDK must shut down before exit.
  m.def("finalize_s3", [] { ketch::io::FinalizeS3(); });
}
