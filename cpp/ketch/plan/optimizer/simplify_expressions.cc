#include "ketch/plan/optimizer/simplify_expressions.h"

#include <arrow/compute/api.h>

#include <algorithm>
#include <set>

#include "ketch/expr/expr_analysis.h"

namespace ketch {
namespace {

bool IsLiteral(const ExprPtr& e) { return e->kind() == ExprKind::kLiteral; }

// 1 = literal true, 0 = literal false, -1 = anything else (null included).
int BoolLiteral(const ExprPtr& e) {
  if (!IsLiteral(e) || !e->literal()->is_valid || e->literal()->type->id() != arrow::Type::BOOL) return -1;
  return std::static_pointer_cast<arrow::BooleanScalar>(e->literal())->value ? 1 : 0;
}

bool Foldable(const Expr& e) {
  if (e.kind() == ExprKind::kCast) return true;
  if (e.kind() != ExprKind::kCall) return false;
  const auto& n = e.name();
  if (n.rfind("url_", 0) == 0 || n.rfind("file_", 0) == 0 || n.rfind("agg_", 0) == 0) return false;
  return true;
}

arrow::Result<ExprPtr> Fold(const ExprPtr& expr) {
  static const auto kEmpty = arrow::RecordBatch::Make(arrow::schema({}), 1, arrow::ArrayVector{});
  auto value = Evaluate(*expr, *kEmpty);
  if (!value.ok() || (*value)->length() != 1) return expr;  // leave errors to run time
  ARROW_ASSIGN_OR_RAISE(auto scalar, (*value)->GetScalar(0));
  return Expr::Literal(std::move(scalar));
}

void SplitDisjuncts(const ExprPtr& e, std::vector<ExprPtr>* out) {
  if (e->kind() == ExprKind::kCall && e->name() == "or_kleene" && e->children().size() == 2) {
    SplitDisjuncts(e->children()[0], out);
    SplitDisjuncts(e->children()[1], out);
  } else {
    out->push_back(e);
  }
}

// (A and B) or (A and C) → A and (B or C): conjuncts every disjunct shares move out of the OR
// (distributivity holds in Kleene logic, nulls included). TPC-H Q19's join key sits in each of
// its three OR branches; factored out, the filter becomes a join key. Nullptr when no conjunct
// is shared.
ExprPtr FactorOr(const ExprPtr& expr) {
  std::vector<ExprPtr> disjuncts;
  SplitDisjuncts(expr, &disjuncts);
  if (disjuncts.size() < 2) return nullptr;
  std::vector<std::vector<ExprPtr>> parts(disjuncts.size());
  for (size_t i = 0; i < disjuncts.size(); ++i) SplitConjuncts(disjuncts[i], &parts[i]);
  std::vector<ExprPtr> common;
  std::set<std::string> common_text;
  for (const auto& candidate : parts[0]) {
    const std::string text = candidate->ToString();
    if (common_text.count(text)) continue;
    bool everywhere = true;
    for (size_t i = 1; i < parts.size() && everywhere; ++i) {
      everywhere = std::any_of(parts[i].begin(), parts[i].end(),
                               [&](const ExprPtr& c) { return c->ToString() == text; });
    }
    if (everywhere) {
      common.push_back(candidate);
      common_text.insert(text);
    }
  }
  if (common.empty()) return nullptr;
  ExprPtr rest;
  for (const auto& conjuncts : parts) {
    std::vector<ExprPtr> left;
    for (const auto& c : conjuncts) {
      if (!common_text.count(c->ToString())) left.push_back(c);
    }
    if (left.empty()) return Conjunction(common);  // a disjunct that is only the shared part
    ExprPtr branch = Conjunction(left);
    rest = rest ? Expr::Call("or_kleene", {rest, branch}) : branch;
  }
  common.push_back(rest);
  return Conjunction(common);
}

// image_resize(image_decode(x), w, h): the decode learns the target size (draft_w / draft_h), so
// JPEGs decode reduced in the DCT instead of at full size (shrink-on-load, see image::ShrinkOnLoad).
// Only the decode inside this resize changes; the same decode used elsewhere stays full size.
ExprPtr ShrinkDecodeBeforeResize(const ExprPtr& expr) {
  if (expr->kind() != ExprKind::kCall || expr->name() != "image_resize" || expr->children().size() != 1) {
    return nullptr;
  }
  const auto& decode = expr->children()[0];
  if (decode->kind() != ExprKind::kCall || decode->name() != "image_decode" ||
      decode->options().count("draft_w") || !expr->options().count("w") || !expr->options().count("h")) {
    return nullptr;
  }
  FunctionOptions options = decode->options();
  options["draft_w"] = expr->options().at("w");
  options["draft_h"] = expr->options().at("h");
  return expr->WithChildren({Expr::Call("image_decode", decode->children(), std::move(options))});
}

arrow::Result<ExprPtr> Simplify(const ExprPtr& expr) {
  if (expr->kind() == ExprKind::kColumn || expr->kind() == ExprKind::kLiteral) return expr;
  std::vector<ExprPtr> children;
  bool changed = false;
  for (const auto& child : expr->children()) {
    ARROW_ASSIGN_OR_RAISE(auto simplified, Simplify(child));
    changed |= simplified != child;
    children.push_back(std::move(simplified));
  }
  ExprPtr self = changed ? expr->WithChildren(children) : expr;
  if (self->kind() == ExprKind::kCall && children.size() == 2) {
    const auto& name = self->name();
    const int a = BoolLiteral(children[0]), b = BoolLiteral(children[1]);
    if (name == "and_kleene") {
      if (a == 1) return children[1];
      if (b == 1) return children[0];
      if (a == 0 || b == 0) return Expr::Literal(std::make_shared<arrow::BooleanScalar>(false));
    } else if (name == "or_kleene") {
      if (a == 0) return children[1];
      if (b == 0) return children[0];
      if (a == 1 || b == 1) return Expr::Literal(std::make_shared<arrow::BooleanScalar>(true));
      if (auto factored = FactorOr(self)) return factored;
    }
  }
  if (auto fused = ShrinkDecodeBeforeResize(self)) return fused;
  if (self->kind() == ExprKind::kCall && self->name() == "invert" && children.size() == 1 &&
      children[0]->kind() == ExprKind::kCall && children[0]->name() == "invert") {
    return children[0]->children()[0];
  }
  if (Foldable(*self) && !children.empty()) {
    bool all_literal = true;
    for (const auto& c : children) all_literal &= IsLiteral(c);
    if (all_literal) return Fold(self);
  }
  return self;
}

bool Comparison(const std::string& name) {
  return name == "equal" || name == "not_equal" || name == "less" || name == "less_equal" ||
         name == "greater" || name == "greater_equal";
}

// The literal in the column's type when that loses nothing (round trip), else nullptr.
ExprPtr LiteralAs(const ExprPtr& literal, const std::shared_ptr<arrow::DataType>& type) {
  const auto& value = literal->literal();
  if (!value->is_valid || value->type->Equals(*type)) return nullptr;
  const bool both_strings =
      arrow::is_base_binary_like(value->type->id()) && arrow::is_base_binary_like(type->id());
  const bool both_numbers = (arrow::is_integer(value->type->id()) || arrow::is_floating(value->type->id())) &&
                            (arrow::is_integer(type->id()) || arrow::is_floating(type->id()));
  if (!both_strings && !both_numbers) return nullptr;
  // Checked casts (no wrap-around between signed and unsigned, no truncation) that round-trip.
  // An integer into a float type is the exception: Arrow's checked cast refuses any beyond 2**53
  // (float64) or 2**24 (float32) even when exact, so it is converted unchecked and kept only when
  // the checked conversion back (which refuses fractions and out-of-range values) gives it again.
  auto exact = [&](const std::shared_ptr<arrow::DataType>& to) -> ExprPtr {
    const bool int_to_float = arrow::is_integer(value->type->id()) && arrow::is_floating(to->id());
    auto cast = arrow::compute::Cast(
        arrow::Datum(value), to,
        int_to_float ? arrow::compute::CastOptions::Unsafe() : arrow::compute::CastOptions::Safe());
    if (!cast.ok()) return nullptr;
    auto back = arrow::compute::Cast(*cast, value->type, arrow::compute::CastOptions::Safe());
    if (!back.ok() || !back->scalar()->Equals(*value)) return nullptr;
    return Expr::Literal(cast->scalar());
  };
  if (auto same = exact(type)) return same;
  // An integer a float32 column cannot hold exactly: compare in float64 (Arrow would otherwise try
  // to cast the integer to float32 and fail).
  if (type->id() == arrow::Type::FLOAT && arrow::is_integer(value->type->id()))
    return exact(arrow::float64());
  return nullptr;
}

// An integer column compared with an integer literal outside its type's range (col(uint64) > -1,
// col(int64) < 2**63): the answer is the same for every non-null row, so the comparison becomes
// `col == col` (true, null for nulls) or `col != col` (false, null for nulls). Arrow would instead
// cast the column to the literal's type and fail on values that do not fit.
ExprPtr OutOfRange(const std::string& op, bool column_on_left, const ExprPtr& column,
                   const arrow::Scalar& literal, const arrow::DataType& type) {
  if (!arrow::is_integer(type.id()) || !literal.is_valid) return nullptr;
  __int128 value = 0;
  if (literal.type->id() == arrow::Type::INT64) {
    value = static_cast<const arrow::Int64Scalar&>(literal).value;
  } else if (literal.type->id() == arrow::Type::UINT64) {
    value = static_cast<const arrow::UInt64Scalar&>(literal).value;
  } else {
    return nullptr;
  }
  const int bits = type.byte_width() * 8;
  const bool is_signed = arrow::is_signed_integer(type.id());
  const __int128 lo = is_signed ? -(static_cast<__int128>(1) << (bits - 1)) : 0;
  const __int128 hi =
      is_signed ? (static_cast<__int128>(1) << (bits - 1)) - 1 : (static_cast<__int128>(1) << bits) - 1;
  if (value >= lo && value <= hi) return nullptr;
  const bool below = value < lo;  // every column value is greater than the literal
  // Read the comparison as "column OP literal".
  std::string o = op;
  if (!column_on_left) {
    if (o == "less")
      o = "greater";
    else if (o == "less_equal")
      o = "greater_equal";
    else if (o == "greater")
      o = "less";
    else if (o == "greater_equal")
      o = "less_equal";
  }
  bool result;
  if (o == "equal") {
    result = false;
  } else if (o == "not_equal") {
    result = true;
  } else if (o == "greater" || o == "greater_equal") {
    result = below;
  } else {
    result = !below;
  }
  return Expr::Call(result ? "equal" : "not_equal", {column, column});
}

// Comparisons of a column with a literal of another type compare in the column's type when the
// literal converts exactly (col(int32) < 24, col(string) == "R"): Arrow would otherwise cast the
// whole column to the literal's type first.
ExprPtr CoerceLiterals(const ExprPtr& expr, const arrow::Schema& schema) {
  std::vector<ExprPtr> children;
  bool changed = false;
  for (const auto& child : expr->children()) {
    auto c = CoerceLiterals(child, schema);
    changed |= c != child;
    children.push_back(std::move(c));
  }
  if (expr->kind() == ExprKind::kCall && Comparison(expr->name()) && children.size() == 2) {
    for (int side = 0; side < 2; ++side) {
      const auto& column = children[side];
      const auto& literal = children[1 - side];
      if (column->kind() != ExprKind::kColumn || literal->kind() != ExprKind::kLiteral) continue;
      auto field = schema.GetFieldByName(column->name());
      if (!field) continue;
      if (auto coerced = LiteralAs(literal, field->type())) {
        children[1 - side] = coerced;
        changed = true;
      } else if (auto decided =
                     OutOfRange(expr->name(), side == 0, column, *literal->literal(), *field->type())) {
        return decided;
      }
    }
  }
  return changed ? expr->WithChildren(std::move(children)) : expr;
}

// Simplifies a projected expression and keeps its output name.
arrow::Result<ExprPtr> SimplifyNamed(const ExprPtr& expr) {
  ARROW_ASSIGN_OR_RAISE(auto out, Simplify(expr));
  if (out != expr && out->OutputName() != expr->OutputName()) return Expr::Alias(out, expr->OutputName());
  return out;
}

}  // namespace

arrow::Result<ExprPtr> SimplifyExpression(const ExprPtr& expr) { return Simplify(expr); }

arrow::Result<Transformed> SimplifyExpressions::Apply(const LogicalPlanPtr& plan) const {
  std::vector<LogicalPlanPtr> inputs;
  bool changed = false;
  for (const auto& input : plan->inputs()) {
    ARROW_ASSIGN_OR_RAISE(auto child, Apply(input));
    changed |= child.changed;
    inputs.push_back(child.plan);
  }
  LogicalPlanPtr self = plan;
  if (changed) {
    ARROW_ASSIGN_OR_RAISE(self, plan->WithInputs(inputs));
  }
  switch (self->kind()) {
    case LogicalKind::kProject: {
      std::vector<ExprPtr> exprs;
      bool any = false;
      for (const auto& e : self->exprs()) {
        ARROW_ASSIGN_OR_RAISE(auto s, SimplifyNamed(e));
        any |= s != e;
        exprs.push_back(std::move(s));
      }
      if (!any) break;
      ARROW_ASSIGN_OR_RAISE(auto project, LogicalPlan::Project(self->inputs()[0], std::move(exprs)));
      return Transformed{project, true};
    }
    case LogicalKind::kFilter: {
      ARROW_ASSIGN_OR_RAISE(auto predicate, Simplify(self->predicate()));
      predicate = CoerceLiterals(predicate, *self->inputs()[0]->schema());
      if (BoolLiteral(predicate) == 1) return Transformed{self->inputs()[0], true};
      if (predicate == self->predicate()) break;
      ARROW_ASSIGN_OR_RAISE(auto filter, LogicalPlan::Filter(self->inputs()[0], predicate));
      return Transformed{filter, true};
    }
    case LogicalKind::kScan: {
      if (!self->scan().filter) break;
      ARROW_ASSIGN_OR_RAISE(auto predicate, Simplify(self->scan().filter));
      predicate = CoerceLiterals(predicate, *self->scan().file_schema);
      if (predicate == self->scan().filter) break;
      ScanInfo info = self->scan();
      info.filter = BoolLiteral(predicate) == 1 ? nullptr : predicate;
      ARROW_ASSIGN_OR_RAISE(auto scan, LogicalPlan::Scan(std::move(info)));
      return Transformed{scan, true};
    }
    default:
      break;
  }
  return Transformed{self, changed};
}

}  // namespace ketch
