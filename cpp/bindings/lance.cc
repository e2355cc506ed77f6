// The Lance reader behind FileFormat::kLance: the core calls it (from executor threads) to open a
// scan of some fragments; it takes the GIL, asks ketch.io.lance for a pyarrow RecordBatchReader
// over LanceDataset.scanner(...), and imports its Arrow C stream. Pulling batches from the
// imported stream then needs no GIL (Lance's reader is native).

#include <arrow/c/bridge.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "interop.h"
#include "ketch/io/formats/lance_format.h"

namespace ketch::bindings {

void BindLance(nb::module_& m) {
  m.def(
      "set_lance_reader",
      [](nb::callable open) {
        // The callable lives as long as the process: dropping it at static destruction, after the
        // interpreter is gone, would crash.
        PyObject* fn = open.release().ptr();
        io::SetLanceReader([fn](const io::LanceReadRequest& request, const io::LanceReadStats& stats)
                               -> arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> {
          nb::gil_scoped_acquire gil;
          try {
            auto counter = stats.bytes_read;
            nb::object on_stats = nb::cpp_function([counter](int64_t bytes) { *counter += bytes; });
            nb::object columns = nb::cast(request.columns);
            nb::object filter = request.filter.empty() ? nb::none() : nb::cast(request.filter);
            nb::object limit = request.limit < 0 ? nb::none() : nb::cast(request.limit);
            nb::object nearest = nb::none();
            if (request.nearest) {
              nb::dict search;
              search["column"] = request.nearest->column;
              search["q"] = nb::cast(request.nearest->query);
              search["k"] = request.nearest->k;
              search["metric"] = request.nearest->metric;
              search["nprobes"] = request.nearest->nprobes;
              search["refine_factor"] = request.nearest->refine_factor;
              nearest = std::move(search);
            }
            nb::object reader = nb::borrow<nb::callable>(fn)(
                request.uri, request.version, nb::cast(request.fragment_ids), columns, filter, limit,
                request.offset, nb::cast(request.storage_options), on_stats, nearest);
            nb::object capsule = reader.attr("__arrow_c_stream__")();
            auto* stream =
                static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_array_stream"));
            if (stream == nullptr) {
              PyErr_Clear();
              return arrow::Status::Invalid("read_lance: the Lance reader gave no Arrow stream");
            }
            return arrow::ImportRecordBatchReader(stream);
          } catch (const nb::python_error& e) {
            return arrow::Status::IOError("read_lance '", request.uri, "' (version ", request.version,
                                          "): ", e.what());
          }
        });
      },
      nb::arg("open"),
      "Installs the function the Lance scan calls (with the GIL) to open a reader over fragments: "
      "open(uri, version, fragment_ids, columns, filter, limit, offset, storage_options, on_bytes_read, "
      "nearest) -> an object with __arrow_c_stream__ (nearest: None, or a dict of LanceDataset.scanner's "
      "nearest= keys for a search over the whole version).");
}

}  // namespace ketch::bindings
