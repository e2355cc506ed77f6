#pragma once

#include <arrow/api.h>

#include <atomic>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ketch/expr/expr.h"
#include "ketch/plan/logical/scan_info.h"
#include "ketch/plan/logical/window_spec.h"

namespace ketch {

enum class LogicalKind {
  kInMemorySource,
  kScan,  ///< Parquet, CSV or JSON files
  kProject,
  kFilter,
  kLimit,
  kWrite,
  kSort,
  kAggregate,
  kJoin,
  kExplode,
  kConcat,
  kSample,
  kRepartition,     ///< hash (by columns) or random partitioning into N partitions
  kIntoPartitions,  ///< split or coalesce adjacent partitions, order kept
  kIntoBatches,     ///< batches (and partitions) of exactly batch_size rows, order kept
  kWindow,          ///< window functions over partitions of rows (window_plan.h)
  kMonotonicId,     ///< appends monotonically_increasing_id() (uint64) in stream order
};

/// Sort keys with a direction and a null placement each.
struct SortSpec {
  std::vector<ExprPtr> keys;
  std::vector<bool> descending;
  std::vector<bool> nulls_first;
};

/// Group-by keys and aggregations. Each aggregation is a call of an aggregate function
/// (agg_sum, agg_mean, agg_min, agg_max, agg_count, agg_stddev, agg_any_value, agg_list,
/// agg_concat, agg_approx_count_distinct), possibly aliased, over a column. No aggregations and
/// every column as a key is `distinct`.
/// Which part of a two-phase aggregation a node runs (see aggregate_phases.h).
enum class AggregatePhase {
  kFull,     ///< input rows -> aggregated rows (the only phase the API builds)
  kPartial,  ///< input rows -> one row of merged partial states per group (PartialAggregateSchema)
  kFinal,    ///< partial states (of any number of partial nodes) -> aggregated rows
};

struct AggregateSpec {
  std::vector<std::string> group_by;
  std::vector<ExprPtr> aggregations;
  AggregatePhase phase = AggregatePhase::kFull;
  /// kFinal only: the schema of the rows the partial phase read, which the aggregations resolve
  /// against (their input columns and types); null for the other phases.
  std::shared_ptr<arrow::Schema> source_schema;
};

enum class JoinType { kInner, kLeft, kRight, kOuter, kSemi, kAnti, kCross };
arrow::Result<JoinType> ParseJoinType(const std::string& how);
std::string JoinTypeName(JoinType type);

/// Equi-join on column pairs. Right columns whose names clash with left ones are renamed
/// prefix + name + suffix (Daft's default prefix "right."); right key columns named like their
/// left key are merged into the left one. A cross join (`kCross`) has no keys.
struct JoinSpec {
  std::vector<std::string> left_on;
  std::vector<std::string> right_on;
  JoinType how = JoinType::kInner;
  std::string prefix = "right.";
  std::string suffix;
  /// Daft's join strategy: "" (chosen by the engine), "hash", "sort_merge" or "broadcast". The
  /// native runner always hash-joins; the Ray runner broadcasts the right side for "broadcast"
  /// and shuffles both sides for "hash" and "sort_merge".
  std::string strategy;
};

/// Checks a join strategy name ("" = automatic) against the join type, with Daft's messages.
arrow::Status ValidateJoinStrategy(const std::string& strategy, JoinType how);

/// The type two join key columns are compared (and a merged key column output) in: nullptr when
/// they are equal; large_string for two string types; uint64 for two unsigned integers; int64 for
/// other integer pairs.
std::shared_ptr<arrow::DataType> JoinKeyCast(const arrow::DataType& left, const arrow::DataType& right);

struct SampleSpec {
  double fraction = 1.0;
  bool with_replacement = false;
  uint64_t seed = 0;
  /// `sample(size=k)`: exactly k rows of the whole input (a blocking sink, SampleSizeSink);
  /// -1: a Bernoulli sample of `fraction` per morsel (streaming).
  int64_t size = -1;
};

/// The deepest plan Ketch accepts (nodes on the longest path from the root to a source): the
/// optimizer and executor walk plans recursively, and 5,000 chained `with_column`s overflowed an
/// 8 MiB stack. DataFrame operations past it raise KetchValueError (combine steps instead:
/// one `with_columns({...})` rather than thousands of `with_column` calls).
constexpr int32_t kMaxPlanDepth = 2'000;

/// The most partitions repartition / into_partitions accept: each partition costs about 3 KB and
/// 35 µs even when empty (1,000,000 empty partitions of 100 rows took 35 s and 2.7 GB).
constexpr int64_t kMaxPartitions = 100'000;

/// The largest `sample(size=)` the engine accepts (rows).
constexpr int64_t kMaxSampleSizeRows = int64_t{1} << 31;

/// Parameters of repartition / into_partitions / into_batches.
struct PartitionSpec {
  /// Output partitions; -1 = as many as the input has (repartition(None)).
  int64_t num_partitions = -1;
  /// Hash-partitioning keys (columns); empty = random partitioning (repartition).
  std::vector<std::string> by;
  /// Rows per batch (into_batches).
  int64_t batch_size = 0;
};

/// Where and how write_parquet / write_csv / write_json write.
struct WriteInfo {
  /// A local directory or an s3:// URL.
  std::string root_dir;
  FileFormat format = FileFormat::kParquet;
  /// Parquet only: snappy, zstd, gzip, lz4, brotli or none.
  std::string compression = "snappy";
  /// Hive partitioning: rows go to root_dir/<col>=<value>/..., these columns are left out of the
  /// files and returned beside each path.
  std::vector<std::string> partition_cols;
  /// Connection settings when root_dir is an s3:// URL.
  io::S3Config s3;
};

/// "write_parquet", "write_csv" or "write_json": what write errors start with.
std::string WriterName(FileFormat format);

class LogicalPlan;
using LogicalPlanPtr = std::shared_ptr<const LogicalPlan>;

/// An immutable logical plan node. Factories validate at plan time (unknown columns, wrong types,
/// non-boolean predicates) so errors surface before any data is read, and derive the output schema.
class LogicalPlan {
 public:
  /// `partitions`: the partition of each batch (non-decreasing; an empty batch stands for an
  /// empty partition); empty = every batch in partition 0. `first_row`: the source row number of
  /// its first row (a Ray task's piece of a larger in-memory source, so errors and row-seeded
  /// functions name the rows of the whole source); invalid when negative.
  static arrow::Result<LogicalPlanPtr> InMemory(std::shared_ptr<arrow::Schema> schema,
                                                std::vector<std::shared_ptr<arrow::RecordBatch>> batches,
                                                std::vector<int64_t> partitions = {}, int64_t first_row = 0);
  static arrow::Result<LogicalPlanPtr> Scan(ScanInfo info);
  static arrow::Result<LogicalPlanPtr> Project(LogicalPlanPtr input, std::vector<ExprPtr> exprs);
  static arrow::Result<LogicalPlanPtr> Filter(LogicalPlanPtr input, ExprPtr predicate);
  /// The rows [offset, offset + limit) of the input, in order (DataFrame.limit / DataFrame.offset;
  /// `offset(n)` alone is a limit of kNoLimit). Invalid for a negative limit or offset.
  static arrow::Result<LogicalPlanPtr> Limit(LogicalPlanPtr input, int64_t limit, int64_t offset = 0);
  /// The limit of a Limit node that only skips rows (DataFrame.offset).
  static constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
  /// Writes the input into files (WriteInfo); the output has one row per written file: "path"
  /// (utf8), the partition columns (their input types) and "num_rows" (int64, the file's rows).
  /// Invalid for an unknown compression, a partition column that is missing or not a
  /// scalar (lists, structs, binary, tensors), or partitioning by every column.
  static arrow::Result<LogicalPlanPtr> Write(LogicalPlanPtr input, WriteInfo info);
  static arrow::Result<LogicalPlanPtr> Sort(LogicalPlanPtr input, SortSpec spec);
  static arrow::Result<LogicalPlanPtr> Aggregate(LogicalPlanPtr input, AggregateSpec spec);
  static arrow::Result<LogicalPlanPtr> Join(LogicalPlanPtr left, LogicalPlanPtr right, JoinSpec spec);
  static arrow::Result<LogicalPlanPtr> Explode(LogicalPlanPtr input, std::vector<std::string> columns);
  static arrow::Result<LogicalPlanPtr> Concat(LogicalPlanPtr first, LogicalPlanPtr second);
  static arrow::Result<LogicalPlanPtr> Sample(LogicalPlanPtr input, SampleSpec spec);
  /// Hash partitioning by `spec.by` (rows with equal keys, nulls included, share a partition), or
  /// random partitioning when `by` is empty, into `spec.num_partitions` partitions (-1: the
  /// input's count). Invalid for a count below 1 other than -1; KeyError for an unknown column;
  /// TypeError for a column that cannot be hashed (images, tensors, lists, Python objects).
  static arrow::Result<LogicalPlanPtr> Repartition(LogicalPlanPtr input, PartitionSpec spec);
  /// Splits or coalesces adjacent partitions into exactly `num_partitions` (>= 1), order kept.
  static arrow::Result<LogicalPlanPtr> IntoPartitions(LogicalPlanPtr input, int64_t num_partitions);
  /// Batches of exactly `batch_size` (>= 1) rows, the stream's last one shorter; each batch a partition.
  static arrow::Result<LogicalPlanPtr> IntoBatches(LogicalPlanPtr input, int64_t batch_size);
  /// Appends the column `column` (uint64, not null) numbering the input's rows 0, 1, 2, ... in
  /// stream order (Daft's `monotonically_increasing_id()` on its native runner: consecutive over
  /// all partitions). Invalid when the input already has a column of that name.
  static arrow::Result<LogicalPlanPtr> MonotonicId(LogicalPlanPtr input, std::string column);

  /// Window functions sharing one window (defined in window_plan.cc): `window_exprs` are aliased
  /// window calls (MakeWindowCall) whose function arguments, partition and order keys are columns.
  /// The output is every input column then one column per window expression. Errors: see
  /// ResolveWindowFunction; Invalid when the expressions do not share one window.
  static arrow::Result<LogicalPlanPtr> Window(LogicalPlanPtr input, std::vector<ExprPtr> window_exprs);

  /// The same node over new inputs (schema re-derived and re-validated).
  arrow::Result<LogicalPlanPtr> WithInputs(std::vector<LogicalPlanPtr> inputs) const;

  LogicalKind kind() const { return kind_; }
  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }
  const std::vector<LogicalPlanPtr>& inputs() const { return inputs_; }
  /// Nodes on the longest path from this node down to a source (1 for a source). Memoized: each
  /// node's inputs are built (and usually asked) before it, so the walk is short.
  int32_t depth() const;
  const std::vector<ExprPtr>& exprs() const { return exprs_; }
  const ExprPtr& predicate() const { return predicate_; }
  int64_t limit() const { return limit_; }
  /// Limit nodes: rows skipped before the limit's rows (0 for a plain limit).
  int64_t offset() const { return offset_; }
  /// Limit nodes: offset + limit, saturated at kNoLimit (rows the input must produce).
  int64_t limit_end() const;
  const ScanInfo& scan() const { return scan_; }
  const WriteInfo& write() const { return write_; }
  const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches() const { return batches_; }
  const SortSpec& sort() const { return sort_; }
  const AggregateSpec& aggregate() const { return aggregate_; }
  const JoinSpec& join() const { return join_; }
  const std::vector<std::string>& explode_columns() const { return explode_columns_; }
  const SampleSpec& sample() const { return sample_; }
  const PartitionSpec& partitioning() const { return partitioning_; }
  /// MonotonicId nodes: the name of the id column.
  const std::string& id_column() const { return id_column_; }
  /// Window nodes: the shared window and the resolved functions (one per expr, in order).
  const WindowSpec& window_spec() const { return window_spec_; }
  const std::vector<WindowFunction>& window_functions() const { return window_functions_; }
  /// In-memory sources: the partition of each batch (empty: all in partition 0).
  const std::vector<int64_t>& batch_partitions() const { return batch_partitions_; }
  int64_t first_row() const { return first_row_; }

  /// One line naming the node, e.g. "Filter: (col(a) > lit(1))".
  std::string Label() const;
  /// "key = value" details shown under the label (scan pushdowns, write target).
  std::vector<std::string> Details() const;
  /// The whole tree in Daft's explain style ("* Node" / "|   Key = value").
  std::string ToString() const;

 private:
  LogicalKind kind_ = LogicalKind::kInMemorySource;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<LogicalPlanPtr> inputs_;
  std::vector<ExprPtr> exprs_;
  ExprPtr predicate_;
  int64_t limit_ = 0;
  int64_t offset_ = 0;
  ScanInfo scan_;
  WriteInfo write_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  SortSpec sort_;
  AggregateSpec aggregate_;
  JoinSpec join_;
  std::vector<std::string> explode_columns_;
  SampleSpec sample_;
  PartitionSpec partitioning_;
  std::vector<int64_t> batch_partitions_;
  int64_t first_row_ = 0;
  WindowSpec window_spec_;
  std::vector<WindowFunction> window_functions_;
  std::string id_column_;
  mutable std::atomic<int32_t> depth_{0};  ///< 0: not computed yet
};

/// The number of partitions a plan produces on the native runner, and whether it is exact: an
/// in-memory source has its own; a scan one per scan task (once the optimizer made them; else one
/// per file, an estimate); project, filter, explode and sample keep their input's; limit, sort,
/// aggregate and join give one; concat the sum; repartition and into_partitions theirs;
/// into_batches one per batch (estimated from EstimateRows-like row counts when not exact).
struct PartitionCount {
  int64_t count = 1;
  bool exact = true;
};
PartitionCount NumPartitions(const LogicalPlan& plan);

/// The aggregate function of an aggregation expression (alias stripped) and its output field.
struct AggregationInfo {
  std::string function;  ///< e.g. "agg_sum"
  std::string input;     ///< the input column
  std::string output;    ///< output column name
  std::shared_ptr<arrow::DataType> input_type;
  std::shared_ptr<arrow::DataType> output_type;
  FunctionOptions options;
};
arrow::Result<AggregationInfo> ResolveAggregation(const ExprPtr& expr, const arrow::Schema& schema);

/// Renders one plan node and its rendered inputs in Daft's explain style ("* Label",
/// "|   Key = value", "|" between a node and its single input; multi-input nodes indent each input
/// under "|--- input i:"). Shared by the logical and physical plans.
std::string RenderPlanNode(const std::string& label, const std::vector<std::string>& details,
                           const std::vector<std::string>& inputs);

}  // namespace ketch
