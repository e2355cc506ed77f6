#pragma once

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Folds constants and simplifies Boolean logic in every projection, filter and scan filter:
/// calls and casts whose inputs are all literals are evaluated once at plan time (`lit(2) * lit(3)`
/// → `lit(6)`; not URL, file or Python functions, which do I/O or may not be pure);
/// `x and true` → `x`, `x and false` → `false`, `x or true` → `true`, `x or false` → `x`,
/// `not not x` → `x`; a filter that is always true is removed. Projected columns keep their names.
/// In filters, a literal compared with a column is converted to the column's type when that loses
/// nothing (`col(f32) < 24`, `col(string) == "R"`), so the column is not cast for the comparison.
class SimplifyExpressions : public OptimizerRule {
 public:
  std::string name() const override { return "SimplifyExpressions"; }
  arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const override;
};

/// The simplified expression (the same pointer when nothing changed).
arrow::Result<ExprPtr> SimplifyExpression(const ExprPtr& expr);

}  // namespace ketch
