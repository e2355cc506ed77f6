#include "ketch/plan/logical/window_plan.h"

#include <map>
#include <set>

namespace ketch {

namespace {

constexpr const char* kWindowOutputPrefix = "__window_";
constexpr const char* kWindowArgPrefix = "__window_arg_";

/// Collects the window calls of `expr` and returns it with each replaced by a column reference.
arrow::Result<ExprPtr> ReplaceWindowCalls(const ExprPtr& expr, std::vector<ExprPtr>* calls) {
  if (expr->kind() == ExprKind::kCall && expr->name() == kWindowCall) {
    for (const auto& child : expr->children()) {
      if (ContainsWindowCall(*child)) {
        return arrow::Status::Invalid(
            "window expressions cannot be nested inside another window expression: ", expr->ToString());
      }
    }
    const std::string name = kWindowOutputPrefix + std::to_string(calls->size());
    calls->push_back(expr);
    return Expr::Column(name);
  }
  if (!ContainsWindowCall(*expr)) return expr;
  std::vector<ExprPtr> children;
  for (const auto& child : expr->children()) {
    ARROW_ASSIGN_OR_RAISE(auto replaced, ReplaceWindowCalls(child, calls));
    children.push_back(std::move(replaced));
  }
  return expr->WithChildren(std::move(children));
}

/// Columns for computed arguments: a column stays itself; anything else is projected once under a
/// temporary name.
class ArgumentColumns {
 public:
  ExprPtr ColumnFor(const ExprPtr& expr) {
    if (expr->kind() == ExprKind::kColumn) return expr;
    const std::string key = expr->ToString();
    auto it = names_.find(key);
    if (it == names_.end()) {
      const std::string name = kWindowArgPrefix + std::to_string(names_.size());
      it = names_.emplace(key, name).first;
      projected_.push_back(Expr::Alias(expr, name));
    }
    return Expr::Column(it->second);
  }
  const std::vector<ExprPtr>& projected() const { return projected_; }

 private:
  std::map<std::string, std::string> names_;
  std::vector<ExprPtr> projected_;
};

}  // namespace

arrow::Result<LogicalPlanPtr> LogicalPlan::Window(LogicalPlanPtr input, std::vector<ExprPtr> window_exprs) {
  if (window_exprs.empty())
    return arrow::Status::Invalid("a window node needs at least one window expression");
  const auto& in = *input->schema();
  arrow::FieldVector fields = in.fields();
  std::set<std::string> names;
  for (const auto& f : in.fields()) names.insert(f->name());
  auto node = std::make_shared<LogicalPlan>();
  for (size_t i = 0; i < window_exprs.size(); ++i) {
    const auto& expr = window_exprs[i];
    ARROW_ASSIGN_OR_RAISE(auto parts, SplitWindowCall(*expr));
    WindowSpec spec = parts.spec;
    for (const auto& key : parts.partition_by) {
      if (key->kind() != ExprKind::kColumn) {
        return arrow::Status::Invalid("window partition_by keys must be columns here, got ", key->ToString());
      }
      spec.partition_by.push_back(key->name());
    }
    for (const auto& key : parts.order_by) {
      if (key->kind() != ExprKind::kColumn) {
        return arrow::Status::Invalid("window order_by keys must be columns here, got ", key->ToString());
      }
      spec.order_by.push_back(key->name());
    }
    if (i == 0) {
      ARROW_RETURN_NOT_OK(ValidateWindowSpec(spec, in));
      node->window_spec_ = spec;
    } else if (!spec.Equals(node->window_spec_)) {
      return arrow::Status::Invalid("the window expressions of one Window node must share one window: (",
                                    node->window_spec_.ToString(), ") vs (", spec.ToString(), ")");
    }
    const std::string output = expr->OutputName();
    if (!names.insert(output).second) {
      return arrow::Status::Invalid("window: duplicate output column '", output, "'");
    }
    ARROW_ASSIGN_OR_RAISE(auto function, ResolveWindowFunction(parts.function, output, spec, in));
    fields.push_back(arrow::field(output, function.output_type));
    node->window_functions_.push_back(std::move(function));
  }
  node->kind_ = LogicalKind::kWindow;
  node->schema_ = arrow::schema(std::move(fields));
  node->exprs_ = std::move(window_exprs);
  node->inputs_ = {std::move(input)};
  return node;
}

arrow::Result<LogicalPlanPtr> ProjectWithWindows(LogicalPlanPtr input, std::vector<ExprPtr> exprs) {
  bool any = false;
  for (const auto& e : exprs) any = any || ContainsWindowCall(*e);
  if (!any) return LogicalPlan::Project(std::move(input), std::move(exprs));

  std::vector<ExprPtr> calls;
  std::vector<ExprPtr> rewritten;
  for (const auto& e : exprs) {
    ARROW_ASSIGN_OR_RAISE(auto replaced, ReplaceWindowCalls(e, &calls));
    // Keep the name the expression had (the window call's, not the temporary column's).
    if (replaced->kind() != ExprKind::kAlias && replaced.get() != e.get()) {
      replaced = Expr::Alias(replaced, e->OutputName());
    }
    rewritten.push_back(std::move(replaced));
  }

  // Window calls over columns only; computed arguments and keys projected first.
  ArgumentColumns arguments;
  std::vector<ExprPtr> column_calls;
  for (const auto& call : calls) {
    std::vector<ExprPtr> children;
    ExprPtr function = call->children()[0];
    while (function->kind() == ExprKind::kAlias)
      function = function->children()[0];  // sum().alias(x).over(w)
    std::vector<ExprPtr> function_args;
    for (const auto& arg : function->children()) function_args.push_back(arguments.ColumnFor(arg));
    children.push_back(function->kind() == ExprKind::kCall ? function->WithChildren(std::move(function_args))
                                                           : function);
    for (size_t i = 1; i < call->children().size(); ++i) {
      children.push_back(arguments.ColumnFor(call->children()[i]));
    }
    column_calls.push_back(call->WithChildren(std::move(children)));
  }
  LogicalPlanPtr plan = input;
  if (!arguments.projected().empty()) {
    std::vector<ExprPtr> pre;
    for (const auto& f : input->schema()->fields()) pre.push_back(Expr::Column(f->name()));
    for (const auto& e : arguments.projected()) pre.push_back(e);
    ARROW_ASSIGN_OR_RAISE(plan, LogicalPlan::Project(plan, std::move(pre)));
  }

  // One Window node per distinct window, in order of first use.
  std::vector<std::string> order;
  std::map<std::string, std::vector<ExprPtr>> groups;
  for (size_t i = 0; i < column_calls.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto parts, SplitWindowCall(*column_calls[i]));
    WindowSpec spec = parts.spec;
    for (const auto& k : parts.partition_by) spec.partition_by.push_back(k->name());
    for (const auto& k : parts.order_by) spec.order_by.push_back(k->name());
    const std::string key = spec.ToString();
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(Expr::Alias(column_calls[i], kWindowOutputPrefix + std::to_string(i)));
  }
  for (const auto& key : order) {
    ARROW_ASSIGN_OR_RAISE(plan, LogicalPlan::Window(plan, groups[key]));
  }
  return LogicalPlan::Project(plan, std::move(rewritten));
}

}  // namespace ketch
