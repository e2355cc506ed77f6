// Logical plans, the optimizer and the executor, as seen from ketch/dataframe.py.

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "handles.h"
#include "interop.h"
#include "ketch/distributed/stage_planner.h"
#include "ketch/exec/executor.h"
#include "ketch/functions/url/url_functions.h"
#include "ketch/plan/logical/aggregate_expressions.h"
#include "ketch/plan/logical/aggregate_phases.h"
#include "ketch/plan/logical/logical_plan.h"
#include "ketch/plan/logical/plan_stats.h"
#include "ketch/plan/logical/scan_builder.h"
#include "ketch/plan/logical/window_plan.h"
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

// read_video_frames' options, as Python writes them: image_height, image_width (ints),
// is_key_frame ("true" | "false"), start_time, end_time, sample_interval_seconds (floats).
VideoScanOptions VideoOptions(const std::map<std::string, std::string>& options) {
  VideoScanOptions out;
  auto number = [&](const char* key) -> std::optional<double> {
    auto it = options.find(key);
    if (it == options.end()) return std::nullopt;
    return std::stod(it->second);
  };
  out.image_height = static_cast<int32_t>(number("image_height").value_or(0));
  out.image_width = static_cast<int32_t>(number("image_width").value_or(0));
  if (options.count("is_key_frame")) out.is_key_frame = Flag(options, "is_key_frame", false);
  out.start_time = number("start_time").value_or(0);
  out.end_time = number("end_time");
  out.sample_interval_seconds = number("sample_interval_seconds");
  return out;
}

std::vector<ExprPtr> Exprs(nb::handle list) {
  std::vector<ExprPtr> out;
  for (nb::handle item : list) out.push_back(nb::cast<PyExpr&>(item).expr);
  return out;
}

/// The output of a running query, handed from the executor to Python batch by batch. Bounded:
/// the query waits while `kCapacity` batches are unread (backpressure on a slow consumer).
class ResultQueue : public ResultConsumer {
 public:
  static constexpr size_t kCapacity = 16;

  arrow::Status Consume(int64_t partition, std::shared_ptr<arrow::RecordBatch> batch) override {
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [&] { return closed_ || items_.size() < kCapacity; });
    if (closed_) return arrow::Status::Cancelled("the result stream was closed");
    items_.emplace_back(partition, std::move(batch));
    ready_.notify_all();
    return arrow::Status::OK();
  }
  void Finish(arrow::Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    status_ = std::move(status);
    ready_.notify_all();
  }
  /// No more reading: a waiting or later Consume fails (the query stops).
  void Close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    items_.clear();
    space_.notify_all();
  }
  /// Waits up to `timeout` for batches or the end; takes what is there.
  bool Wait(std::chrono::milliseconds timeout,
            std::vector<std::pair<int64_t, std::shared_ptr<arrow::RecordBatch>>>* out, bool* finished,
            arrow::Status* status) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait_for(lock, timeout, [&] { return !items_.empty() || finished_; });
    while (!items_.empty()) {
      out->push_back(std::move(items_.front()));
      items_.pop_front();
    }
    space_.notify_all();
    *finished = finished_ && out->empty();
    if (*finished) *status = status_;
    return !out->empty() || *finished;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  std::deque<std::pair<int64_t, std::shared_ptr<arrow::RecordBatch>>> items_;
  bool finished_ = false;
  bool closed_ = false;
  arrow::Status status_;
};

/// A query running on a thread of its own while Python reads its output (DataFrame.iter_partitions,
/// iter_rows). Closing it (or dropping it) cancels the query and waits for it to stop.
struct PyResultStream {
  std::shared_ptr<arrow::Schema> schema;
  std::shared_ptr<ResultQueue> queue = std::make_shared<ResultQueue>();
  std::unique_ptr<ExecutionStats> own_stats;
  ExecutionStats* stats = nullptr;
  nb::object stats_ref;  // keeps a caller's ExecutionStats alive
  std::thread worker;

  ~PyResultStream() { Close(); }

  void Close() {
    if (!worker.joinable()) return;
    stats->cancel_requested = true;
    stats->stop_calls = true;
    queue->Close();
    if (PyGILState_Check()) {
      nb::gil_scoped_release release;  // the query's UDFs may need the GIL to stop
      worker.join();
    } else {
      worker.join();
    }
  }

  /// The next batches as (partition of each batch, pyarrow.RecordBatchReader), or None at the end.
  nb::object Next() {
    std::vector<std::pair<int64_t, std::shared_ptr<arrow::RecordBatch>>> items;
    bool finished = false;
    arrow::Status status;
    bool interrupted = false;
    {
      nb::gil_scoped_release release;
      while (!queue->Wait(std::chrono::milliseconds(100), &items, &finished, &status)) {
        nb::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
          interrupted = true;
          break;
        }
      }
    }
    if (interrupted) {
      Close();  // Ctrl-C: the query stops (partial writes are removed), then KeyboardInterrupt
      throw nb::python_error();
    }
    if (finished) {
      if (worker.joinable()) {
        nb::gil_scoped_release release;
        worker.join();
      }
      ThrowIfError(status);
      return nb::none();
    }
    std::vector<int64_t> partitions;
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    for (auto& [partition, batch] : items) {
      partitions.push_back(partition);
      batches.push_back(std::move(batch));
    }
    return nb::make_tuple(nb::cast(partitions), BatchesToPy(schema, std::move(batches)));
  }
};

// Slices `batches` into partitions of `partition_rows` rows each (zero-copy): the batches of a
// materialized result with their partition numbers (an empty partition: one empty batch).
std::pair<std::vector<std::shared_ptr<arrow::RecordBatch>>, std::vector<int64_t>> Partitioned(
    const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
    const std::vector<int64_t>& partition_rows) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  std::vector<int64_t> partitions;
  size_t b = 0;
  int64_t offset = 0;  // rows of batches[b] already assigned
  for (size_t p = 0; p < partition_rows.size(); ++p) {
    int64_t need = partition_rows[p];
    if (need == 0) {
      out.push_back(Unwrap(arrow::RecordBatch::MakeEmpty(schema)));
      partitions.push_back(static_cast<int64_t>(p));
      continue;
    }
    while (need > 0) {
      if (b >= batches.size()) throw nb::value_error("partition sizes add up to more rows than the data has");
      const int64_t available = batches[b]->num_rows() - offset;
      const int64_t take = std::min(available, need);
      if (take > 0) {
        out.push_back(batches[b]->Slice(offset, take));
        partitions.push_back(static_cast<int64_t>(p));
      }
      need -= take;
      offset += take;
      if (offset == batches[b]->num_rows()) {
        ++b;
        offset = 0;
      }
    }
  }
  return {std::move(out), std::move(partitions)};
}

// The plan as bytes (serde format; UDF runners cloudpickled inside). The bytes hold the scans' S3
// credentials: send them only to trusted workers.
nb::bytes PlanToBytes(const LogicalPlanPtr& plan) {
  arrow::Result<std::shared_ptr<arrow::Buffer>> bytes;
  {
    nb::gil_scoped_release release;  // UDF payloads take the GIL themselves
    bytes = serde::SerializePlan(plan, PyUdfPayloadWriter());
  }
  auto buffer = Unwrap(std::move(bytes));
  return nb::bytes(buffer->data(), static_cast<size_t>(buffer->size()));
}

LogicalPlanPtr PlanFromBytes(nb::bytes data) {
  // A view of the immutable bytes object: DeserializePlan copies what the plan keeps.
  arrow::Buffer view(static_cast<const uint8_t*>(data.data()), static_cast<int64_t>(data.size()));
  arrow::Result<LogicalPlanPtr> plan;
  {
    nb::gil_scoped_release release;
    plan = serde::DeserializePlan(view, PyUdfPayloadReader());
  }
  return Unwrap(std::move(plan));
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
                     d["frames_decoded"] = s.scan.frames_decoded.load();
                     d["packets_dropped"] = s.scan.packets_dropped.load();
                     return d;
                   })
      // Adds another execution's scan counters (a dict shaped like `scan`) to these: the Ray
      // runner merges its engine workers' scans into the driver's stats (explain_analyze).
      .def("add_scan",
           [](ExecutionStats& s, const nb::dict& d) {
             auto get = [&](const char* key) -> int64_t {
               return d.contains(key) ? nb::cast<int64_t>(d[key]) : 0;
             };
             s.scan.scan_tasks += get("scan_tasks");
             s.scan.files_read += get("files_read");
             s.scan.files_pruned += get("files_pruned");
             s.scan.row_groups_read += get("row_groups_read");
             s.scan.row_groups_pruned += get("row_groups_pruned");
             s.scan.bytes_read += get("bytes_read");
             s.scan.rows_read += get("rows_read");
             s.scan.frames_decoded += get("frames_decoded");
             s.scan.packets_dropped += get("packets_dropped");
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
      .def_static(
          "in_memory",
          [](nb::handle stream, std::optional<std::vector<int64_t>> partition_rows) {
            auto [schema, batches] = BatchesFromPy(stream);
            if (!partition_rows || partition_rows->size() <= 1) {
              return PyPlan{Unwrap(LogicalPlan::InMemory(schema, std::move(batches)))};
            }
            auto [parts, partitions] = Partitioned(schema, batches, *partition_rows);
            return PyPlan{Unwrap(LogicalPlan::InMemory(schema, std::move(parts), std::move(partitions)))};
          },
          nb::arg("stream"), nb::arg("partition_rows").none() = nb::none())
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
            } else if (format == "video") {
              request.format = FileFormat::kVideo;
              request.video = VideoOptions(options);
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
      .def_static(
          "scan_lance",
          [](const std::string& uri, int64_t version, std::vector<int64_t> fragment_ids,
             std::vector<int64_t> fragment_rows, std::vector<int64_t> fragment_bytes, nb::handle schema,
             std::map<std::string, std::string> storage_options,
             std::vector<std::tuple<std::string, std::string, std::string, std::string>> vector_indexes) {
            if (fragment_rows.size() != fragment_ids.size() || fragment_bytes.size() != fragment_ids.size()) {
              throw nb::value_error("scan_lance: one row count and size per fragment");
            }
            ScanInfo info;
            info.format = FileFormat::kLance;
            info.file_schema = SchemaFromPy(schema);
            info.partition_schema = arrow::schema(arrow::FieldVector{});
            info.lance.uri = uri;
            info.lance.version = version;
            info.lance.storage_options = std::move(storage_options);
            for (auto& [name, index_type, column, metric] : vector_indexes) {
              info.lance.vector_indexes.push_back({name, index_type, column, metric});
            }
            for (size_t i = 0; i < fragment_ids.size(); ++i) {
              ScanFile file;
              file.path = uri;
              file.fragment_id = fragment_ids[i];
              file.num_rows = fragment_rows[i];
              file.size_bytes = fragment_bytes[i];
              info.files.push_back(std::move(file));
            }
            return PyPlan{Unwrap(LogicalPlan::Scan(std::move(info)))};
          },
          nb::arg("uri"), nb::arg("version"), nb::arg("fragment_ids"), nb::arg("fragment_rows"),
          nb::arg("fragment_bytes"), nb::arg("schema"), nb::arg("storage_options"),
          nb::arg("vector_indexes") =
              std::vector<std::tuple<std::string, std::string, std::string, std::string>>{})
      .def("project",
           [](const PyPlan& p, nb::list exprs) {
             return PyPlan{Unwrap(ProjectWithWindows(p.plan, Exprs(exprs)))};  // window calls: window_plan.h
           })
      .def("filter",
           [](const PyPlan& p, nb::handle predicate) {
             return PyPlan{Unwrap(LogicalPlan::Filter(p.plan, nb::cast<PyExpr&>(predicate).expr))};
           })
      .def(
          "limit",
          [](const PyPlan& p, int64_t n, int64_t offset) {
            return PyPlan{Unwrap(LogicalPlan::Limit(p.plan, n, offset))};
          },
          nb::arg("n"), nb::arg("offset") = 0)
      // A write node: format "parquet" | "csv" | "json"; s3_options as for scans (s3_* keys).
      .def(
          "write",
          [](const PyPlan& p, std::string root_dir, const std::string& format, std::string compression,
             std::vector<std::string> partition_cols, std::map<std::string, std::string> s3_options) {
            WriteInfo info;
            info.root_dir = std::move(root_dir);
            if (format == "parquet") {
              info.format = FileFormat::kParquet;
            } else if (format == "csv") {
              info.format = FileFormat::kCsv;
            } else if (format == "json") {
              info.format = FileFormat::kJson;
            } else {
              throw nb::value_error(("unknown write format '" + format + "'").c_str());
            }
            info.compression = std::move(compression);
            info.partition_cols = std::move(partition_cols);
            FunctionOptions s3;
            for (const auto& [key, value] : s3_options)
              s3[key] = std::make_shared<arrow::StringScalar>(value);
            info.s3 = Unwrap(url::S3ConfigFromOptions(s3));
            return PyPlan{Unwrap(LogicalPlan::Write(p.plan, std::move(info)))};
          },
          nb::arg("root_dir"), nb::arg("format"), nb::arg("compression") = "snappy",
          nb::arg("partition_cols") = std::vector<std::string>{},
          nb::arg("s3_options") = std::map<std::string, std::string>{})
      .def("sort",
           [](const PyPlan& p, nb::list keys, std::vector<bool> descending, std::vector<bool> nulls_first) {
             return PyPlan{Unwrap(LogicalPlan::Sort(p.plan, SortSpec{Exprs(keys), descending, nulls_first}))};
           })
      .def("aggregate",
           [](const PyPlan& p, std::vector<std::string> group_by, nb::list aggregations) {
             return PyPlan{
                 Unwrap(LogicalPlan::Aggregate(p.plan, AggregateSpec{group_by, Exprs(aggregations)}))};
           })
      .def("aggregate_expressions",
           [](const PyPlan& p, nb::list keys, nb::list aggregations) {
             return PyPlan{Unwrap(AggregateExpressions(p.plan, Exprs(keys), Exprs(aggregations)))};
           })
      .def(
          "join",
          [](const PyPlan& p, const PyPlan& right, std::vector<std::string> left_on,
             std::vector<std::string> right_on, std::string how, std::string prefix, std::string suffix,
             std::string strategy) {
            JoinSpec spec{std::move(left_on), std::move(right_on), Unwrap(ParseJoinType(how)),
                          std::move(prefix),  std::move(suffix),   std::move(strategy)};
            return PyPlan{Unwrap(LogicalPlan::Join(p.plan, right.plan, std::move(spec)))};
          },
          nb::arg("right"), nb::arg("left_on"), nb::arg("right_on"), nb::arg("how"), nb::arg("prefix"),
          nb::arg("suffix"), nb::arg("strategy") = "")
      .def("explode",
           [](const PyPlan& p, std::vector<std::string> columns) {
             return PyPlan{Unwrap(LogicalPlan::Explode(p.plan, std::move(columns)))};
           })
      .def("concat",
           [](const PyPlan& p, const PyPlan& other) {
             return PyPlan{Unwrap(LogicalPlan::Concat(p.plan, other.plan))};
           })
      .def(
          "sample",
          [](const PyPlan& p, double fraction, bool with_replacement, uint64_t seed, int64_t size) {
            return PyPlan{
                Unwrap(LogicalPlan::Sample(p.plan, SampleSpec{fraction, with_replacement, seed, size}))};
          },
          nb::arg("fraction"), nb::arg("with_replacement"), nb::arg("seed"), nb::arg("size") = -1)
      .def("repartition",
           [](const PyPlan& p, int64_t num, std::vector<std::string> by) {
             return PyPlan{Unwrap(LogicalPlan::Repartition(p.plan, PartitionSpec{num, std::move(by), 0}))};
           })
      .def("into_partitions",
           [](const PyPlan& p, int64_t num) {
             return PyPlan{Unwrap(LogicalPlan::IntoPartitions(p.plan, num))};
           })
      .def("into_batches",
           [](const PyPlan& p, int64_t batch_size) {
             return PyPlan{Unwrap(LogicalPlan::IntoBatches(p.plan, batch_size))};
           })
      .def("check_depth",
           [](const PyPlan& p) {
             // Every DataFrame checks its plan: the recursive plan walks stay within the stack.
             const int32_t depth = p.plan->depth();
             if (depth > kMaxPlanDepth) {
               RaiseStatus(arrow::Status::Invalid(
                   "query plan nested too deeply: ", depth,
                   " operations in a chain is past Ketch's limit of ", kMaxPlanDepth,
                   " (combine steps: one with_columns({...}) instead of many with_column calls, "
                   "or materialize an intermediate result with collect())"));
             }
             return depth;
           })
      .def("monotonic_id",
           [](const PyPlan& p, std::string column) {
             return PyPlan{Unwrap(LogicalPlan::MonotonicId(p.plan, std::move(column)))};
           })
      // The Python runners of every UDF in the plan (each once), so a query can start their
      // process pools before data flows.
      .def("udf_runners",
           [](const PyPlan& p) {
             std::vector<const Expr*> udfs;
             std::function<void(const Expr&)> visit_expr = [&](const Expr& e) {
               if (e.kind() == ExprKind::kUdf) udfs.push_back(&e);
               for (const auto& child : e.children()) visit_expr(*child);
             };
             std::function<void(const LogicalPlan&)> visit = [&](const LogicalPlan& node) {
               for (const auto& e : node.exprs()) visit_expr(*e);
               if (node.predicate()) visit_expr(*node.predicate());
               for (const auto& input : node.inputs()) visit(*input);
             };
             visit(*p.plan);
             nb::list out;
             std::set<const BatchUdf*> seen;
             for (const Expr* e : udfs) {
               if (!seen.insert(e->udf().get()).second) continue;
               nb::object runner = UdfRunnerOf(*e);
               if (!runner.is_none()) out.append(runner);
             }
             return out;
           })
      .def(
          "partition_fragment",
          [](const PyPlan& p, int64_t partition, int64_t count) {
            return PyPlan{Unwrap(distributed::PartitionFragment(p.plan, partition, count))};
          },
          nb::arg("partition"), nb::arg("count") = 1)
      // The plan with in-memory sources below an expensive pipeline cut into 2 x workers
      // partitions (SplitInMemorySources): the Ray runner's view of the optimized plan.
      .def(
          "split_in_memory_sources",
          [](const PyPlan& p, int64_t workers) {
            return PyPlan{Unwrap(distributed::SplitInMemorySources(p.plan, workers))};
          },
          nb::arg("workers"))
      // [(first partition, count)] of the distributed tasks over the fragment's source
      // (SourceTaskRuns: the ranges of one split row group stay in one task).
      .def("source_task_runs", [](const PyPlan& p) { return distributed::SourceTaskRuns(*p.plan); })
      // Per key pair of a join, (left key, right key, the type they are compared in when their
      // types differ, else None); [] for a node that is not a keyed join (JoinKeyCasts).
      .def("join_key_casts",
           [](const PyPlan& p) {
             nb::list out;
             const auto casts = distributed::JoinKeyCasts(*p.plan);
             for (size_t i = 0; i < casts.size(); ++i) {
               out.append(nb::make_tuple(p.plan->join().left_on[i], p.plan->join().right_on[i],
                                         casts[i] ? TypeToPy(casts[i]) : nb::none()));
             }
             return out;
           })
      // Walking and rebuilding plans (the Ray runner's stage building).
      .def("kind", [](const PyPlan& p) { return distributed::LogicalKindName(p.plan->kind()); })
      .def("inputs",
           [](const PyPlan& p) {
             std::vector<PyPlan> out;
             for (const auto& input : p.plan->inputs()) out.push_back(PyPlan{input});
             return out;
           })
      .def("with_inputs",
           [](const PyPlan& p, const std::vector<PyPlan>& inputs) {
             std::vector<LogicalPlanPtr> plans;
             for (const auto& input : inputs) plans.push_back(input.plan);
             return PyPlan{Unwrap(p.plan->WithInputs(std::move(plans)))};
           })
      .def("is_partition_local",
           [](const PyPlan& p) {
             // sample(size=) is one reservoir over all partitions: not per partition.
             if (p.plan->kind() == LogicalKind::kSample && p.plan->sample().size >= 0) return false;
             return distributed::IsPartitionLocal(p.plan->kind());
           })
      // The parameters the Ray runner's stage planner needs of a node, as a dict: Limit
      // {"limit", "offset"}, Write {"root_dir", "format", "compression", "partition_cols"}, IntoPartitions
      // {"num_partitions"}, IntoBatches {"batch_size"}, Repartition {"num_partitions", "by"}; {} for other
      // kinds.
      .def("params",
           [](const PyPlan& p) {
             nb::dict out;
             const auto& node = *p.plan;
             switch (node.kind()) {
               case LogicalKind::kLimit:
                 out["limit"] = node.limit();
                 out["offset"] = node.offset();
                 break;
               case LogicalKind::kWrite:
                 out["root_dir"] = node.write().root_dir;
                 out["format"] = WriterName(node.write().format).substr(6);  // "parquet", "csv", "json"
                 out["compression"] = node.write().compression;
                 out["partition_cols"] = node.write().partition_cols;
                 break;
               case LogicalKind::kIntoPartitions:
                 out["num_partitions"] = node.partitioning().num_partitions;
                 break;
               case LogicalKind::kIntoBatches:
                 out["batch_size"] = node.partitioning().batch_size;
                 break;
               case LogicalKind::kRepartition:
                 out["num_partitions"] = node.partitioning().num_partitions;
                 out["by"] = node.partitioning().by;
                 break;
               default:
                 break;
             }
             return out;
           })
      .def("join_strategy",
           [](const PyPlan& p) -> nb::object {
             if (p.plan->kind() != LogicalKind::kJoin) return nb::none();
             return nb::cast(p.plan->join().strategy);
           })
      .def("join_type",
           [](const PyPlan& p) -> nb::object {
             if (p.plan->kind() != LogicalKind::kJoin) return nb::none();
             return nb::cast(JoinTypeName(p.plan->join().how));
           })
      // (key columns, descending, nulls_first) of a Sort node, or None (the distributed sort).
      .def("sort_spec",
           [](const PyPlan& p) -> nb::object {
             if (p.plan->kind() != LogicalKind::kSort) return nb::none();
             std::vector<std::string> columns;
             for (const auto& key : p.plan->sort().keys) columns.push_back(key->name());
             return nb::make_tuple(nb::cast(columns), nb::cast(p.plan->sort().descending),
                                   nb::cast(p.plan->sort().nulls_first));
           })
      // The row count of a Limit node, or None.
      .def("limit_count",
           [](const PyPlan& p) -> nb::object {
             if (p.plan->kind() != LogicalKind::kLimit) return nb::none();
             return nb::cast(p.plan->limit());
           })
      // The rows a Limit node's input must produce (offset + limit, saturated), or None.
      .def("limit_end",
           [](const PyPlan& p) -> nb::object {
             if (p.plan->kind() != LogicalKind::kLimit) return nb::none();
             return nb::cast(p.plan->limit_end());
           })
      // (hash keys per input, fixed bucket count or -1) of a hash exchange, or None (PlanHashExchange).
      .def("hash_exchange",
           [](const PyPlan& p) -> nb::object {
             auto exchange = distributed::PlanHashExchange(*p.plan);
             if (!exchange) return nb::none();
             return nb::make_tuple(nb::cast(exchange->keys), exchange->num_partitions);
           })
      // (partial, final) phases of a full Aggregate (final over an empty placeholder of the
      // partial-state schema), or None when it is not an aggregate or is single-phase.
      .def("split_aggregate",
           [](const PyPlan& p) -> nb::object {
             auto split = Unwrap(SplitAggregate(p.plan));
             if (!split) return nb::none();
             return nb::make_tuple(PyPlan{split->partial}, PyPlan{split->final});
           })
      // "full", "partial" or "final" for an Aggregate node, else None.
      .def("aggregate_phase",
           [](const PyPlan& p) -> nb::object {
             if (p.plan->kind() != LogicalKind::kAggregate) return nb::none();
             switch (p.plan->aggregate().phase) {
               case AggregatePhase::kPartial:
                 return nb::cast("partial");
               case AggregatePhase::kFinal:
                 return nb::cast("final");
               case AggregatePhase::kFull:
                 break;
             }
             return nb::cast("full");
           })
      // (count, exact) of an optimized plan (NumPartitions).
      .def("num_partitions",
           [](const PyPlan& p) {
             auto count = NumPartitions(*p.plan);
             return nb::make_tuple(count.count, count.exact);
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
      // The plan as bytes (ketch.distributed serde format; UDF runners cloudpickled inside). The
      // bytes hold the scans' S3 credentials: send them only to trusted workers.
      .def("to_bytes", [](const PyPlan& p) { return PlanToBytes(p.plan); })
      .def_static("from_bytes", [](nb::bytes data) { return PyPlan{PlanFromBytes(data)}; })
      // pickle (Ray sends plans by pickling them): the state is the serialized plan.
      .def("__getstate__", [](const PyPlan& p) { return PlanToBytes(p.plan); })
      .def("__setstate__", [](PyPlan& p, nb::bytes data) { new (&p) PyPlan{PlanFromBytes(data)}; })
      // The plan with a Stats line under each node (EstimateStats): for optimized plans.
      .def("repr_with_stats", [](const PyPlan& p) { return PlanToStringWithStats(*p.plan); })
      .def(
          "physical_repr",
          [](const PyPlan& p, const ExecutionConfig& config, bool with_stats) {
            return Unwrap(TranslateToPhysical(p.plan, config.Resolved()))->ToString(with_stats);
          },
          nb::arg("config"), nb::arg("with_stats") = false)
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
            std::vector<int64_t> partitions;
            bool interrupted = false;
            // Collects the output with its partitions (the batch of each).
            struct Collector : ResultConsumer {
              std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
              std::vector<int64_t>* partitions;
              arrow::Status Consume(int64_t partition, std::shared_ptr<arrow::RecordBatch> batch) override {
                batches.push_back(std::move(batch));
                partitions->push_back(partition);
                return arrow::Status::OK();
              }
            } collector;
            collector.partitions = &partitions;
            {
              nb::gil_scoped_release release;
              std::promise<void> finished;
              auto done = finished.get_future();
              std::thread worker([&] {
                auto physical = TranslateToPhysical(p.plan, config.Resolved());
                result =
                    physical.ok() ? ExecutePlanInto(*physical, config, stats, &collector) : physical.status();
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
            ThrowIfError(result.status());
            auto schema = p.plan->schema();
            return nb::make_tuple(nb::cast(partitions), BatchesToPy(schema, std::move(collector.batches)));
          },
          nb::arg("config"), nb::arg("stats").none() = nb::none())
      .def(
          "execute_stream",
          [](const PyPlan& p, const ExecutionConfig& config, nb::object stats) {
            auto stream = std::make_unique<PyResultStream>();
            stream->schema = p.plan->schema();
            if (stats.is_none()) {
              stream->own_stats = std::make_unique<ExecutionStats>();
              stream->stats = stream->own_stats.get();
            } else {
              stream->stats = nb::cast<ExecutionStats*>(stats);
              stream->stats_ref = stats;
            }
            auto queue = stream->queue;
            ExecutionStats* run_stats = stream->stats;
            LogicalPlanPtr plan = p.plan;
            stream->worker = std::thread([plan, config, run_stats, queue] {
              auto physical = TranslateToPhysical(plan, config.Resolved());
              auto result = physical.ok() ? ExecutePlanInto(*physical, config, run_stats, queue.get())
                                          : physical.status();
              queue->Finish(result.status());
            });
            return stream;
          },
          nb::arg("config"), nb::arg("stats").none() = nb::none());

  nb::class_<PyResultStream>(m, "ResultStream")
      .def("next", &PyResultStream::Next)
      .def("close", &PyResultStream::Close);
}

}  // namespace ketch::bindings
