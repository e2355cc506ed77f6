#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <string>

#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// What a plan node is expected to produce, without running it (explain's "Stats" line and the
/// join build side).
struct PlanStats {
  double rows = 0;           ///< output rows (estimate unless `exact`)
  double bytes = 0;          ///< output bytes as Arrow buffers (estimate unless `bytes_exact`)
  double selectivity = 1;    ///< the fraction of its input rows a filter (or a scan's pushed filter) keeps
  bool exact = false;        ///< `rows` is exact: in-memory data, unfiltered Parquet footers, and
                             ///< what keeps or caps their row counts (project, sort, limit, ...)
  bool bytes_exact = false;  ///< `bytes` is exact: in-memory data only
  bool has_selectivity = false;  ///< a filter, or a scan with a pushed filter
  int64_t num_partitions = 1;    ///< NumPartitions(plan)
  bool partitions_exact = true;
};

/// Estimates a plan's output from what is known before running it:
/// - in-memory sources: their rows and the bytes of their Arrow buffers (exact);
/// - scans (once the optimizer made their scan tasks): Parquet footer rows and the uncompressed
///   sizes of the column chunks read; CSV/JSON: the file bytes (scaled by the share of columns
///   read), rows = bytes / 100; before scan tasks: file sizes the same way;
/// - a filter (or a scan's pushed filter) keeps a quarter (DuckDB-like default selectivity), a
///   limit caps, a sample keeps its fraction, an aggregation gives one row (no group-by) or a
///   tenth, an inner join the larger input, concat the sum; every other node keeps its input's;
/// - other nodes' bytes: rows x the input's bytes per row, scaled by the ratio of the output to
///   the input schema's estimated row width (EstimatedRowWidth).
/// Never fails; unknown sizes count as 0.
PlanStats EstimateStats(const LogicalPlan& plan);

/// EstimateStats(plan).rows, computed without partition counts or Parquet column sizes: for
/// choosing a join's build side and a UDF's morsel size.
double EstimateRows(const LogicalPlan& plan);

/// A schema's bytes per row as Arrow buffers, guessed from its types: fixed-width types their
/// width, strings and binaries 20 bytes (offset + 16 bytes of data), lists 4 elements, plus a
/// validity bit per column; extension types by their storage type. At least 1.
double EstimatedRowWidth(const arrow::Schema& schema);

/// Daft's explain line for one node, e.g. "Stats = { Approx num rows = 250, Approx size bytes =
/// 2.0 KiB, Selectivity = 0.25, Num partitions = 4 }" ("Num rows" without "Approx" when exact).
std::string StatsLine(const PlanStats& stats);

/// `bytes` for people: "40 B", "8.0 KiB", "1.5 MiB", "3.2 GiB", "1.0 TiB".
std::string FormatBytes(double bytes);

/// The logical plan in Daft's explain style (LogicalPlan::ToString) with a Stats line under each
/// node: for the optimized plan, whose scans have their scan tasks.
std::string PlanToStringWithStats(const LogicalPlan& plan);

}  // namespace ketch
