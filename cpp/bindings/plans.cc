// Logical plans, the optimizer and the executor, as seen from ketch/dataframe.py.

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <future>
#include <thread>

#include "handles.h"
#include "interop.h"
#include "ketch/exec/executor.h"
#include "ketch/functions/url/url_functions.h"
#include "ketch/plan/logical/logical_plan.h"
#include "ketch/plan/logical/scan_builder.h"
#include "ketch/plan/optimizer/optimizer.h"
#include "ketch/plan/physical/physical_plan.h"

namespace ketch::bindings {
namespace {

/// Python handle of an immutable logical plan.
struct PyPlan {
  LogicalPlanPtr plan;
};

char OneChar(const std::map<std::string, std::string>& options, const char* key, char fallback) {
  auto it = options.find(key);
  if (it == options.end()) return fallback;
  if (it->second.size() > 1) {
    throw nb::value_error(
        (std::string(key) + " must be a single character, got '" + it->second + "'").c_str());
  }
  return it->second.empty() ? 0 : it->second[0];
}

bool Flag(const std::map<std::string, std::string>& options, const char* key, bool fallback) {
  auto it = options.find(key);
  return it == options.end() ? fallback : it->second == "true";
}

std::vector<ExprPtr> Exprs(nb::handle list) {
  std::vector<ExprPtr> out;
  for (nb::handle item : list) out.push_back(nb::cast<PyExpr&>(item).expr);
  return out;
}

}  // namespace

void BindPlans(nb::module_& m) {
  nb::class_<ExecutionConfig>(m, "ExecutionConfig")
      .def(nb::init<>())
      .def_rw("morsel_size_rows", &ExecutionConfig::morsel_size_rows)
      .def_rw("max_morsels_in_flight", &ExecutionConfig::max_morsels_in_flight)
      .def_rw("num_compute_threads", &ExecutionConfig::num_compute_threads)
      .def_rw("num_io_threads", &ExecutionConfig::num_io_threads)
      .def_rw("memory_budget_bytes", &ExecutionConfig::memory_budget_bytes)
      .def_rw("spill_dir", &ExecutionConfig::spill_dir)
      .def_rw("scan_tasks_min_size_bytes", &ExecutionConfig::scan_tasks_min_size_bytes)
      .def_rw("scan_tasks_max_size_bytes", &ExecutionConfig::scan_tasks_max_size_bytes)
      .def_rw("max_sources_per_scan_task", &ExecutionConfig::max_sources_per_scan_task);

  nb::class_<ExecutionStats>(m, "ExecutionStats")
      .def(nb::init<>())
      .def_prop_ro("morsels_emitted", [](const ExecutionStats& s) { return s.morsels_emitted.load(); })
      .def_prop_ro("rows_emitted", [](const ExecutionStats& s) { return s.rows_emitted.load(); })
      .def_prop_ro("max_morsels_in_flight",
                   [](const ExecutionStats& s) { return s.max_morsels_in_flight.load(); })
      .def_prop_ro("finished", [](const ExecutionStats& s) { return s.finished.load(); })
      .def_prop_ro("peak_memory_bytes", [](const ExecutionStats& s) { return s.peak_memory_bytes.load(); })
      .def_prop_ro("scan",
                   [](const ExecutionStats& s) {
                     nb::dict d;
                     d["scan_tasks"] = s.scan.scan_tasks.load();
                     d["files_read"] = s.scan.files_read.load();
                     d["files_pruned"] = s.scan.files_pruned.load();
                     d["row_groups_read"] = s.scan.row_groups_read.load();
                     d["row_groups_pruned"] = s.scan.row_groups_pruned.load();
                     d["bytes_read"] = s.scan.bytes_read.load();
                     d["rows_read"] = s.scan.rows_read.load();
                     return d;
                   })
      // One dict per operator, in registration order (pipelines that feed others first).
      .def("operators", [](ExecutionStats& s) {
        nb::list out;
        std::lock_guard<std::mutex> lock(s.mutex);
        for (const auto& op : s.operators) {
          nb::dict d;
          d["name"] = op.name;
          d["pipeline"] = op.pipeline;
          d["morsels"] = op.morsels.load();
          d["rows_in"] = op.rows_in.load();
          d["rows_out"] = op.rows_out.load();
          d["bytes_out"] = op.bytes_out.load();
          d["cpu_seconds"] = static_cast<double>(op.cpu_ns.load()) / 1e9;
          d["peak_memory_bytes"] = op.memory.peak.load();
          out.append(d);
        }
        return out;
      });

  nb::class_<PyPlan>(m, "PyPlan")
      .def_static("in_memory",
                  [](nb::handle stream) {
                    auto [schema, batches] = BatchesFromPy(stream);
                    return PyPlan{Unwrap(LogicalPlan::InMemory(schema, std::move(batches)))};
                  })
      .def_static(
          "scan",
          [](const std::string& format, std::vector<std::string> paths, std::vector<int64_t> sizes,
             std::map<std::string, std::string> options, nb::handle schema, nb::handle hints,
             nb::handle partitions, std::map<std::string, std::string> s3_options) {
            ScanRequest request;
            if (format == "parquet") {
              request.format = FileFormat::kParquet;
            } else if (format == "csv") {
              request.format = FileFormat::kCsv;
            } else if (format == "json") {
              request.format = FileFormat::kJson;
            } else {
              throw nb::value_error(("unknown file format: " + format).c_str());
            }
            request.csv.has_header = Flag(options, "has_header", true);
            request.csv.delimiter = OneChar(options, "delimiter", ',');
            request.csv.quote = OneChar(options, "quote", '"');
            request.csv.quoting = request.csv.quote != 0;
            request.csv.escape = OneChar(options, "escape", 0);
            request.csv.double_quote = Flag(options, "double_quote", true);
            request.csv.allow_variable_columns = Flag(options, "allow_variable_columns", false);
            if (request.csv.delimiter == 0) throw nb::value_error("delimiter must be a single character");
            if (!schema.is_none()) request.schema = SchemaFromPy(schema);
            if (!hints.is_none()) request.hints = SchemaFromPy(hints);
            std::vector<std::shared_ptr<arrow::RecordBatch>> partition_batches;
            if (!partitions.is_none()) {
              auto [partition_schema, batches] = BatchesFromPy(partitions);
              request.partition_schema = partition_schema;
              partition_batches = std::move(batches);
            }
            FunctionOptions s3;
            for (const auto& [key, value] : s3_options)
              s3[key] = std::make_shared<arrow::StringScalar>(value);
            request.s3 = Unwrap(url::S3ConfigFromOptions(s3));
            for (size_t i = 0; i < paths.size(); ++i) {
              ScanFile file;
              file.path = paths[i];
              file.size_bytes = i < sizes.size() ? sizes[i] : -1;
              request.files.push_back(std::move(file));
            }
            // Partition values: row i of the partitions table belongs to file i.
            size_t row = 0;
            for (const auto& batch : partition_batches) {
              for (int64_t r = 0; r < batch->num_rows(); ++r, ++row) {
                if (row >= request.files.size()) throw nb::value_error("more partition rows than files");
                for (int c = 0; c < batch->num_columns(); ++c) {
                  request.files[row].partition_values.push_back(Unwrap(batch->column(c)->GetScalar(r)));
                }
              }
            }
            arrow::Result<ScanInfo> info;
            {
              nb::gil_scoped_release release;
              info = BuildScan(std::move(request));
            }
            return PyPlan{Unwrap(LogicalPlan::Scan(Unwrap(std::move(info))))};
          },
          nb::arg("format"), nb::arg("paths"), nb::arg("sizes"), nb::arg("options"), nb::arg("schema").none(),
          nb::arg("hints").none(), nb::arg("partitions").none(), nb::arg("s3_options"))
      .def("project",
           [](const PyPlan& p, nb::list exprs) {
             return PyPlan{Unwrap(LogicalPlan::Project(p.plan, Exprs(exprs)))};
           })
      .def("filter",
           [](const PyPlan& p, nb::handle predicate) {
             return PyPlan{Unwrap(LogicalPlan::Filter(p.plan, nb::cast<PyExpr&>(predicate).expr))};
           })
      .def("limit", [](const PyPlan& p, int64_t n) { return PyPlan{Unwrap(LogicalPlan::Limit(p.plan, n))}; })
      .def("write_parquet",
           [](const PyPlan& p, std::string root_dir, std::string compression) {
             return PyPlan{Unwrap(LogicalPlan::WriteParquet(
                 p.plan, WriteParquetInfo{std::move(root_dir), std::move(compression)}))};
           })
      .def("sort",
           [](const PyPlan& p, nb::list keys, std::vector<bool> descending, std::vector<bool> nulls_first) {
             return PyPlan{Unwrap(LogicalPlan::Sort(p.plan, SortSpec{Exprs(keys), descending, nulls_first}))};
           })
      .def("aggregate",
           [](const PyPlan& p, std::vector<std::string> group_by, nb::list aggregations) {
             return PyPlan{
                 Unwrap(LogicalPlan::Aggregate(p.plan, AggregateSpec{group_by, Exprs(aggregations)}))};
           })
      .def("join",
           [](const PyPlan& p, const PyPlan& right, std::vector<std::string> left_on,
              std::vector<std::string> right_on, std::string how, std::string prefix, std::string suffix) {
             JoinSpec spec{std::move(left_on), std::move(right_on), Unwrap(ParseJoinType(how)),
                           std::move(prefix), std::move(suffix)};
             return PyPlan{Unwrap(LogicalPlan::Join(p.plan, right.plan, std::move(spec)))};
           })
      .def("explode",
           [](const PyPlan& p, std::vector<std::string> columns) {
             return PyPlan{Unwrap(LogicalPlan::Explode(p.plan, std::move(columns)))};
           })
      .def("concat",
           [](const PyPlan& p, const PyPlan& other) {
             return PyPlan{Unwrap(LogicalPlan::Concat(p.plan, other.plan))};
           })
      .def("sample",
           [](const PyPlan& p, double fraction, bool with_replacement, uint64_t seed) {
             return PyPlan{Unwrap(LogicalPlan::Sample(p.plan, SampleSpec{fraction, with_replacement, seed}))};
           })
      .def("schema", [](const PyPlan& p) { return SchemaToPy(p.plan->schema()); })
      .def(
          "optimize",
          [](const PyPlan& p, std::vector<std::string> disabled_rules,
             std::optional<ExecutionConfig> config) {
            const ExecutionConfig resolved = config.value_or(ExecutionConfig{}).Resolved();
            ScanTaskSizing sizing{resolved.scan_tasks_min_size_bytes, resolved.scan_tasks_max_size_bytes,
                                  resolved.num_compute_threads, resolved.max_sources_per_scan_task};
            Optimizer optimizer(std::set<std::string>(disabled_rules.begin(), disabled_rules.end()), 10,
                                sizing);
            arrow::Result<LogicalPlanPtr> optimized;
            {
              nb::gil_scoped_release release;  // materializing scan tasks reads Parquet footers
              optimized = optimizer.Optimize(p.plan);
            }
            return PyPlan{Unwrap(std::move(optimized))};
          },
          nb::arg("disabled_rules") = std::vector<std::string>{}, nb::arg("config") = nb::none())
      .def("__repr__", [](const PyPlan& p) { return p.plan->ToString(); })
      .def("physical_repr",
           [](const PyPlan& p, const ExecutionConfig& config) {
             return Unwrap(TranslateToPhysical(p.plan, config.Resolved()))->ToString();
           })
      .def(
          "execute",
          [](const PyPlan& p, const ExecutionConfig& config, ExecutionStats* stats) {
            // The query runs on a worker thread while this thread, every 100 ms, lets Python handle
            // signals: Ctrl-C cancels the query (partial writes are removed) and raises here.
            std::unique_ptr<ExecutionStats> own_stats;
            if (!stats) {
              own_stats = std::make_unique<ExecutionStats>();
              stats = own_stats.get();
            }
            arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> result;
            bool interrupted = false;
            {
              nb::gil_scoped_release release;
              std::promise<void> finished;
              auto done = finished.get_future();
              std::thread worker([&] {
                auto physical = TranslateToPhysical(p.plan, config.Resolved());
                result = physical.ok() ? ExecutePlan(*physical, config, stats) : physical.status();
                finished.set_value();
              });
              while (done.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
                nb::gil_scoped_acquire gil;
                if (!interrupted && PyErr_CheckSignals() != 0) {
                  interrupted = true;
                  stats->cancel_requested = true;
                  stats->stop_calls = true;
                }
              }
              worker.join();
            }
            if (interrupted) throw nb::python_error();
            return BatchesToPy(p.plan->schema(), Unwrap(std::move(result)));
          },
          nb::arg("config"), nb::arg("stats").none() = nb::none());
}

}  // namespace ketch::bindings
