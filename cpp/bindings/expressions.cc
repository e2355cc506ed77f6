// Expressions and Python UDFs. A Python UDF is a BatchUdf whose Call takes the GIL and calls the
// runner object built by ketch/udf.py.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "handles.h"
#include "interop.h"
#include "ketch/expr/expr.h"
#include "ketch/expr/expr_analysis.h"
#include "ketch/expr/udf_stream.h"
#include "ketch/plan/logical/aggregate_expressions.h"

namespace ketch::bindings {
namespace {

// A generator UDF's lazy call: the runner's stream object (ketch/udf.py `_GeneratorStream`):
// `next(max_items, max_bytes)` -> (first_row, pyarrow list array, done); `close()`.
class PyUdfStream : public UdfStream {
 public:
  PyUdfStream(std::string name, nb::object stream, const std::atomic<bool>* cancelled)
      : name_(std::move(name)), stream_(std::move(stream)), cancelled_(cancelled) {}
  ~PyUdfStream() override {
    if (!Py_IsInitialized()) {
      stream_.release();
      return;
    }
    nb::gil_scoped_acquire gil;
    try {
      stream_.attr("close")();
    } catch (nb::python_error& e) {
      e.discard_as_unraisable(stream_);
    } catch (...) {
    }
    stream_.reset();
  }

  arrow::Result<UdfChunk> Next(int64_t max_items, int64_t max_bytes) override {
    nb::gil_scoped_acquire gil;
    try {
      nb::tuple out = nb::cast<nb::tuple>(stream_.attr("next")(max_items, max_bytes));
      UdfChunk chunk;
      chunk.first_row = nb::cast<int64_t>(out[0]);
      chunk.lists = ArrayFromPy(out[1]);
      chunk.done = nb::cast<bool>(out[2]);
      return chunk;
    } catch (nb::python_error& e) {
      std::string message = nb::str(e.value()).c_str();
      if (cancelled_ != nullptr && cancelled_->load()) return arrow::Status::Cancelled(message);
      return arrow::Status::ExecutionError(message);
    } catch (const std::exception& e) {
      return arrow::Status::ExecutionError("UDF '", name_, "': ", e.what());
    }
  }

 private:
  std::string name_;
  nb::object stream_;
  const std::atomic<bool>* cancelled_;
};

class PyBatchUdf : public BatchUdf, public StreamingUdf {
 public:
  PyBatchUdf(std::string name, nb::object runner) : name_(std::move(name)), runner_(std::move(runner)) {}
  ~PyBatchUdf() override {
    if (Py_IsInitialized()) {
      nb::gil_scoped_acquire gil;
      runner_.reset();
    } else {
      runner_.release();
    }
  }
  std::string name() const override { return name_; }
  const nb::object& runner() const { return runner_; }

  // The runner gets a `cancelled()` callable: it waits for user code (on a thread or a worker
  // process of its own) while polling it, so Ctrl-C or a failed query never waits for a call.
  arrow::Result<std::shared_ptr<arrow::Array>> Call(const std::vector<std::shared_ptr<arrow::Array>>& args,
                                                    int64_t num_rows, const UdfCall& call) override {
    nb::gil_scoped_acquire gil;
    try {
      nb::list py_args;
      for (const auto& arg : args) py_args.append(ArrayToPy(arg));
      const std::atomic<bool>* cancelled = call.cancelled;
      nb::object is_cancelled =
          nb::cpp_function([cancelled]() { return cancelled != nullptr && cancelled->load(); });
      nb::object result = runner_(py_args, num_rows, is_cancelled, call.max_items_per_row);
      return ArrayFromPy(result);
    } catch (nb::python_error& e) {
      std::string message = nb::str(e.value()).c_str();
      // A call given up because the query stopped is a consequence, not the query's error.
      if (call.cancelled != nullptr && call.cancelled->load()) return arrow::Status::Cancelled(message);
      return arrow::Status::ExecutionError(message);
    } catch (const std::exception& e) {
      return arrow::Status::ExecutionError("UDF '", name_, "': ", e.what());
    }
  }

  bool CanStream() const override {
    nb::gil_scoped_acquire gil;
    try {
      return nb::hasattr(runner_, "can_stream") && nb::cast<bool>(runner_.attr("can_stream")());
    } catch (...) {
      return false;
    }
  }

  arrow::Result<std::unique_ptr<UdfStream>> Start(const std::vector<std::shared_ptr<arrow::Array>>& args,
                                                  int64_t num_rows, const UdfCall& call) override {
    nb::gil_scoped_acquire gil;
    try {
      nb::list py_args;
      for (const auto& arg : args) py_args.append(ArrayToPy(arg));
      const std::atomic<bool>* cancelled = call.cancelled;
      nb::object is_cancelled =
          nb::cpp_function([cancelled]() { return cancelled != nullptr && cancelled->load(); });
      nb::object stream =
          runner_.attr("start_stream")(py_args, num_rows, is_cancelled, call.max_items_per_row);
      if (stream.is_none()) return nullptr;
      return std::make_unique<PyUdfStream>(name_, std::move(stream), cancelled);
    } catch (nb::python_error& e) {
      return arrow::Status::ExecutionError(nb::str(e.value()).c_str());
    } catch (const std::exception& e) {
      return arrow::Status::ExecutionError("UDF '", name_, "': ", e.what());
    }
  }

 private:
  std::string name_;
  nb::object runner_;
};

std::shared_ptr<arrow::Scalar> ScalarFromPy(nb::handle value) {
  // Plain Python scalars (exact types), and ("date32" | "timestamp_us", int) for naive dates and
  // datetimes, are built here; anything else is a length-1 pyarrow array from the Python layer.
  if (value.is_none()) return std::make_shared<arrow::NullScalar>();
  if (PyBool_Check(value.ptr())) return std::make_shared<arrow::BooleanScalar>(value.ptr() == Py_True);
  if (PyLong_CheckExact(value.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow == 0) return std::make_shared<arrow::Int64Scalar>(v);
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
      if (!PyErr_Occurred()) return std::make_shared<arrow::UInt64Scalar>(u);
      PyErr_Clear();
    }
    throw nb::value_error("integer literal out of range for int64 / uint64");
  }
  if (PyFloat_CheckExact(value.ptr()))
    return std::make_shared<arrow::DoubleScalar>(PyFloat_AsDouble(value.ptr()));
  if (PyUnicode_CheckExact(value.ptr())) {
    return std::make_shared<arrow::LargeStringScalar>(nb::cast<std::string>(value));
  }
  if (PyBytes_CheckExact(value.ptr())) {
    return std::make_shared<arrow::LargeBinaryScalar>(
        std::string(PyBytes_AsString(value.ptr()), static_cast<size_t>(PyBytes_Size(value.ptr()))));
  }
  if (PyTuple_CheckExact(value.ptr()) && PyTuple_Size(value.ptr()) == 2) {
    const auto kind = nb::cast<std::string>(nb::handle(PyTuple_GetItem(value.ptr(), 0)));
    const auto v = nb::cast<int64_t>(nb::handle(PyTuple_GetItem(value.ptr(), 1)));
    if (kind == "date32") return std::make_shared<arrow::Date32Scalar>(static_cast<int32_t>(v));
    if (kind == "timestamp_us") {
      return std::make_shared<arrow::TimestampScalar>(v, arrow::timestamp(arrow::TimeUnit::MICRO));
    }
  }
  auto array = ArrayFromPy(value);
  return Unwrap(array->GetScalar(0));
}

}  // namespace

serde::UdfPayloadWriter PyUdfPayloadWriter() {
  return [](const Expr& expr) -> arrow::Result<std::string> {
    const auto* udf = dynamic_cast<const PyBatchUdf*>(expr.udf().get());
    if (udf == nullptr) {
      return arrow::Status::TypeError("UDF '", expr.udf() ? expr.udf()->name() : expr.name(),
                                      "' is not a Python UDF");
    }
    nb::gil_scoped_acquire gil;
    try {
      nb::object dumped = nb::module_::import_("cloudpickle").attr("dumps")(udf->runner());
      nb::bytes bytes = nb::cast<nb::bytes>(dumped);
      return std::string(bytes.c_str(), bytes.size());
    } catch (const std::exception& e) {
      return arrow::Status::TypeError("it cannot be pickled with cloudpickle: ", e.what());
    }
  };
}

nb::object UdfRunnerOf(const Expr& expr) {
  const auto* udf = dynamic_cast<const PyBatchUdf*>(expr.udf().get());
  return udf == nullptr ? nb::none() : udf->runner();
}

serde::UdfPayloadReader PyUdfPayloadReader() {
  return [](const std::string& name, const std::string& payload,
            const UdfProperties&) -> arrow::Result<std::shared_ptr<BatchUdf>> {
    nb::gil_scoped_acquire gil;
    try {
      nb::object runner =
          nb::module_::import_("cloudpickle").attr("loads")(nb::bytes(payload.data(), payload.size()));
      return std::make_shared<PyBatchUdf>(name, std::move(runner));
    } catch (const std::exception& e) {
      return arrow::Status::Invalid("unpickling its runner failed: ", e.what());
    }
  };
}

/// A PyExpr of `expr`, or KetchValueError when the tree is deeper than kMaxExprDepth (the
/// recursive walks of the planner and kernels would overflow the stack).
PyExpr Checked(ExprPtr expr) {
  if (expr->depth() > kMaxExprDepth) {
    RaiseStatus(arrow::Status::Invalid("expression nested too deeply: depth ", expr->depth(),
                                       " is past Ketch's limit of ", kMaxExprDepth,
                                       " levels (build long chains of ands/ors or sums with fewer "
                                       "levels, e.g. is_in, or reduce over a balanced tree)"));
  }
  return PyExpr{std::move(expr)};
}

void BindExpressions(nb::module_& m) {
  nb::class_<PyExpr>(m, "PyExpr")
      .def("__repr__", [](const PyExpr& e) { return e.expr->ToString(); })
      .def("output_name", [](const PyExpr& e) { return e.expr->OutputName(); })
      .def("columns",
           [](const PyExpr& e) {
             std::set<std::string> names;
             e.expr->CollectColumns(&names);
             return std::vector<std::string>(names.begin(), names.end());
           })
      .def("has_udf", [](const PyExpr& e) { return e.expr->HasUdf(); })
      .def("substitute_column",
           [](const PyExpr& e, const std::string& name, const PyExpr& replacement) {
             return Checked(SubstituteColumns(e.expr, {{name, replacement.expr}}));
           })
      .def("has_aggregation", [](const PyExpr& e) { return ContainsAggregationCall(*e.expr); })
      .def("is_column", [](const PyExpr& e) { return e.expr->kind() == ExprKind::kColumn; })
      .def("is_literal", [](const PyExpr& e) { return e.expr->kind() == ExprKind::kLiteral; })
      .def("literal_array",
           [](const PyExpr& e) -> nb::object {
             // The literal as a length-1 pyarrow array (None for other expressions).
             if (e.expr->kind() != ExprKind::kLiteral) return nb::none();
             return ArrayToPy(Unwrap(arrow::MakeArrayFromScalar(*e.expr->literal(), 1)));
           })
      .def("alias",
           [](const PyExpr& e, std::string name) { return Checked(Expr::Alias(e.expr, std::move(name))); })
      .def("cast",
           [](const PyExpr& e, nb::handle type) { return Checked(Expr::Cast(e.expr, TypeFromPy(type))); })
      .def("resolve_type", [](const PyExpr& e, nb::handle schema) {
        return TypeToPy(Unwrap(ResolveField(*e.expr, *SchemaFromPy(schema)))->type());
      });

  m.def("col", [](std::string name) { return PyExpr{Expr::Column(std::move(name))}; });
  m.def(
      "lit", [](nb::handle value) { return PyExpr{Expr::Literal(ScalarFromPy(value))}; },
      nb::arg("value").none());
  m.def("call", [](std::string function, std::vector<PyExpr> args, nb::dict options) {
    std::vector<ExprPtr> exprs;
    for (auto& a : args) exprs.push_back(a.expr);
    FunctionOptions opts;
    for (auto [key, value] : options) {
      opts[nb::cast<std::string>(key)] = value.is_none() ? nullptr : ScalarFromPy(value);
    }
    return Checked(Expr::Call(std::move(function), std::move(exprs), std::move(opts)));
  });
  m.def("udf", [](std::string name, nb::object runner, std::vector<PyExpr> args, nb::handle return_type,
                  int64_t batch_size, int64_t default_batch_rows, int32_t concurrency, bool is_class,
                  bool generator, nb::dict display, int32_t bucket_key_args) {
    std::vector<ExprPtr> exprs;
    for (auto& a : args) exprs.push_back(a.expr);
    auto udf = std::make_shared<PyBatchUdf>(std::move(name), std::move(runner));
    UdfProperties props;
    props.batch_size = batch_size;
    props.default_batch_rows = default_batch_rows;
    props.concurrency = concurrency;
    props.is_class = is_class;
    props.generator = generator;
    props.bucket_key_args = bucket_key_args;
    for (auto [key, value] : display)
      props.display[nb::cast<std::string>(key)] = nb::cast<std::string>(value);
    return Checked(Expr::Udf(std::move(udf), std::move(exprs), TypeFromPy(return_type), props));
  });
}

}  // namespace ketch::bindings
