#pragma once

#include <vector>

#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Plans a select / with_columns projection whose expressions may contain window calls
/// (`expr.over(window)`, anywhere in an expression tree):
///   Project(input columns + computed function arguments and keys)   -- only when some are not columns
///   -> one Window node per distinct window (window functions sharing a window share one sort)
///   -> Project(`exprs` with each window call replaced by its output column).
/// Without window calls this is LogicalPlan::Project. Errors are raised here, when the plan is
/// built: a window call nested inside another's arguments, and those of LogicalPlan::Window.
arrow::Result<LogicalPlanPtr> ProjectWithWindows(LogicalPlanPtr input, std::vector<ExprPtr> exprs);

}  // namespace ketch
