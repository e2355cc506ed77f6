#include "ketch/exec/blocking/window_compute.h"

#include <arrow/compute/api.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>

#include "ketch/expr/key_storage.h"

namespace ketch {

namespace cp = arrow::compute;

namespace {

arrow::Result<std::shared_ptr<arrow::Array>> ColumnArray(const arrow::Table& table, const std::string& name) {
  auto column = table.GetColumnByName(name);
  if (!column) return arrow::Status::KeyError("window: column '", name, "' not found");
  if (column->num_chunks() == 1) return column->chunk(0);
  return arrow::Concatenate(column->chunks());
}

/// flags[i] |= row i's value differs from row i-1's (nulls equal each other).
arrow::Status MarkChanges(const std::shared_ptr<arrow::Array>& key_values, std::vector<uint8_t>* flags) {
  const auto values = StorageView(key_values);  // extension keys compare as their storage
  const int64_t n = values->length();
  if (n < 2) return arrow::Status::OK();
  auto current = values->Slice(1);
  auto previous = values->Slice(0, n - 1);
  ARROW_ASSIGN_OR_RAISE(auto ne_datum, cp::CallFunction("not_equal", {current, previous}));
  auto ne_array = ne_datum.make_array();
  const auto& ne = static_cast<const arrow::BooleanArray&>(*ne_array);
  for (int64_t j = 0; j < n - 1; ++j) {
    const bool differs = ne.IsValid(j) ? ne.Value(j) : current->IsNull(j) != previous->IsNull(j);
    if (differs) (*flags)[j + 1] = 1;
  }
  return arrow::Status::OK();
}

/// Row bounds of the sorted table: partition and peer group (equal order keys) of every row.
struct RowBounds {
  // Row positions as 32-bit ints: a window partition computed at once has < 2^31 rows (checked in
  // ComputeWindow), and these four arrays were most of the operator's memory (4M rows: 128 MB).
  std::vector<int32_t> part_start, part_end, peer_start, peer_end;
};

RowBounds ComputeBounds(const std::vector<uint8_t>& new_partition, const std::vector<uint8_t>& new_peer) {
  const int64_t n = static_cast<int64_t>(new_partition.size());
  RowBounds b;
  b.part_start.resize(n);
  b.part_end.resize(n);
  b.peer_start.resize(n);
  b.peer_end.resize(n);
  int64_t ps = 0, qs = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || new_partition[i]) ps = i;
    if (i == 0 || new_peer[i]) qs = i;
    b.part_start[i] = ps;
    b.peer_start[i] = qs;
  }
  int64_t pe = n, qe = n;
  for (int64_t i = n - 1; i >= 0; --i) {
    b.part_end[i] = pe;
    b.peer_end[i] = qe;
    if (new_partition[i]) pe = i;
    if (new_peer[i]) qe = i;
  }
  return b;
}

/// Frame [start, end) of every row (end >= start).
struct Frames {
  std::vector<int32_t> start, end;
};

arrow::Result<Frames> ComputeFrames(const WindowSpec& spec, const RowBounds& b, const arrow::Table& sorted) {
  const int64_t n = static_cast<int64_t>(b.part_start.size());
  Frames f;
  f.start.resize(n);
  f.end.resize(n);
  const WindowFrame& frame = spec.frame;
  if (frame.type == WindowFrame::Type::kDefault) {
    // Daft's frame-less window: the whole partition, with or without order_by (not SQL's
    // running frame; a running total asks for rows_between(unbounded_preceding, current_row)).
    for (int64_t i = 0; i < n; ++i) {
      f.start[i] = b.part_start[i];
      f.end[i] = b.part_end[i];
    }
    return f;
  }
  if (frame.type == WindowFrame::Type::kRows) {
    const auto s = static_cast<int64_t>(frame.start);
    const auto e = static_cast<int64_t>(frame.end);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ps = b.part_start[i], pe = b.part_end[i];
      f.start[i] = frame.start_unbounded ? ps : std::clamp(i + s, ps, pe);
      f.end[i] = frame.end_unbounded ? pe : std::clamp(i + e + 1, ps, pe);
      f.end[i] = std::max(f.end[i], f.start[i]);
    }
    return f;
  }
  // Range: offsets in values of the single order key (numeric, or temporal as its integer
  // storage with microsecond bounds scaled to the key's unit).
  ARROW_ASSIGN_OR_RAISE(auto key, ColumnArray(sorted, spec.order_by[0]));
  const double scale = frame.microseconds ? MicrosecondsToTemporalUnits(*key->type()) : 1.0;
  if (scale == 0)
    return arrow::Status::TypeError("range_between: timedelta bounds need a temporal order key");
  if (MicrosecondsToTemporalUnits(*key->type()) != 0) {
    ARROW_ASSIGN_OR_RAISE(
        auto storage,
        cp::Cast(key, key->type()->id() == arrow::Type::DATE32 ? arrow::int32() : arrow::int64()));
    key = storage.make_array();
  }
  const double start_offset = frame.start * scale, end_offset = frame.end * scale;
  ARROW_ASSIGN_OR_RAISE(auto as_double, cp::Cast(key, arrow::float64()));
  auto values_holder = as_double.make_array();
  const auto& values = static_cast<const arrow::DoubleArray&>(*values_holder);
  const bool desc = spec.descending[0];
  const bool nulls_first = spec.nulls_first[0];
  int64_t nn_s = 0, nn_e = 0, current_part = -1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ps = b.part_start[i], pe = b.part_end[i];
    if (ps != current_part) {  // the partition's non-null segment (nulls sit at one end)
      current_part = ps;
      int64_t nulls = 0;
      for (int64_t j = ps; j < pe; ++j) nulls += values.IsNull(j) ? 1 : 0;
      nn_s = nulls_first ? ps + nulls : ps;
      nn_e = nulls_first ? pe : pe - nulls;
    }
    if (values.IsNull(i)) {
      f.start[i] = frame.start_unbounded ? ps : b.peer_start[i];
      f.end[i] = frame.end_unbounded ? pe : b.peer_end[i];
      continue;
    }
    const double x = values.Value(i);
    auto first_where = [&](auto pred) {
      int64_t lo = nn_s, hi = nn_e;
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (pred(values.Value(mid))) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    };
    if (!desc) {
      f.start[i] = frame.start_unbounded ? ps : first_where([&](double y) { return y < x + start_offset; });
      f.end[i] = frame.end_unbounded ? pe : first_where([&](double y) { return y <= x + end_offset; });
    } else {
      // Daft's rule: the bounds are offsets in values, whatever the order: the frame holds the
      // values in [x + start, x + end], which a descending order lists from x + end down.
      f.start[i] = frame.start_unbounded ? ps : first_where([&](double y) { return y > x + end_offset; });
      f.end[i] = frame.end_unbounded ? pe : first_where([&](double y) { return y >= x + start_offset; });
    }
    f.end[i] = std::max(f.end[i], f.start[i]);
  }
  return f;
}

arrow::Result<std::shared_ptr<arrow::Array>> TakeIndices(const std::shared_ptr<arrow::Array>& values,
                                                         arrow::Int64Builder* indices) {
  ARROW_ASSIGN_OR_RAISE(auto idx, indices->Finish());
  ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(values, idx));
  return taken.make_array();
}

/// Positions of the smallest (or largest) value per frame with a monotonic deque: frames move
/// forward (start and end never decrease) except where a new partition begins, which resets it.
arrow::Result<std::shared_ptr<arrow::Array>> FrameExtreme(const std::shared_ptr<arrow::Array>& values,
                                                          const Frames& frames, bool want_max,
                                                          int64_t min_periods) {
  const int64_t n = values->length();
  // The rank of each value in sorted order stands in for the value (any type Arrow sorts).
  ARROW_ASSIGN_OR_RAISE(auto order_array, cp::SortIndices(*values, want_max ? cp::SortOrder::Descending
                                                                            : cp::SortOrder::Ascending));
  const auto& order = static_cast<const arrow::UInt64Array&>(*order_array);
  std::vector<int64_t> rank(n, -1);
  for (int64_t k = 0; k < n; ++k) {
    const auto row = static_cast<int64_t>(order.Value(k));
    if (values->IsValid(row)) rank[row] = k;
  }
  std::vector<int64_t> valid_prefix(n + 1, 0);
  for (int64_t i = 0; i < n; ++i) valid_prefix[i + 1] = valid_prefix[i] + (values->IsValid(i) ? 1 : 0);
  arrow::Int64Builder indices;
  ARROW_RETURN_NOT_OK(indices.Reserve(n));
  std::deque<int64_t> window;
  int64_t next = 0, last_start = -1, last_end = -1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t fs = frames.start[i], fe = frames.end[i];
    if (fs < last_start || fe < last_end || next < fs) {
      window.clear();
      next = fs;
    }
    last_start = fs;
    last_end = fe;
    for (; next < fe; ++next) {
      if (rank[next] < 0) continue;
      while (!window.empty() && rank[window.back()] >= rank[next]) window.pop_back();
      window.push_back(next);
    }
    while (!window.empty() && window.front() < fs) window.pop_front();
    if (window.empty() || valid_prefix[fe] - valid_prefix[fs] < min_periods) {
      indices.UnsafeAppendNull();
    } else {
      indices.UnsafeAppend(window.front());
    }
  }
  return TakeIndices(values, &indices);
}

// Frame sums come from prefix sums, restarted at every partition start (a frame never leaves its
// row's partition), so one partition's values never reach another's sums. Floats keep the finite
// values' prefix apart from prefix counts of NaN, +inf and -inf: a frame's sum is NaN when it holds
// a NaN or both infinities, +/-inf when it holds one kind, else the finite difference. (A NaN in a
// plain prefix sum would make every later difference NaN, also of frames without it.)
template <typename Accumulator>
struct FrameSummer {
  std::vector<Accumulator> prefix;             // prefix[i + 1]: sum over [partition start, i]
  std::vector<int32_t> nan, pos_inf, neg_inf;  // global prefix counts (floats only)
  const std::vector<int32_t>* part_start = nullptr;

  template <typename Value>
  void Build(int64_t n, const std::vector<int32_t>& starts, Value&& value_at, bool is_float) {
    part_start = &starts;
    prefix.assign(n + 1, 0);
    if (is_float) {
      nan.assign(n + 1, 0);
      pos_inf.assign(n + 1, 0);
      neg_inf.assign(n + 1, 0);
    }
    Accumulator running = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (i == starts[i]) running = 0;
      std::optional<Accumulator> x = value_at(i);
      if (is_float) {
        nan[i + 1] = nan[i];
        pos_inf[i + 1] = pos_inf[i];
        neg_inf[i + 1] = neg_inf[i];
        if (x && !std::isfinite(static_cast<double>(*x))) {
          const double d = static_cast<double>(*x);
          (std::isnan(d) ? nan : d > 0 ? pos_inf : neg_inf)[i + 1]++;
          x.reset();
        }
      }
      if (x) running += *x;
      prefix[i + 1] = running;
    }
  }

  /// Sum over the frame [fs, fe) of row `row` (fs, fe inside the row's partition).
  Accumulator Sum(int64_t row, int64_t fs, int64_t fe) const {
    if (fe <= fs) return 0;
    const Accumulator before = fs > (*part_start)[row] ? prefix[fs] : 0;
    Accumulator finite = prefix[fe] - before;
    if constexpr (std::is_floating_point_v<Accumulator>) {
      if (!nan.empty()) {
        const bool has_nan = nan[fe] - nan[fs] > 0;
        const bool has_pos = pos_inf[fe] - pos_inf[fs] > 0;
        const bool has_neg = neg_inf[fe] - neg_inf[fs] > 0;
        if (has_nan || (has_pos && has_neg)) return std::numeric_limits<Accumulator>::quiet_NaN();
        if (has_pos) return std::numeric_limits<Accumulator>::infinity();
        if (has_neg) return -std::numeric_limits<Accumulator>::infinity();
      }
    }
    return finite;
  }

  /// Whether the frame holds a NaN or an infinity (floats).
  bool NonFinite(int64_t fs, int64_t fe) const {
    return !nan.empty() && fe > fs &&
           (nan[fe] - nan[fs] + pos_inf[fe] - pos_inf[fs] + neg_inf[fe] - neg_inf[fs]) > 0;
  }
};

template <typename ArrowType, typename Accumulator>
arrow::Result<std::shared_ptr<arrow::Array>> FrameSums(const arrow::Array& array, const Frames& frames,
                                                       const std::vector<int32_t>& part_start,
                                                       const std::vector<int64_t>& valid_prefix,
                                                       int64_t min_periods) {
  using ArrayType = typename arrow::TypeTraits<ArrowType>::ArrayType;
  const auto& a = static_cast<const ArrayType&>(array);
  FrameSummer<Accumulator> summer;
  summer.Build(
      a.length(), part_start,
      [&a](int64_t i) -> std::optional<Accumulator> {
        if (!a.IsValid(i)) return std::nullopt;
        return static_cast<Accumulator>(a.Value(i));
      },
      std::is_floating_point_v<Accumulator>);
  typename arrow::TypeTraits<ArrowType>::BuilderType builder;
  const int64_t n = array.length();
  ARROW_RETURN_NOT_OK(builder.Reserve(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t fs = frames.start[i], fe = frames.end[i];
    if (valid_prefix[fe] - valid_prefix[fs] < min_periods) {
      builder.UnsafeAppendNull();
    } else {
      builder.UnsafeAppend(summer.Sum(i, fs, fe));
    }
  }
  std::shared_ptr<arrow::Array> out;
  ARROW_RETURN_NOT_OK(builder.Finish(&out));
  return out;
}

/// The number of distinct non-null values in each row's frame (uint64; null where the frame has
/// fewer than `min_periods` rows). Values are dictionary-encoded once; a count per code follows the
/// frame as it slides (frames of sorted rows only move forward; one that moves back restarts).
arrow::Result<std::shared_ptr<arrow::Array>> FrameDistinctCounts(const std::shared_ptr<arrow::Array>& values,
                                                                 const Frames& frames, int64_t min_periods) {
  const int64_t n = values->length();
  ARROW_ASSIGN_OR_RAISE(auto encoded, cp::DictionaryEncode(values));
  const auto encoded_array = encoded.make_array();
  const auto& dictionary = static_cast<const arrow::DictionaryArray&>(*encoded_array);
  ARROW_ASSIGN_OR_RAISE(auto indices_datum, cp::Cast(dictionary.indices(), arrow::int64()));
  const auto indices = std::static_pointer_cast<arrow::Int64Array>(indices_datum.make_array());
  std::vector<int64_t> counts(static_cast<size_t>(dictionary.dictionary()->length()), 0);
  int64_t distinct = 0, lo = 0, hi = 0;
  auto add = [&](int64_t row, int64_t delta) {
    if (indices->IsNull(row)) return;
    int64_t& c = counts[static_cast<size_t>(indices->Value(row))];
    if (delta > 0 && c++ == 0) ++distinct;
    if (delta < 0 && --c == 0) --distinct;
  };
  arrow::UInt64Builder builder;
  ARROW_RETURN_NOT_OK(builder.Reserve(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t fs = frames.start[i], fe = frames.end[i];
    if (fs < lo || fe < hi) {
      std::fill(counts.begin(), counts.end(), 0);
      distinct = 0;
      lo = hi = fs;
    }
    if (hi < lo) hi = lo;
    while (hi < fe) add(hi++, 1);
    while (lo < fs) add(lo++, -1);
    if (fe - fs < min_periods) {
      builder.UnsafeAppendNull();
    } else {
      builder.UnsafeAppend(static_cast<uint64_t>(distinct));
    }
  }
  std::shared_ptr<arrow::Array> out;
  ARROW_RETURN_NOT_OK(builder.Finish(&out));
  return out;
}

arrow::Result<std::shared_ptr<arrow::Array>> ComputeAggregate(const WindowFunction& fn,
                                                              const std::shared_ptr<arrow::Array>& values,
                                                              const Frames& frames,
                                                              const std::vector<int32_t>& part_start,
                                                              int64_t min_periods) {
  const int64_t n = values->length();
  const std::string& f = fn.function;
  if (f == "agg_min" || f == "agg_max") return FrameExtreme(values, frames, f == "agg_max", min_periods);
  std::vector<int64_t> valid_prefix(n + 1, 0);
  for (int64_t i = 0; i < n; ++i) valid_prefix[i + 1] = valid_prefix[i] + (values->IsValid(i) ? 1 : 0);
  if (f == "agg_count") {
    arrow::UInt64Builder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t rows = frames.end[i] - frames.start[i];
      const int64_t valid = valid_prefix[frames.end[i]] - valid_prefix[frames.start[i]];
      if (rows < min_periods) {
        builder.UnsafeAppendNull();
        continue;
      }
      const int64_t count = fn.count_mode == "all" ? rows : fn.count_mode == "null" ? rows - valid : valid;
      builder.UnsafeAppend(static_cast<uint64_t>(count));
    }
    std::shared_ptr<arrow::Array> out;
    ARROW_RETURN_NOT_OK(builder.Finish(&out));
    return out;
  }
  const int64_t periods = std::max<int64_t>(1, min_periods);
  if (f == "agg_sum") {
    ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(values, fn.output_type));
    auto array = cast.make_array();
    switch (fn.output_type->id()) {
      case arrow::Type::INT64:
        return FrameSums<arrow::Int64Type, int64_t>(*array, frames, part_start, valid_prefix, periods);
      case arrow::Type::UINT64:
        return FrameSums<arrow::UInt64Type, uint64_t>(*array, frames, part_start, valid_prefix, periods);
      default:
        return FrameSums<arrow::DoubleType, double>(*array, frames, part_start, valid_prefix, periods);
    }
  }
  // mean and stddev (divisor n - ddof) from prefix sums of values and squares, in float64, restarted
  // at each partition start; a frame holding a NaN or an infinity: its mean as its sum gives it
  // (NaN or +/-inf), its stddev NaN.
  ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(values, arrow::float64()));
  auto holder = cast.make_array();
  const auto& d = static_cast<const arrow::DoubleArray&>(*holder);
  FrameSummer<double> sum, squares;
  sum.Build(
      n, part_start,
      [&d](int64_t i) -> std::optional<double> {
        if (!d.IsValid(i)) return std::nullopt;
        return d.Value(i);
      },
      true);
  squares.Build(
      n, part_start,
      [&d](int64_t i) -> std::optional<double> {
        if (!d.IsValid(i) || !std::isfinite(d.Value(i))) return std::nullopt;
        return d.Value(i) * d.Value(i);
      },
      false);
  arrow::DoubleBuilder builder;
  ARROW_RETURN_NOT_OK(builder.Reserve(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t fs = frames.start[i], fe = frames.end[i];
    const auto count = static_cast<double>(valid_prefix[fe] - valid_prefix[fs]);
    if (valid_prefix[fe] - valid_prefix[fs] < periods) {
      builder.UnsafeAppendNull();
      continue;
    }
    const double total = sum.Sum(i, fs, fe);
    const double mean = total / count;
    if (f == "agg_mean") {
      builder.UnsafeAppend(mean);
    } else if (count <= fn.ddof) {
      builder.UnsafeAppendNull();
    } else if (sum.NonFinite(fs, fe)) {
      builder.UnsafeAppend(std::numeric_limits<double>::quiet_NaN());
    } else {
      const double m2 = std::max(0.0, squares.Sum(i, fs, fe) - count * mean * mean);
      builder.UnsafeAppend(std::sqrt(m2 / (count - fn.ddof)));
    }
  }
  std::shared_ptr<arrow::Array> out;
  ARROW_RETURN_NOT_OK(builder.Finish(&out));
  return out;
}

arrow::Result<std::shared_ptr<arrow::Array>> ComputeFunction(const WindowFunction& fn, const WindowSpec& spec,
                                                             const arrow::Table& sorted, const RowBounds& b,
                                                             const Frames* frames) {
  const int64_t n = static_cast<int64_t>(b.part_start.size());
  const std::string& f = fn.function;
  if (f == "row_number" || f == "rank" || f == "dense_rank") {
    arrow::UInt64Builder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(n));
    uint64_t dense = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (i == b.part_start[i]) dense = 0;
      if (i == b.peer_start[i]) ++dense;
      const int64_t value = f == "row_number" ? i - b.part_start[i] + 1
                            : f == "rank"     ? b.peer_start[i] - b.part_start[i] + 1
                                              : static_cast<int64_t>(dense);
      builder.UnsafeAppend(static_cast<uint64_t>(value));
    }
    std::shared_ptr<arrow::Array> out;
    ARROW_RETURN_NOT_OK(builder.Finish(&out));
    return out;
  }
  ARROW_ASSIGN_OR_RAISE(auto values, ColumnArray(sorted, fn.input));
  if (f == "lag" || f == "lead") {
    arrow::Int64Builder indices;
    arrow::BooleanBuilder in_range;
    ARROW_RETURN_NOT_OK(indices.Reserve(n));
    ARROW_RETURN_NOT_OK(in_range.Reserve(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = f == "lag" ? i - fn.offset : i + fn.offset;
      const bool inside = j >= b.part_start[i] && j < b.part_end[i];
      if (inside) {
        indices.UnsafeAppend(j);
      } else {
        indices.UnsafeAppendNull();
      }
      in_range.UnsafeAppend(inside);
    }
    ARROW_ASSIGN_OR_RAISE(auto taken, TakeIndices(values, &indices));
    if (fn.default_input.empty()) return taken;
    ARROW_ASSIGN_OR_RAISE(auto defaults, ColumnArray(sorted, fn.default_input));
    if (!defaults->type()->Equals(*fn.output_type)) {
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(defaults, fn.output_type));
      defaults = cast.make_array();
    }
    ARROW_ASSIGN_OR_RAISE(auto mask, in_range.Finish());
    ARROW_ASSIGN_OR_RAISE(auto chosen, cp::CallFunction("if_else", {mask, taken, defaults}));
    return chosen.make_array();
  }
  if (f == "first_value" || f == "last_value") {
    // ignore_nulls: the first valid row at or after the frame's start (the last at or before its
    // end), from one pass each way.
    std::vector<int64_t> next_valid, prev_valid;
    if (fn.ignore_nulls) {
      next_valid.assign(n + 1, n);
      prev_valid.assign(n, -1);
      for (int64_t i = n - 1; i >= 0; --i) next_valid[i] = values->IsValid(i) ? i : next_valid[i + 1];
      for (int64_t i = 0; i < n; ++i)
        prev_valid[i] = values->IsValid(i) ? i : (i > 0 ? prev_valid[i - 1] : -1);
    }
    arrow::Int64Builder indices;
    ARROW_RETURN_NOT_OK(indices.Reserve(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t fs = frames->start[i], fe = frames->end[i];
      if (fe - fs < std::max<int64_t>(1, spec.min_periods)) {
        indices.UnsafeAppendNull();
        continue;
      }
      int64_t at = f == "first_value" ? fs : fe - 1;
      if (fn.ignore_nulls) at = f == "first_value" ? next_valid[fs] : prev_valid[fe - 1];
      if (at < fs || at >= fe) {
        indices.UnsafeAppendNull();
      } else {
        indices.UnsafeAppend(at);
      }
    }
    return TakeIndices(values, &indices);
  }
  if (f == "agg_count_distinct") return FrameDistinctCounts(values, *frames, spec.min_periods);
  return ComputeAggregate(fn, values, *frames, b.part_start, spec.min_periods);
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Table>> ComputeWindow(
    const WindowSpec& spec, const std::vector<WindowFunction>& functions, std::shared_ptr<arrow::Table> input,
    const std::shared_ptr<arrow::Schema>& output_schema) {
  // Takes `input` by value: once sorted, the unsorted rows are released (the caller moves it in).
  if (input->num_rows() == 0) return arrow::Table::MakeEmpty(output_schema);
  std::vector<cp::SortKey> keys;
  for (const auto& k : spec.partition_by) keys.emplace_back(arrow::FieldRef(k), cp::SortOrder::Ascending);
  for (size_t i = 0; i < spec.order_by.size(); ++i) {
    keys.emplace_back(arrow::FieldRef(spec.order_by[i]),
                      spec.descending[i] ? cp::SortOrder::Descending : cp::SortOrder::Ascending,
                      spec.nulls_first[i] ? cp::NullPlacement::AtStart : cp::NullPlacement::AtEnd);
  }
  std::shared_ptr<arrow::Table> sorted = input;
  if (!keys.empty()) {
    // Extension keys (UUIDs) sort as their storage; the rows taken keep their types.
    std::vector<std::string> key_names = spec.partition_by;
    key_names.insert(key_names.end(), spec.order_by.begin(), spec.order_by.end());
    ARROW_ASSIGN_OR_RAISE(auto viewed, WithStorageColumns(input, key_names));
    ARROW_ASSIGN_OR_RAISE(auto indices, cp::SortIndices(arrow::Datum(viewed), cp::SortOptions(keys)));
    viewed.reset();
    ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(arrow::Datum(input), arrow::Datum(indices)));
    sorted = taken.table();
    input.reset();
  }
  ARROW_ASSIGN_OR_RAISE(sorted, sorted->CombineChunks());
  const int64_t n = sorted->num_rows();
  if (n > std::numeric_limits<int32_t>::max()) {
    return arrow::Status::CapacityError("window: ", n, " rows in one computation; at most 2^31 - 1");
  }
  std::vector<uint8_t> new_partition(n, 0);
  new_partition[0] = 1;
  for (const auto& k : spec.partition_by) {
    ARROW_ASSIGN_OR_RAISE(auto column, ColumnArray(*sorted, k));
    ARROW_RETURN_NOT_OK(MarkChanges(column, &new_partition));
  }
  std::vector<uint8_t> new_peer = new_partition;
  for (const auto& k : spec.order_by) {
    ARROW_ASSIGN_OR_RAISE(auto column, ColumnArray(*sorted, k));
    ARROW_RETURN_NOT_OK(MarkChanges(column, &new_peer));
  }
  const RowBounds bounds = ComputeBounds(new_partition, new_peer);
  std::optional<Frames> frames;
  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns = sorted->columns();
  for (const auto& fn : functions) {
    const bool framed =
        fn.function.rfind("agg_", 0) == 0 || fn.function == "first_value" || fn.function == "last_value";
    if (framed && !frames) {
      ARROW_ASSIGN_OR_RAISE(auto computed, ComputeFrames(spec, bounds, *sorted));
      frames = std::move(computed);
    }
    ARROW_ASSIGN_OR_RAISE(auto out, ComputeFunction(fn, spec, *sorted, bounds, frames ? &*frames : nullptr));
    columns.push_back(std::make_shared<arrow::ChunkedArray>(out));
  }
  return arrow::Table::Make(output_schema, std::move(columns), n);
}

}  // namespace ketch
