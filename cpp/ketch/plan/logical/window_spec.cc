#include "ketch/plan/logical/window_spec.h"

#include <sstream>

#include "ketch/expr/key_storage.h"
#include "ketch/plan/logical/logical_plan.h"
#include "ketch/plan/logical/more_aggregations.h"

namespace ketch {

namespace {

std::string Flags(const std::vector<bool>& flags) {
  std::string out;
  for (bool f : flags) out.push_back(f ? '1' : '0');
  return out;
}

std::vector<bool> ParseFlags(const std::string& text) {
  std::vector<bool> out;
  for (char c : text) out.push_back(c == '1');
  return out;
}

arrow::Result<std::string> StringOption(const FunctionOptions& options, const std::string& key) {
  auto it = options.find(key);
  if (it == options.end() || !it->second || !it->second->is_valid) {
    return arrow::Status::Invalid("window call: missing option '", key, "'");
  }
  if (auto s = std::dynamic_pointer_cast<arrow::BaseBinaryScalar>(it->second)) return s->ToString();
  return it->second->ToString();
}

arrow::Result<int64_t> IntOption(const FunctionOptions& options, const std::string& key) {
  auto it = options.find(key);
  if (it == options.end() || !it->second || !it->second->is_valid) {
    return arrow::Status::Invalid("window call: missing option '", key, "'");
  }
  ARROW_ASSIGN_OR_RAISE(auto cast, it->second->CastTo(arrow::int64()));
  return static_cast<const arrow::Int64Scalar&>(*cast).value;
}

/// A bound: nullopt when unbounded (a null scalar or absent).
arrow::Result<std::optional<double>> BoundOption(const FunctionOptions& options, const std::string& key) {
  auto it = options.find(key);
  if (it == options.end() || !it->second || !it->second->is_valid) return std::nullopt;
  ARROW_ASSIGN_OR_RAISE(auto cast, it->second->CastTo(arrow::float64()));
  return static_cast<const arrow::DoubleScalar&>(*cast).value;
}

double UnitPerMicrosecond(arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND:
      return 1e-6;
    case arrow::TimeUnit::MILLI:
      return 1e-3;
    case arrow::TimeUnit::MICRO:
      return 1;
    case arrow::TimeUnit::NANO:
      return 1e3;
  }
  return 1;
}

bool IsNumericType(const arrow::DataType& type) {
  return arrow::is_integer(type.id()) || arrow::is_floating(type.id());
}

std::string Number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string BoundText(bool unbounded, double value, bool start) {
  if (unbounded) return start ? "unbounded preceding" : "unbounded following";
  if (value == 0) return "current row";
  std::ostringstream out;
  out << value;
  return out.str();
}

const Expr& StripAlias(const Expr& expr) {
  const Expr* e = &expr;
  while (e->kind() == ExprKind::kAlias) e = e->children()[0].get();
  return *e;
}

}  // namespace

bool WindowSpec::Equals(const WindowSpec& other) const {
  return partition_by == other.partition_by && order_by == other.order_by && descending == other.descending &&
         nulls_first == other.nulls_first && frame.type == other.frame.type &&
         frame.start_unbounded == other.frame.start_unbounded &&
         frame.end_unbounded == other.frame.end_unbounded && frame.start == other.frame.start &&
         frame.microseconds == other.frame.microseconds && frame.end == other.frame.end &&
         min_periods == other.min_periods;
}

std::string WindowSpec::ToString() const {
  std::ostringstream out;
  out << "partition_by=[";
  for (size_t i = 0; i < partition_by.size(); ++i) out << (i ? ", " : "") << partition_by[i];
  out << "], order_by=[";
  for (size_t i = 0; i < order_by.size(); ++i) {
    out << (i ? ", " : "") << order_by[i] << (descending[i] ? " desc" : " asc")
        << (nulls_first[i] ? " nulls first" : " nulls last");
  }
  out << "]";
  if (frame.type != WindowFrame::Type::kDefault) {
    out << ", frame=" << (frame.type == WindowFrame::Type::kRows ? "rows" : "range") << "("
        << BoundText(frame.start_unbounded, frame.start, true) << ", "
        << BoundText(frame.end_unbounded, frame.end, false) << ")";
    if (frame.microseconds) out << " in microseconds";
  }
  if (min_periods != 1) out << ", min_periods=" << min_periods;
  return out.str();
}

ExprPtr MakeWindowCall(ExprPtr function, std::vector<ExprPtr> partition_by, std::vector<ExprPtr> order_by,
                       std::vector<bool> descending, std::vector<bool> nulls_first,
                       const std::string& frame_type, std::shared_ptr<arrow::Scalar> start,
                       std::shared_ptr<arrow::Scalar> end, int64_t min_periods) {
  FunctionOptions options;
  options["num_partition_by"] = arrow::MakeScalar(static_cast<int64_t>(partition_by.size()));
  options["descending"] = arrow::MakeScalar(Flags(descending));
  options["nulls_first"] = arrow::MakeScalar(Flags(nulls_first));
  options["frame"] = arrow::MakeScalar(frame_type);
  if (start && start->is_valid) options["start"] = start;
  if (end && end->is_valid) options["end"] = end;
  options["min_periods"] = arrow::MakeScalar(min_periods);
  std::vector<ExprPtr> children;
  children.push_back(std::move(function));
  for (auto& e : partition_by) children.push_back(std::move(e));
  for (auto& e : order_by) children.push_back(std::move(e));
  return Expr::Call(kWindowCall, std::move(children), std::move(options));
}

bool ContainsWindowCall(const Expr& expr) {
  if (expr.kind() == ExprKind::kCall && expr.name() == kWindowCall) return true;
  for (const auto& child : expr.children()) {
    if (ContainsWindowCall(*child)) return true;
  }
  return false;
}

arrow::Result<WindowCallParts> SplitWindowCall(const Expr& window_call) {
  const Expr& call = StripAlias(window_call);
  if (call.kind() != ExprKind::kCall || call.name() != kWindowCall || call.children().empty()) {
    return arrow::Status::Invalid("not a window expression: ", window_call.ToString());
  }
  WindowCallParts parts;
  const auto& options = call.options();
  ARROW_ASSIGN_OR_RAISE(int64_t num_partition_by, IntOption(options, "num_partition_by"));
  ARROW_ASSIGN_OR_RAISE(auto descending, StringOption(options, "descending"));
  ARROW_ASSIGN_OR_RAISE(auto nulls_first, StringOption(options, "nulls_first"));
  ARROW_ASSIGN_OR_RAISE(auto frame, StringOption(options, "frame"));
  ARROW_ASSIGN_OR_RAISE(parts.spec.min_periods, IntOption(options, "min_periods"));
  const auto& children = call.children();
  const int64_t num_order_by = static_cast<int64_t>(children.size()) - 1 - num_partition_by;
  if (num_partition_by < 0 || num_order_by < 0 || static_cast<int64_t>(descending.size()) != num_order_by ||
      static_cast<int64_t>(nulls_first.size()) != num_order_by) {
    return arrow::Status::Invalid("malformed window expression: ", window_call.ToString());
  }
  parts.function = children[0];
  parts.partition_by.assign(children.begin() + 1, children.begin() + 1 + num_partition_by);
  parts.order_by.assign(children.begin() + 1 + num_partition_by, children.end());
  parts.spec.descending = ParseFlags(descending);
  parts.spec.nulls_first = ParseFlags(nulls_first);
  if (frame == "rows") {
    parts.spec.frame.type = WindowFrame::Type::kRows;
  } else if (frame == "range") {
    parts.spec.frame.type = WindowFrame::Type::kRange;
  } else if (frame != "default") {
    return arrow::Status::Invalid("unknown window frame type '", frame, "'");
  }
  ARROW_ASSIGN_OR_RAISE(auto start, BoundOption(options, "start"));
  ARROW_ASSIGN_OR_RAISE(auto end, BoundOption(options, "end"));
  // Bounds: "start"/"end" hold offsets; the strings "start_following"/"end_preceding" mark the
  // misplaced unbounded ends so they can be refused with a clear message.
  parts.spec.frame.start_unbounded = !start.has_value();
  parts.spec.frame.end_unbounded = !end.has_value();
  parts.spec.frame.start = start.value_or(0);
  parts.spec.frame.end = end.value_or(0);
  auto unit = options.find("bound_unit");
  if (unit != options.end() && unit->second && unit->second->is_valid) {
    const std::string text = unit->second->ToString();
    if (text != "us") return arrow::Status::Invalid("window frame: unknown bound unit '", text, "'");
    parts.spec.frame.microseconds = true;
  }
  if (options.count("start_unbounded_following")) {
    return arrow::Status::Invalid("window frame: the start cannot be unbounded_following");
  }
  if (options.count("end_unbounded_preceding")) {
    return arrow::Status::Invalid("window frame: the end cannot be unbounded_preceding");
  }
  return parts;
}

arrow::Status ValidateWindowSpec(const WindowSpec& spec, const arrow::Schema& schema) {
  for (const auto& name : spec.partition_by) {
    auto field = schema.GetFieldByName(name);
    if (!field) return arrow::Status::KeyError("window partition_by: column '", name, "' not found");
    ARROW_RETURN_NOT_OK(
        CheckKeyColumn("window partition_by", "partition by", name, *field->type(), KeyUse::kHash));
  }
  for (const auto& name : spec.order_by) {
    auto field = schema.GetFieldByName(name);
    if (!field) return arrow::Status::KeyError("window order_by: column '", name, "' not found");
    // Extension types order as their storage (plain types: whatever Arrow's sort takes).
    if (field->type()->id() == arrow::Type::EXTENSION) {
      ARROW_RETURN_NOT_OK(
          CheckKeyColumn("window order_by", "order by", name, *field->type(), KeyUse::kOrder));
    }
  }
  const WindowFrame& frame = spec.frame;
  if (spec.min_periods < 1) {
    return arrow::Status::Invalid("window frame: min_periods must be at least 1, got ", spec.min_periods);
  }
  if (frame.type == WindowFrame::Type::kDefault) return arrow::Status::OK();
  const char* what = frame.type == WindowFrame::Type::kRows ? "rows_between" : "range_between";
  if (!frame.start_unbounded && !frame.end_unbounded && frame.start > frame.end) {
    return arrow::Status::Invalid("window frame ", what, ": the start (", Number(frame.start),
                                  ") is after the end (", Number(frame.end), ")");
  }
  if (frame.type == WindowFrame::Type::kRows &&
      ((!frame.start_unbounded && frame.start != static_cast<int64_t>(frame.start)) ||
       (!frame.end_unbounded && frame.end != static_cast<int64_t>(frame.end)))) {
    return arrow::Status::Invalid("window frame rows_between: offsets must be integers");
  }
  if (frame.type == WindowFrame::Type::kRange) {
    if (spec.order_by.size() != 1) {
      return arrow::Status::Invalid("window frame range_between needs exactly one order_by key, got ",
                                    spec.order_by.size());
    }
    auto field = schema.GetFieldByName(spec.order_by[0]);
    const bool temporal = MicrosecondsToTemporalUnits(*field->type()) != 0;
    if (frame.microseconds && !temporal) {
      return arrow::Status::TypeError(
          "window frame range_between: timedelta bounds need a timestamp, date or duration order_by key, "
          "column '",
          field->name(), "' is ", field->type()->ToString());
    }
    if (!frame.microseconds && !IsNumericType(*field->type())) {
      return arrow::Status::TypeError(
          "window frame range_between needs a numeric order_by key (or timedelta bounds over a temporal "
          "one), column '",
          field->name(), "' is ", field->type()->ToString());
    }
  } else if (spec.order_by.empty()) {
    return arrow::Status::Invalid("window frame rows_between needs order_by");
  }
  return arrow::Status::OK();
}

arrow::Result<WindowFunction> ResolveWindowFunction(const ExprPtr& function, const std::string& output,
                                                    const WindowSpec& spec, const arrow::Schema& schema) {
  ExprPtr call_ptr = function;
  while (call_ptr->kind() == ExprKind::kAlias) call_ptr = call_ptr->children()[0];
  const Expr& call = *call_ptr;
  if (call.kind() != ExprKind::kCall) {
    return arrow::Status::Invalid(
        "over(): ", function->ToString(),
        " is not a window function (use an aggregation such as .sum(), row_number(), "
        "rank(), dense_rank(), lag(), lead(), first_value() or last_value())");
  }
  WindowFunction info;
  info.function = call.name();
  info.output = output;
  const std::string& f = info.function;
  const bool ranking = f == "row_number" || f == "rank" || f == "dense_rank";
  const bool offset = f == "lag" || f == "lead";
  const bool value = f == "first_value" || f == "last_value";
  auto column_arg = [&](size_t i) -> arrow::Result<std::shared_ptr<arrow::Field>> {
    const auto& arg = call.children()[i];
    if (arg->kind() != ExprKind::kColumn) {
      return arrow::Status::Invalid("window function ", f, ": argument must be a column, got ",
                                    arg->ToString());
    }
    return ResolveField(*arg, schema);
  };
  if (ranking || offset) {
    if (spec.order_by.empty()) {
      return arrow::Status::Invalid("window function ", f, "() needs a window with order_by");
    }
  }
  if (ranking) {
    if (!call.children().empty()) return arrow::Status::Invalid(f, "() takes no arguments");
    info.output_type = arrow::uint64();
    return info;
  }
  if (value) {
    // Daft's rule: the frame must be explicit (a default frame's first/last row depends on ties).
    if (spec.order_by.empty()) {
      return arrow::Status::Invalid(
          "first_value() and last_value() require an order_by in the window spec — use "
          "Window().partition_by(...).order_by(...).rows_between(...)");
    }
    if (spec.frame.type == WindowFrame::Type::kDefault) {
      return arrow::Status::Invalid(
          "first_value() and last_value() require a frame (rows_between) in the window spec — use "
          "Window().partition_by(...).order_by(...).rows_between(...)");
    }
    auto ignore = call.options().find("ignore_nulls");
    if (ignore != call.options().end() && ignore->second && ignore->second->is_valid) {
      ARROW_ASSIGN_OR_RAISE(auto flag, ignore->second->CastTo(arrow::boolean()));
      info.ignore_nulls = static_cast<const arrow::BooleanScalar&>(*flag).value;
    }
  }
  if (offset || value) {
    if (call.children().empty()) return arrow::Status::Invalid(f, "() needs a value");
    ARROW_ASSIGN_OR_RAISE(auto field, column_arg(0));
    info.input = field->name();
    info.input_type = info.output_type = field->type();
    if (offset) {
      auto it = call.options().find("offset");
      if (it != call.options().end() && it->second && it->second->is_valid) {
        ARROW_ASSIGN_OR_RAISE(auto cast, it->second->CastTo(arrow::int64()));
        info.offset = static_cast<const arrow::Int64Scalar&>(*cast).value;
      } else {
        info.offset = 1;
      }
      if (info.offset < 0) return arrow::Status::Invalid(f, "(): offset must be >= 0, got ", info.offset);
      if (call.children().size() > 1) {
        ARROW_ASSIGN_OR_RAISE(auto def, column_arg(1));
        info.default_input = def->name();
      }
    }
    return info;
  }
  if (f.rfind("agg_", 0) == 0) {
    if (f != "agg_sum" && f != "agg_mean" && f != "agg_min" && f != "agg_max" && f != "agg_count" &&
        f != "agg_stddev" && f != "agg_count_distinct") {
      return arrow::Status::NotImplemented(f.substr(4),
                                           "() is not supported over a window (sum, mean, min, max, count, "
                                           "count_distinct, stddev are)");
    }
    ARROW_ASSIGN_OR_RAISE(auto agg, ResolveAggregation(Expr::Alias(call_ptr, output), schema));
    info.input = agg.input;
    info.input_type = agg.input_type;
    info.output_type = agg.output_type;
    if (f == "agg_stddev") {
      ARROW_ASSIGN_OR_RAISE(info.ddof, AggregationDdof(agg.options, 1));
    }
    auto mode = agg.options.find("mode");
    if (mode != agg.options.end() && mode->second && mode->second->is_valid) {
      if (auto s = std::dynamic_pointer_cast<arrow::BaseBinaryScalar>(mode->second))
        info.count_mode = s->ToString();
    }
    return info;
  }
  return arrow::Status::Invalid("over(): ", function->ToString(),
                                " is not a window function (use an aggregation such as .sum(), row_number(), "
                                "rank(), dense_rank(), lag(), lead(), first_value() or last_value())");
}

double MicrosecondsToTemporalUnits(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::TIMESTAMP:
      return UnitPerMicrosecond(static_cast<const arrow::TimestampType&>(type).unit());
    case arrow::Type::DURATION:
      return UnitPerMicrosecond(static_cast<const arrow::DurationType&>(type).unit());
    case arrow::Type::DATE32:
      return 1.0 / 86'400e6;
    case arrow::Type::DATE64:
      return 1e-3;
    default:
      return 0;
  }
}

}  // namespace ketch
