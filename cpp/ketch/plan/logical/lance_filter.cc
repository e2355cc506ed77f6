#include "ketch/plan/logical/lance_filter.h"

#include <arrow/util/formatting.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "ketch/expr/expr_analysis.h"
#include "ketch/functions/temporal/civil_date.h"

namespace ketch {
namespace {

bool Translatable(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::TIMESTAMP:
      return static_cast<const arrow::TimestampType&>(type).timezone().empty();
    case arrow::Type::BOOL:
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::DATE32:
      return true;
    default:
      return arrow::is_integer(type.id()) || arrow::is_floating(type.id());
  }
}

std::optional<std::string> Timestamp(int64_t value, arrow::TimeUnit::type unit) {
  int64_t per_second = 1;
  switch (unit) {
    case arrow::TimeUnit::SECOND:
      per_second = 1;
      break;
    case arrow::TimeUnit::MILLI:
      per_second = 1000;
      break;
    case arrow::TimeUnit::MICRO:
      per_second = 1000000;
      break;
    case arrow::TimeUnit::NANO:
      per_second = 1000000000;
      break;
  }
  const int64_t seconds = temporal::FloorDiv(value, per_second);
  const int64_t fraction = value - seconds * per_second;
  const int64_t days = temporal::FloorDiv(seconds, 86400);
  const int64_t in_day = seconds - days * 86400;
  const auto [y, m, d] = temporal::CivilFromDays(days);  // Howard Hinnant's algorithm
  if (y < 1 || y > 9999) return std::nullopt;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lld %02lld:%02lld:%02lld", static_cast<long long>(y),
                static_cast<long long>(m), static_cast<long long>(d), static_cast<long long>(in_day / 3600),
                static_cast<long long>(in_day / 60 % 60), static_cast<long long>(in_day % 60));
  std::string out = buf;
  if (per_second > 1) {
    const int digits = unit == arrow::TimeUnit::MILLI ? 3 : unit == arrow::TimeUnit::MICRO ? 6 : 9;
    std::snprintf(buf, sizeof(buf), ".%0*lld", digits, static_cast<long long>(fraction));
    out += buf;
  }
  return out;
}

std::optional<std::string> Literal(const arrow::Scalar& scalar) {
  if (!scalar.is_valid) return "NULL";
  const auto& type = *scalar.type;
  switch (type.id()) {
    case arrow::Type::BOOL:
      return static_cast<const arrow::BooleanScalar&>(scalar).value ? "TRUE" : "FALSE";
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING: {
      const auto view = static_cast<const arrow::BaseBinaryScalar&>(scalar).view();
      std::string out = "'";
      for (char c : view) {
        if (c == '\0') return std::nullopt;
        out += c;
        if (c == '\'') out += '\'';
      }
      return out + "'";
    }
    case arrow::Type::DATE32: {
      const int64_t days = static_cast<const arrow::Date32Scalar&>(scalar).value;
      auto text = Timestamp(days * 86400, arrow::TimeUnit::SECOND);
      if (!text) return std::nullopt;
      return "date '" + text->substr(0, 10) + "'";
    }
    case arrow::Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(type);
      if (!ts.timezone().empty()) return std::nullopt;
      auto text = Timestamp(static_cast<const arrow::TimestampScalar&>(scalar).value, ts.unit());
      if (!text) return std::nullopt;
      return "timestamp '" + *text + "'";
    }
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE: {
      const double value = type.id() == arrow::Type::FLOAT
                               ? static_cast<double>(static_cast<const arrow::FloatScalar&>(scalar).value)
                               : static_cast<const arrow::DoubleScalar&>(scalar).value;
      if (!std::isfinite(value)) return std::nullopt;
      char buf[40];
      std::snprintf(buf, sizeof(buf), "%.17g", value);
      std::string out = buf;
      // Keep it a floating literal in SQL (1 would be an integer).
      if (out.find_first_of(".eE") == std::string::npos) out += ".0";
      return out;
    }
    default:
      if (arrow::is_integer(type.id())) return scalar.ToString();
      return std::nullopt;
  }
}

// The disjuncts of a tree of or_kleene calls, left to right.
void Disjuncts(const ExprPtr& expr, std::vector<ExprPtr>* out) {
  if (expr->kind() == ExprKind::kCall && expr->name() == "or_kleene" && expr->children().size() == 2) {
    Disjuncts(expr->children()[0], out);
    Disjuncts(expr->children()[1], out);
    return;
  }
  out->push_back(expr);
}

struct Printer {
  const arrow::Schema& schema;
  bool reads_float = false;

  // `x = a OR x = b OR ...` (what Expression.is_in builds) as `x IN (a, b, ...)`.
  std::optional<std::string> InList(const Expr& expr, bool positive) {
    std::vector<ExprPtr> terms;
    Disjuncts(expr.children()[0], &terms);
    Disjuncts(expr.children()[1], &terms);
    std::string column;
    std::string values;
    for (const auto& term : terms) {
      if (term->kind() != ExprKind::kCall || term->name() != "equal" || term->children().size() != 2) {
        return std::nullopt;
      }
      const auto& a = term->children()[0];
      const auto& b = term->children()[1];
      const Expr* column_expr = a->kind() == ExprKind::kColumn ? a.get() : b.get();
      const Expr* value_expr = a->kind() == ExprKind::kColumn ? b.get() : a.get();
      if (column_expr->kind() != ExprKind::kColumn || value_expr->kind() != ExprKind::kLiteral)
        return std::nullopt;
      if (!column.empty() && column_expr->name() != column) return std::nullopt;
      column = column_expr->name();
      auto value = Literal(*value_expr->literal());
      if (!value || *value == "NULL") return std::nullopt;
      values += (values.empty() ? "" : ", ") + *value;
    }
    const auto& first = terms.front()->children();
    auto printed = Print(first[0]->kind() == ExprKind::kColumn ? *first[0] : *first[1], positive);
    if (!printed) return std::nullopt;
    return "(" + *printed + " IN (" + values + "))";
  }

  // `positive`: not under a NOT, where Lance returning extra rows on NaN is safe (Ketch checks).
  std::optional<std::string> Print(const Expr& expr, bool positive) {
    switch (expr.kind()) {
      case ExprKind::kColumn: {
        const auto field = schema.GetFieldByName(expr.name());
        if (!field || !Translatable(*field->type()) || expr.name().find('`') != std::string::npos) {
          return std::nullopt;
        }
        if (arrow::is_floating(field->type()->id())) {
          if (!positive) return std::nullopt;
          reads_float = true;
        }
        return "`" + expr.name() + "`";
      }
      case ExprKind::kLiteral:
        return Literal(*expr.literal());
      case ExprKind::kCall:
        break;
      default:
        return std::nullopt;
    }
    static const std::map<std::string, std::string> kComparisons = {
        {"equal", "="},       {"not_equal", "<>"}, {"less", "<"},
        {"less_equal", "<="}, {"greater", ">"},    {"greater_equal", ">="}};
    const auto& args = expr.children();
    const auto& name = expr.name();
    if (auto op = kComparisons.find(name); op != kComparisons.end() && args.size() == 2) {
      // NaN compares equal to NaN in Lance: `<>` on floats could drop rows Arrow keeps.
      auto left = Print(*args[0], positive && name != "not_equal");
      auto right = Print(*args[1], positive && name != "not_equal");
      if (!left || !right ||
          (args[0]->kind() == ExprKind::kLiteral && args[1]->kind() == ExprKind::kLiteral)) {
        return std::nullopt;
      }
      if (*left == "NULL" || *right == "NULL") return std::nullopt;
      return "(" + *left + " " + op->second + " " + *right + ")";
    }
    if (name == "or_kleene" && args.size() == 2) {
      if (auto in_list = InList(expr, positive)) return in_list;
    }
    if ((name == "and_kleene" || name == "or_kleene") && args.size() == 2) {
      auto left = Print(*args[0], positive);
      auto right = Print(*args[1], positive);
      if (!left || !right) return std::nullopt;
      return "(" + *left + (name == "and_kleene" ? " AND " : " OR ") + *right + ")";
    }
    if (name == "invert" && args.size() == 1) {
      auto inner = Print(*args[0], !positive);
      if (!inner) return std::nullopt;
      return "(NOT " + *inner + ")";
    }
    if ((name == "is_null" || name == "is_valid") && args.size() == 1 &&
        args[0]->kind() == ExprKind::kColumn) {
      // NaN is not null in either engine, so polarity does not matter here.
      auto inner = Print(*args[0], true);
      if (!inner) return std::nullopt;
      return "(" + *inner + (name == "is_null" ? " IS NULL)" : " IS NOT NULL)");
    }
    return std::nullopt;
  }
};

}  // namespace

LanceFilter TranslateLanceFilter(const ExprPtr& filter, const arrow::Schema& schema) {
  LanceFilter out;
  if (!filter) return out;
  std::vector<ExprPtr> conjuncts;
  SplitConjuncts(filter, &conjuncts);
  for (const auto& conjunct : conjuncts) {
    Printer printer{schema};
    auto sql = conjunct->HasUdf() ? std::nullopt : printer.Print(*conjunct, true);
    if (!sql) {
      out.residual.push_back(conjunct);
      continue;
    }
    out.sql += (out.sql.empty() ? "" : " AND ") + *sql;
    out.num_pushed++;
    if (printer.reads_float) out.residual.push_back(conjunct);
  }
  return out;
}

}  // namespace ketch
