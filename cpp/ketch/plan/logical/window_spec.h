#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>
#include <vector>

#include "ketch/expr/expr.h"

namespace ketch {

/// The frame of a window: which rows of its partition each row's aggregate sees.
struct WindowFrame {
  enum class Type {
    kDefault,  ///< no frame given: the whole partition, with or without order_by (Daft's rule)
    kRows,     ///< rows_between: offsets in rows from the current row
    kRange,    ///< range_between: offsets in values of the single order key from the current row's value
  };
  Type type = Type::kDefault;
  bool start_unbounded = true;  ///< unbounded preceding
  bool end_unbounded = true;    ///< unbounded following
  double start = 0;             ///< offset (negative = preceding) when bounded
  double end = 0;
  /// Range frames only: true when start/end are durations in microseconds (Python timedelta
  /// bounds) for a temporal order key, converted to the key's unit when frames are computed;
  /// false: offsets in the key's own values.
  bool microseconds = false;
};

/// The factor turning microseconds into values of the temporal `type` (timestamp / duration of any
/// unit, date32 days, date64 milliseconds); 0 for a type that is not temporal.
double MicrosecondsToTemporalUnits(const arrow::DataType& type);

/// The window of one or more window functions: partition keys, order keys (column names; the
/// planner projects computed keys into columns first), frame and min_periods.
struct WindowSpec {
  std::vector<std::string> partition_by;
  std::vector<std::string> order_by;
  std::vector<bool> descending;
  std::vector<bool> nulls_first;
  WindowFrame frame;
  int64_t min_periods = 1;

  bool Equals(const WindowSpec& other) const;
  /// "partition_by=[a], order_by=[b desc nulls last], frame=rows(-1, 1)"
  std::string ToString() const;
};

/// One window function of a Window node, resolved against the node's input schema.
struct WindowFunction {
  /// row_number, rank, dense_rank, lag, lead, first_value, last_value, or an aggregation
  /// (agg_sum, agg_mean, agg_min, agg_max, agg_count, agg_stddev, agg_count_distinct).
  std::string function;
  std::string input;          ///< the value column (empty for ranking functions)
  std::string default_input;  ///< lag/lead: the column holding the default (empty = null)
  std::string output;         ///< output column name
  int64_t offset = 0;         ///< lag/lead
  std::string count_mode = "valid";
  int ddof = 1;               ///< agg_stddev: divisor n - ddof (Daft's default 1); null where n <= ddof
  bool ignore_nulls = false;  ///< first_value / last_value: the frame's first / last non-null value
  std::shared_ptr<arrow::DataType> input_type;
  std::shared_ptr<arrow::DataType> output_type;
};

/// The name of the expression call that applies a window function over a window:
/// Call(kWindowCall, {function, partition keys..., order keys...}, options).
inline constexpr const char* kWindowCall = "window";

/// Builds the window call of `function` over the window given by its parts (the Python API's
/// `expr.over(window)`). `frame_type` is "default", "rows" or "range"; a null bound is unbounded.
ExprPtr MakeWindowCall(ExprPtr function, std::vector<ExprPtr> partition_by, std::vector<ExprPtr> order_by,
                       std::vector<bool> descending, std::vector<bool> nulls_first,
                       const std::string& frame_type, std::shared_ptr<arrow::Scalar> start,
                       std::shared_ptr<arrow::Scalar> end, int64_t min_periods);

/// Whether `expr` contains a window call anywhere.
bool ContainsWindowCall(const Expr& expr);

/// The parts of a window call (aliases stripped): its function, partition and order keys.
struct WindowCallParts {
  ExprPtr function;
  std::vector<ExprPtr> partition_by;
  std::vector<ExprPtr> order_by;
  WindowSpec spec;  ///< with partition_by/order_by left empty (the keys may be expressions)
};
arrow::Result<WindowCallParts> SplitWindowCall(const Expr& window_call);

/// Resolves one window function (`function` is the call inside the window, its arguments
/// columns) over `schema` for `spec`. ValueError (Invalid) names the function and the reason:
/// ranking, lag and lead without order_by, a range frame without exactly one numeric order key,
/// a frame whose start is after its end, min_periods < 1; TypeError for a value type the
/// aggregation does not take; NotImplemented for an aggregation windows do not support.
arrow::Result<WindowFunction> ResolveWindowFunction(const ExprPtr& function, const std::string& output,
                                                    const WindowSpec& spec, const arrow::Schema& schema);

/// Checks a spec's keys and frame against `schema` (see ResolveWindowFunction).
arrow::Status ValidateWindowSpec(const WindowSpec& spec, const arrow::Schema& schema);

}  // namespace ketch
