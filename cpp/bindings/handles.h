#pragma once

#include "ketch/distributed/serde/plan_serde.h"
#include "ketch/expr/expr.h"

namespace ketch::bindings {

/// Python handle of an immutable expression tree (ketch._core.PyExpr).
struct PyExpr {
  ExprPtr expr;
};

/// Plan serialization of Python UDFs: the runner object as cloudpickle bytes (GIL taken inside).
serde::UdfPayloadWriter PyUdfPayloadWriter();
/// Rebuilds a Python UDF from its cloudpickle bytes (GIL taken inside).
serde::UdfPayloadReader PyUdfPayloadReader();

/// The Python runner object of a UDF expression's BatchUdf (None for a non-Python UDF). GIL held.
nanobind::object UdfRunnerOf(const Expr& udf_expr);

}  // namespace ketch::bindings
