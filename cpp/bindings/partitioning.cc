// Range partitioning for the Ray runner's distributed sort (ketch/exec/range_partition.h): the
// driver cuts a sample of the sort keys into boundaries, each map task splits its table by them.

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "interop.h"
#include "ketch/exec/range_partition.h"

namespace ketch::bindings {
namespace {

std::shared_ptr<arrow::Table> TableFromPy(nb::handle obj) {
  auto [schema, batches] = BatchesFromPy(obj);
  return Unwrap(arrow::Table::FromRecordBatches(schema, std::move(batches)));
}

nb::object TableToPy(const arrow::Table& table) {
  arrow::TableBatchReader reader(table);
  auto batches = Unwrap(reader.ToRecordBatches());
  return BatchesToPy(table.schema(), std::move(batches)).attr("read_all")();
}

RangeKeys Keys(std::vector<std::string> columns, std::vector<bool> descending,
               std::vector<bool> nulls_first) {
  if (columns.empty() || descending.size() != columns.size() || nulls_first.size() != columns.size()) {
    throw nb::value_error(
        "range partitioning needs at least one key, and one descending and nulls_first per key");
  }
  return RangeKeys{std::move(columns), std::move(descending), std::move(nulls_first)};
}

}  // namespace

void BindPartitioning(nb::module_& m) {
  m.def(
      "range_boundaries",
      [](nb::handle sample, std::vector<std::string> columns, std::vector<bool> descending,
         std::vector<bool> nulls_first, int num_partitions) {
        RangeKeys keys = Keys(std::move(columns), std::move(descending), std::move(nulls_first));
        auto table = TableFromPy(sample);
        arrow::Result<std::shared_ptr<arrow::RecordBatch>> bounds;
        {
          nb::gil_scoped_release release;
          bounds = RangeBoundaries(table, keys, num_partitions);
        }
        auto batch = Unwrap(std::move(bounds));
        return TableToPy(*Unwrap(arrow::Table::FromRecordBatches({batch})));
      },
      nb::arg("sample"), nb::arg("columns"), nb::arg("descending"), nb::arg("nulls_first"),
      nb::arg("num_partitions"));
  m.def(
      "range_partition",
      [](nb::handle table, std::vector<std::string> columns, std::vector<bool> descending,
         std::vector<bool> nulls_first, nb::handle boundaries, int num_partitions) {
        RangeKeys keys = Keys(std::move(columns), std::move(descending), std::move(nulls_first));
        auto input = TableFromPy(table);
        auto bounds_table = TableFromPy(boundaries);
        arrow::Result<std::vector<std::shared_ptr<arrow::Table>>> parts;
        {
          nb::gil_scoped_release release;
          parts = bounds_table->CombineChunksToBatch().Map([&](std::shared_ptr<arrow::RecordBatch> bounds) {
            return RangePartitionTable(input, keys, bounds, num_partitions);
          });
        }
        nb::list out;
        for (const auto& part : Unwrap(std::move(parts))) out.append(TableToPy(*part));
        return out;
      },
      nb::arg("table"), nb::arg("columns"), nb::arg("descending"), nb::arg("nulls_first"),
      nb::arg("boundaries"), nb::arg("num_partitions"));
}

}  // namespace ketch::bindings
