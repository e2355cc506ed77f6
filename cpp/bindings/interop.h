#pragma once

// Arrow data across the Python boundary through the Arrow C Data Interface PyCapsules (zero-copy),
// and arrow::Status → ketch.errors exceptions. Thin: no engine logic here.

#include <arrow/api.h>
#include <nanobind/nanobind.h>

#include <memory>

namespace ketch::bindings {

namespace nb = nanobind;

/// Raises the ketch.errors exception that matches the status code (TypeError → KetchTypeError, ...).
[[noreturn]] void RaiseStatus(const arrow::Status& status);

inline void ThrowIfError(const arrow::Status& status) {
  if (!status.ok()) RaiseStatus(status);
}

template <typename T>
T Unwrap(arrow::Result<T> result) {
  if (!result.ok()) RaiseStatus(result.status());
  return std::move(result).ValueUnsafe();
}

nb::object TypeToPy(const std::shared_ptr<arrow::DataType>& type);
std::shared_ptr<arrow::DataType> TypeFromPy(nb::handle obj);
nb::object SchemaToPy(const std::shared_ptr<arrow::Schema>& schema);
std::shared_ptr<arrow::Schema> SchemaFromPy(nb::handle obj);
nb::object ArrayToPy(const std::shared_ptr<arrow::Array>& array);
/// An object with __arrow_c_array__, or with __arrow_c_stream__ (a ChunkedArray: its chunks as one
/// array, large_binary / large_string / large_list when they hold over 2 GiB).
std::shared_ptr<arrow::Array> ArrayFromPy(nb::handle obj);
/// A pyarrow.RecordBatchReader over the batches (zero-copy).
nb::object BatchesToPy(const std::shared_ptr<arrow::Schema>& schema,
                       std::vector<std::shared_ptr<arrow::RecordBatch>> batches);
/// Reads every batch of an object with __arrow_c_stream__ (pyarrow Table or RecordBatchReader).
std::pair<std::shared_ptr<arrow::Schema>, std::vector<std::shared_ptr<arrow::RecordBatch>>> BatchesFromPy(
    nb::handle obj);

}  // namespace ketch::bindings
