// The ketch._core extension module: registers kernels and extension types, then binds each area.

#include <nanobind/nanobind.h>

#include "interop.h"
#include "ketch/functions/register.h"

namespace ketch::bindings {
void BindExpressions(nb::module_& m);
void BindPlans(nb::module_& m);
void BindTypes(nb::module_& m);
}  // namespace ketch::bindings

NB_MODULE(_core, m) {
  namespace kb = ketch::bindings;
  kb::ThrowIfError(ketch::RegisterBuiltins());
  kb::BindTypes(m);
  kb::BindExpressions(m);
  kb::BindPlans(m);
}
