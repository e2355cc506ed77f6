#pragma once

#include "ketch/expr/expr.h"

namespace ketch::bindings {

/// Python handle of an immutable expression tree (ketch._core.PyExpr).
struct PyExpr {
  ExprPtr expr;
};

}  // namespace ketch::bindings
