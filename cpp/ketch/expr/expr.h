#pragma once

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ketch {

/// What one call of a BatchUdf may know besides its arguments.
struct UdfCall {
  /// Turns true once the query is cancelled (Ctrl-C, another operator failed): an implementation
  /// that waits on user code polls it and gives up the call (returns an error).
  const std::atomic<bool>* cancelled = nullptr;
  /// Generator UDFs: most items to take from each row's generator (-1: all). Set when a limit
  /// above the explode makes later items useless (`limit(5)` over an endless generator).
  int64_t max_items_per_row = -1;
};

/// A Python (or any foreign) function called on batches. The bindings implement it; the core only
/// calls it. `Call` receives one array per argument, all of length `num_rows`, and must return an
/// array of `num_rows` values of the declared return type (the implementation checks and casts).
class BatchUdf {
 public:
  virtual ~BatchUdf() = default;
  virtual std::string name() const = 0;
  virtual arrow::Result<std::shared_ptr<arrow::Array>> Call(
      const std::vector<std::shared_ptr<arrow::Array>>& args, int64_t num_rows, const UdfCall& call) = 0;
};

/// Scheduling properties of a UDF, as the user gave them (0 = not set).
struct UdfProperties {
  int64_t batch_size = 0;  ///< rows per call; 0 = the whole morsel
  /// Most rows per call when `batch_size` is not set (0 = the executor's default for UDFs): large
  /// for functions that take whole batches (Series), small for row-wise ones.
  int64_t default_batch_rows = 0;
  int32_t concurrency = 0;  ///< instances (class UDFs) / worker threads; 0 = run on the compute pool
  bool is_class = false;    ///< stateful: __init__ once per instance
  bool generator = false;   ///< yields any number of items per row (a list, exploded above)
  /// Generators: most items taken per row (-1: all); set by limit pushdown (UdfCall).
  int64_t max_items_per_row = -1;
  /// Prefix bucketing: the number of leading arguments whose values group rows. A morsel's rows are
  /// stably sorted by them before it is cut into calls of `batch_size` rows, so rows sharing a key
  /// (e.g. a prompt's system message and few-shot turns) reach the same call, where a model can
  /// reuse the key's work (a KV cache); outputs return in the morsel's order. 0 = no bucketing.
  int32_t bucket_key_args = 0;
  /// What explain shows beside batch_size and concurrency (async, use_process, num_cpus, num_gpus,
  /// memory_bytes, max_retries, on_error), as given by the Python decorator.
  std::map<std::string, std::string> display;
};

/// Constant options of a function call (e.g. {"mode": "RGB"}), kept as Arrow scalars so they print
/// and serialize uniformly.
using FunctionOptions = std::map<std::string, std::shared_ptr<arrow::Scalar>>;

enum class ExprKind { kColumn, kLiteral, kAlias, kCast, kCall, kUdf };

/// The deepest expression tree Ketch accepts (a column or literal has depth 1): the planner,
/// optimizer and kernels walk expressions recursively, and 30,000 levels overflowed an 8 MiB
/// thread stack. Building a deeper expression from Python raises KetchValueError (DuckDB has the
/// same kind of bound, its max_expression_depth of 1,000).
constexpr int32_t kMaxExprDepth = 5'000;

class Expr;
using ExprPtr = std::shared_ptr<const Expr>;

/// An immutable scalar expression tree: column references, literals, aliases, casts, calls of
/// registered functions (Arrow compute or Ketch kernels) and UDF calls.
class Expr {
 public:
  static ExprPtr Column(std::string name);
  static ExprPtr Literal(std::shared_ptr<arrow::Scalar> value);
  static ExprPtr Alias(ExprPtr input, std::string name);
  static ExprPtr Cast(ExprPtr input, std::shared_ptr<arrow::DataType> type);
  static ExprPtr Call(std::string function, std::vector<ExprPtr> args, FunctionOptions options = {});
  static ExprPtr Udf(std::shared_ptr<BatchUdf> udf, std::vector<ExprPtr> args,
                     std::shared_ptr<arrow::DataType> return_type, UdfProperties properties);

  ExprKind kind() const { return kind_; }
  /// Column name, alias name or function name, by kind.
  const std::string& name() const { return name_; }
  const std::vector<ExprPtr>& children() const { return children_; }
  /// Levels of the tree: 1 for a leaf, else 1 + the deepest child's.
  int32_t depth() const { return depth_; }
  const std::shared_ptr<arrow::Scalar>& literal() const { return literal_; }
  /// Target type of a cast, return type of a UDF.
  const std::shared_ptr<arrow::DataType>& type() const { return type_; }
  const FunctionOptions& options() const { return options_; }
  const std::shared_ptr<BatchUdf>& udf() const { return udf_; }
  const UdfProperties& udf_properties() const { return udf_properties_; }

  /// Daft-style rendering: col(a) + lit(1) as b.
  std::string ToString() const;
  /// The name of the column this expression produces (Daft's rule): the alias or column name,
  /// "literal" for a literal, else its first input's name (an if_else: its value when true).
  std::string OutputName() const;
  /// Adds every column name the expression reads.
  void CollectColumns(std::set<std::string>* out) const;
  bool HasUdf() const;
  /// A copy with children replaced (same kind and parameters).
  ExprPtr WithChildren(std::vector<ExprPtr> children) const;

 private:
  ExprKind kind_ = ExprKind::kColumn;
  std::string name_;
  std::vector<ExprPtr> children_;
  std::shared_ptr<arrow::Scalar> literal_;
  std::shared_ptr<arrow::DataType> type_;
  FunctionOptions options_;
  std::shared_ptr<BatchUdf> udf_;
  UdfProperties udf_properties_;
  int32_t depth_ = 1;
  void SetChildren(std::vector<ExprPtr> children);
};

/// Resolves the output field (name and type) of `expr` over `schema`, at plan time. Errors
/// (arrow::Status::TypeError / KeyError) name the column and type that do not fit.
arrow::Result<std::shared_ptr<arrow::Field>> ResolveField(const Expr& expr, const arrow::Schema& schema);

/// Evaluation context of one morsel: `row_offset` is the index of the morsel's first row in the
/// source, so kernels can name failing rows.
struct EvalContext {
  int64_t row_offset = 0;
  int64_t num_rows = 0;
  /// Source row of each morsel row once a filter dropped rows; nullptr while rows are contiguous
  /// from `row_offset`.
  std::shared_ptr<arrow::Int64Array> source_rows;
  /// Set while the query runs: turns true when the user cancels it (long I/O kernels poll it).
  const std::atomic<bool>* cancelled = nullptr;
  /// The query's memory budget in bytes while it runs (0: none known). Kernels whose output can
  /// dwarf their input (image decode) refuse a row that alone needs more than this.
  int64_t memory_budget_bytes = 0;
  /// The source row (0-based, across all files of the source in order) of morsel row `i`.
  int64_t SourceRow(int64_t i) const { return source_rows ? source_rows->Value(i) : row_offset + i; }
};

/// Evaluates `expr` over `batch`; always returns an array of batch.num_rows() values.
arrow::Result<std::shared_ptr<arrow::Array>> Evaluate(const Expr& expr, const arrow::RecordBatch& batch,
                                                      const EvalContext& ctx = {});

/// Returns the column `name` of the batch, or KeyError listing the available columns.
arrow::Result<std::shared_ptr<arrow::Array>> GetColumn(const arrow::RecordBatch& batch,
                                                       const std::string& name);

}  // namespace ketch
