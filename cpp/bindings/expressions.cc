// Expressions and Python UDFs. A Python UDF is a BatchUdf whose Call takes the GIL and calls the
// runner object built by ketch/udf.py.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "handles.h"
#include "interop.h"
#include "ketch/expr/expr.h"

namespace ketch::bindings {
namespace {

class PyBatchUdf : public BatchUdf {
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

  arrow::Result<std::shared_ptr<arrow::Array>> Call(const std::vector<std::shared_ptr<arrow::Array>>& args,
                                                    int64_t num_rows) override {
    nb::gil_scoped_acquire gil;
    try {
      nb::list py_args;
      for (const auto& arg : args) py_args.append(ArrayToPy(arg));
      nb::object result = runner_(py_args, num_rows);
      return ArrayFromPy(result);
    } catch (nb::python_error& e) {
      std::string message = nb::str(e.value()).c_str();
      return arrow::Status::ExecutionError(message);
    } catch (const std::exception& e) {
      return arrow::Status::ExecutionError("UDF '", name_, "': ", e.what());
    }
  }

 private:
  std::string name_;
  nb::object runner_;
};

std::shared_ptr<arrow::Scalar> ScalarFromPy(nb::handle value) {
  // `value` is a length-1 pyarrow array built by the Python layer (pa.array([v])).
  auto array = ArrayFromPy(value);
  return Unwrap(array->GetScalar(0));
}

}  // namespace

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
      .def("is_column", [](const PyExpr& e) { return e.expr->kind() == ExprKind::kColumn; })
      .def("alias",
           [](const PyExpr& e, std::string name) { return PyExpr{Expr::Alias(e.expr, std::move(name))}; })
      .def("cast",
           [](const PyExpr& e, nb::handle type) { return PyExpr{Expr::Cast(e.expr, TypeFromPy(type))}; })
      .def("resolve_type", [](const PyExpr& e, nb::handle schema) {
        return TypeToPy(Unwrap(ResolveField(*e.expr, *SchemaFromPy(schema)))->type());
      });

  m.def("col", [](std::string name) { return PyExpr{Expr::Column(std::move(name))}; });
  m.def("lit", [](nb::handle value) { return PyExpr{Expr::Literal(ScalarFromPy(value))}; });
  m.def("call", [](std::string function, std::vector<PyExpr> args, nb::dict options) {
    std::vector<ExprPtr> exprs;
    for (auto& a : args) exprs.push_back(a.expr);
    FunctionOptions opts;
    for (auto [key, value] : options) {
      opts[nb::cast<std::string>(key)] = value.is_none() ? nullptr : ScalarFromPy(value);
    }
    return PyExpr{Expr::Call(std::move(function), std::move(exprs), std::move(opts))};
  });
  m.def("udf", [](std::string name, nb::object runner, std::vector<PyExpr> args, nb::handle return_type,
                  int64_t batch_size, int32_t concurrency, bool is_class, nb::dict display) {
    std::vector<ExprPtr> exprs;
    for (auto& a : args) exprs.push_back(a.expr);
    auto udf = std::make_shared<PyBatchUdf>(std::move(name), std::move(runner));
    UdfProperties props{batch_size, concurrency, is_class, {}};
    for (auto [key, value] : display)
      props.display[nb::cast<std::string>(key)] = nb::cast<std::string>(value);
    return PyExpr{Expr::Udf(std::move(udf), std::move(exprs), TypeFromPy(return_type), props)};
  });
}

}  // namespace ketch::bindings
