#include "interop.h"

#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>

#include "ketch/io/redact.h"
#include "ketch/types/large_offsets.h"

namespace ketch::bindings {
namespace {

template <typename T>
void ReleaseCapsule(void* ptr) noexcept {
  auto* c_struct = static_cast<T*>(ptr);
  if (c_struct->release != nullptr) c_struct->release(c_struct);
  delete c_struct;
}

template <typename T>
T* CapsulePointer(nb::handle capsule, const char* name) {
  auto* ptr = static_cast<T*>(PyCapsule_GetPointer(capsule.ptr(), name));
  if (ptr == nullptr) throw nb::python_error();
  return ptr;
}

nb::object PyArrow() { return nb::module_::import_("pyarrow"); }

}  // namespace

void RaiseStatus(const arrow::Status& status) {
  nb::object errors = nb::module_::import_("ketch.errors");
  const char* name = "KetchError";
  // Last line of defence: no credential in a URL leaves the engine inside an exception message.
  const std::string message = io::Redact(status.message());
  switch (status.code()) {
    case arrow::StatusCode::TypeError:
      name = "KetchTypeError";
      break;
    case arrow::StatusCode::KeyError:
      name = "ColumnNotFoundError";
      break;
    case arrow::StatusCode::IOError:
      name = message.find("[errno 2]") != std::string::npos ? "KetchFileNotFoundError" : "KetchIOError";
      break;
    case arrow::StatusCode::Invalid:
    case arrow::StatusCode::IndexError:
      name = "KetchValueError";
      break;
    case arrow::StatusCode::NotImplemented:
      name = "KetchNotImplementedError";
      break;
    default:
      break;
  }
  nb::object cls = errors.attr(name);
  // Messages may quote bytes of the input (a CSV row, a JSON key) that are not UTF-8: escape them
  // (\xff) rather than raise a UnicodeDecodeError that names nothing.
  PyObject* text =
      PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace");
  if (text == nullptr) throw nb::python_error();
  PyErr_SetObject(cls.ptr(), text);
  Py_DECREF(text);
  throw nb::python_error();
}

nb::object TypeToPy(const std::shared_ptr<arrow::DataType>& type) {
  auto* c_schema = new ArrowSchema;
  auto st = arrow::ExportType(*type, c_schema);
  if (!st.ok()) {
    delete c_schema;
    RaiseStatus(st);
  }
  nb::capsule capsule(c_schema, "arrow_schema", &ReleaseCapsule<ArrowSchema>);
  return PyArrow().attr("DataType").attr("_import_from_c_capsule")(capsule);
}

std::shared_ptr<arrow::DataType> TypeFromPy(nb::handle obj) {
  nb::object capsule = obj.attr("__arrow_c_schema__")();
  return Unwrap(arrow::ImportType(CapsulePointer<ArrowSchema>(capsule, "arrow_schema")));
}

nb::object SchemaToPy(const std::shared_ptr<arrow::Schema>& schema) {
  auto* c_schema = new ArrowSchema;
  auto st = arrow::ExportSchema(*schema, c_schema);
  if (!st.ok()) {
    delete c_schema;
    RaiseStatus(st);
  }
  nb::capsule capsule(c_schema, "arrow_schema", &ReleaseCapsule<ArrowSchema>);
  return PyArrow().attr("Schema").attr("_import_from_c_capsule")(capsule);
}

std::shared_ptr<arrow::Schema> SchemaFromPy(nb::handle obj) {
  nb::object capsule = obj.attr("__arrow_c_schema__")();
  return Unwrap(arrow::ImportSchema(CapsulePointer<ArrowSchema>(capsule, "arrow_schema")));
}

nb::object ArrayToPy(const std::shared_ptr<arrow::Array>& array) {
  auto* c_array = new ArrowArray;
  auto* c_schema = new ArrowSchema;
  auto st = arrow::ExportArray(*array, c_array, c_schema);
  if (!st.ok()) {
    delete c_array;
    delete c_schema;
    RaiseStatus(st);
  }
  nb::capsule schema_capsule(c_schema, "arrow_schema", &ReleaseCapsule<ArrowSchema>);
  nb::capsule array_capsule(c_array, "arrow_array", &ReleaseCapsule<ArrowArray>);
  return PyArrow().attr("Array").attr("_import_from_c_capsule")(schema_capsule, array_capsule);
}

std::shared_ptr<arrow::Array> ArrayFromPy(nb::handle obj) {
  if (!nb::hasattr(obj, "__arrow_c_array__") && nb::hasattr(obj, "__arrow_c_stream__")) {
    // A ChunkedArray (pyarrow chunks values over 2 GiB of binary / string): one array, of the
    // large variant when the values overflow 32-bit offsets.
    nb::object capsule = obj.attr("__arrow_c_stream__")();
    auto chunked =
        Unwrap(arrow::ImportChunkedArray(CapsulePointer<ArrowArrayStream>(capsule, "arrow_array_stream")));
    return Unwrap(ConcatenateWidening(chunked->chunks(), chunked->type()));
  }
  nb::tuple capsules = nb::borrow<nb::tuple>(obj.attr("__arrow_c_array__")());
  auto* c_schema = CapsulePointer<ArrowSchema>(capsules[0], "arrow_schema");
  auto* c_array = CapsulePointer<ArrowArray>(capsules[1], "arrow_array");
  return Unwrap(arrow::ImportArray(c_array, c_schema));
}

nb::object BatchesToPy(const std::shared_ptr<arrow::Schema>& schema,
                       std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
  auto reader = Unwrap(arrow::RecordBatchReader::Make(std::move(batches), schema));
  auto* c_stream = new ArrowArrayStream;
  auto st = arrow::ExportRecordBatchReader(reader, c_stream);
  if (!st.ok()) {
    delete c_stream;
    RaiseStatus(st);
  }
  nb::capsule capsule(c_stream, "arrow_array_stream", &ReleaseCapsule<ArrowArrayStream>);
  return PyArrow().attr("RecordBatchReader").attr("_import_from_c_capsule")(capsule);
}

std::pair<std::shared_ptr<arrow::Schema>, std::vector<std::shared_ptr<arrow::RecordBatch>>> BatchesFromPy(
    nb::handle obj) {
  nb::object capsule = obj.attr("__arrow_c_stream__")();
  auto reader =
      Unwrap(arrow::ImportRecordBatchReader(CapsulePointer<ArrowArrayStream>(capsule, "arrow_array_stream")));
  auto batches = Unwrap(reader->ToRecordBatches());
  return {reader->schema(), std::move(batches)};
}

}  // namespace ketch::bindings
