#pragma once

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Answers a top-k by vector distance over a Lance dataset with Lance's nearest-neighbour search:
///
///   Limit(k, Sort(d asc, Project(..., distance(col(c), q) as d, ..., Scan[Lance])))
///
/// (`distance` is embedding_cosine_distance or embedding_euclidean_distance, either argument order,
/// `q` a literal vector) keeps every
/// node and pushes `nearest = {c, q, k, metric}` into the scan when the dataset has a vector index on
/// `c` whose metric matches (cosine ↔ "cosine", euclidean ↔ "l2"). The scan then returns Lance's k
/// nearest rows (an IVF search refined with exact distances, the scan's filter applied first as
/// Lance's prefilter), and the Project, Sort and Limit above recompute `d` with Ketch's own kernel
/// and order by it: the values of `d` are the brute-force ones, only the candidate rows come from
/// the index (recall below 1 is possible with an approximate index).
///
/// Not rewritten (the plan stays the exact brute force, and the scan's explain says why): no index
/// on `c`, an index with another metric, a scan filter Lance cannot evaluate exactly (a conjunct on a
/// floating-point column or one Lance SQL cannot express), a limit already in the scan, a
/// descending or nulls-first sort, more than one sort key, anything else between the nodes above
/// (a Filter between Sort and Scan is pushed into the scan first by PushDownFilter). Runs once,
/// after the pushdowns settled.
class PushDownNearest : public OptimizerRule {
 public:
  std::string name() const override { return "PushDownNearest"; }
  arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const override;

  /// IVF partitions probed and the refine factor (k * refine_factor candidates re-ranked with
  /// exact distances) of every pushed search.
  static constexpr int64_t kNprobes = 20;
  static constexpr int64_t kRefineFactor = 10;
};

}  // namespace ketch
