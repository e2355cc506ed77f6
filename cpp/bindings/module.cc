// The ketch._core extension module: registers kernels and extension types, then binds each area.

#include <malloc.h>
#include <nanobind/nanobind.h>

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
  // glibc raises its mmap threshold each time a large block is freed (up to 32 MiB), after which
  // multi-MiB buffers (downloaded files, decoded images) come from per-thread heaps that rarely
  // return memory to the system: RSS then grows far past what the query holds. A fixed threshold
  // keeps blocks of 1 MiB and more in their own mappings, unmapped when freed.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
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
