#include "ketch/plan/optimizer/push_down_nearest.h"

#include <arrow/compute/api.h>

#include <optional>

#include "ketch/plan/logical/lance_filter.h"

namespace ketch {
namespace {

struct DistanceCall {
  std::string column;
  std::vector<double> query;
  std::string metric;  // Lance's name: "cosine" or "l2"
};

ExprPtr StripAlias(ExprPtr expr) {
  while (expr->kind() == ExprKind::kAlias) expr = expr->children()[0];
  return expr;
}

// The literal query vector: a non-null list of non-null numbers.
std::optional<std::vector<double>> QueryVector(const Expr& expr) {
  if (expr.kind() != ExprKind::kLiteral || !expr.literal() || !expr.literal()->is_valid) return std::nullopt;
  const auto* list = dynamic_cast<const arrow::BaseListScalar*>(expr.literal().get());
  if (list == nullptr || !list->value || list->value->null_count() > 0 || list->value->length() == 0) {
    return std::nullopt;
  }
  auto cast = arrow::compute::Cast(*list->value, arrow::float64());
  if (!cast.ok()) return std::nullopt;
  const auto& doubles = static_cast<const arrow::DoubleArray&>(**cast);
  return std::vector<double>(doubles.raw_values(), doubles.raw_values() + doubles.length());
}

// distance(col(c), q) or distance(q, col(c)), `c` a column of the scan below the Project.
std::optional<DistanceCall> MatchDistance(const ExprPtr& expr) {
  const ExprPtr call = StripAlias(expr);
  if (call->kind() != ExprKind::kCall || call->children().size() != 2) return std::nullopt;
  DistanceCall out;
  if (call->name() == "embedding_cosine_distance") {
    out.metric = "cosine";
  } else if (call->name() == "embedding_euclidean_distance") {
    out.metric = "l2";
  } else {
    return std::nullopt;
  }
  for (int side = 0; side < 2; ++side) {
    const auto& column = call->children()[side];
    const auto& query = call->children()[1 - side];
    if (column->kind() != ExprKind::kColumn) continue;
    auto vector = QueryVector(*query);
    if (!vector) continue;
    out.column = column->name();
    out.query = std::move(*vector);
    return out;
  }
  return std::nullopt;
}

// The scan as it would be with `note` as its explain note (nullptr: unchanged).
arrow::Result<LogicalPlanPtr> WithNote(const LogicalPlanPtr& scan, const std::string& note) {
  if (scan->scan().lance.nearest_note == note) return nullptr;
  ScanInfo info = scan->scan();
  info.lance.nearest_note = note;
  return LogicalPlan::Scan(std::move(info));
}

arrow::Result<Transformed> RewriteOnce(const LogicalPlanPtr& plan) {
  const Transformed unchanged{plan, false};
  if (plan->kind() != LogicalKind::kLimit || plan->limit() <= 0 || plan->limit() == LogicalPlan::kNoLimit) {
    return unchanged;
  }
  const LogicalPlanPtr& sort = plan->inputs()[0];
  if (sort->kind() != LogicalKind::kSort) return unchanged;
  const SortSpec& spec = sort->sort();
  if (spec.keys.size() != 1) return unchanged;
  const LogicalPlanPtr& project = sort->inputs()[0];
  if (project->kind() != LogicalKind::kProject) return unchanged;
  const LogicalPlanPtr& scan = project->inputs()[0];
  if (scan->kind() != LogicalKind::kScan || scan->scan().format != FileFormat::kLance) return unchanged;
  const ScanInfo& info = scan->scan();
  if (info.lance.nearest) return unchanged;

  // The sort key: a column the Project defines as the distance (Ketch sorts by columns only).
  std::optional<DistanceCall> distance;
  const ExprPtr& key = spec.keys[0];
  if (key->kind() != ExprKind::kColumn) return unchanged;
  for (const auto& expr : project->exprs()) {
    if (expr->OutputName() == key->name()) distance = MatchDistance(expr);
  }
  if (!distance) return unchanged;

  // From here on the query is a top-k by distance over this Lance scan: say why it stays brute
  // force when it does.
  auto keep = [&](const std::string& why) -> arrow::Result<Transformed> {
    ARROW_ASSIGN_OR_RAISE(auto noted, WithNote(scan, "None (brute force: " + why + ")"));
    if (!noted) return unchanged;
    ARROW_ASSIGN_OR_RAISE(auto rebuilt, project->WithInputs({noted}));
    ARROW_ASSIGN_OR_RAISE(rebuilt, sort->WithInputs({rebuilt}));
    ARROW_ASSIGN_OR_RAISE(rebuilt, plan->WithInputs({rebuilt}));
    return Transformed{rebuilt, true};
  };
  if (spec.descending[0]) return keep("a descending sort asks for the farthest rows");
  if (spec.nulls_first[0]) return keep("nulls first: rows without a distance would come first");
  if (info.limit >= 0) return keep("a limit below the sort");
  if (info.filter) {
    auto translated = TranslateLanceFilter(info.filter, *info.file_schema);
    if (!translated.residual.empty()) {
      return keep("the filter " + translated.residual[0]->ToString() +
                  " cannot run exactly inside Lance, before the search");
    }
  }
  const io::LanceVectorIndex* index = nullptr;
  const io::LanceVectorIndex* other_metric = nullptr;
  for (const auto& candidate : info.lance.vector_indexes) {
    if (candidate.column != distance->column) continue;
    if (candidate.metric == distance->metric) {
      index = &candidate;
      break;
    }
    other_metric = &candidate;
  }
  if (!index && other_metric) {
    return keep("the index " + other_metric->name + " (" + other_metric->index_type + ") on '" +
                distance->column + "' has metric " + other_metric->metric + ", the query uses " +
                distance->metric);
  }
  if (!index) return keep("no vector index on '" + distance->column + "'");

  ScanInfo rewritten = info;
  io::LanceNearest nearest;
  nearest.column = distance->column;
  nearest.query = std::move(distance->query);
  nearest.k = plan->limit_end();  // the offset's rows are found too, then skipped by the limit
  nearest.metric = distance->metric;
  nearest.index_name = index->name;
  nearest.index_type = index->index_type;
  nearest.nprobes = PushDownNearest::kNprobes;
  nearest.refine_factor = PushDownNearest::kRefineFactor;
  rewritten.lance.nearest = std::move(nearest);
  rewritten.lance.nearest_note.clear();
  ARROW_ASSIGN_OR_RAISE(LogicalPlanPtr rebuilt, LogicalPlan::Scan(std::move(rewritten)));
  ARROW_ASSIGN_OR_RAISE(rebuilt, project->WithInputs({rebuilt}));
  ARROW_ASSIGN_OR_RAISE(rebuilt, sort->WithInputs({rebuilt}));
  ARROW_ASSIGN_OR_RAISE(rebuilt, plan->WithInputs({rebuilt}));
  return Transformed{rebuilt, true};
}

}  // namespace

arrow::Result<Transformed> PushDownNearest::Apply(const LogicalPlanPtr& plan) const {
  return RewriteTopDown(plan, RewriteOnce);
}

}  // namespace ketch
