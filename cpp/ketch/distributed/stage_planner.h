#pragma once

#include <arrow/api.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ketch/plan/logical/logical_plan.h"

namespace ketch::distributed {

/// A stage's task runs a fragment of the optimized plan restricted to one input partition: a
/// source (a scan task, an in-memory partition) and the partition-local operators above it
/// (IsPartitionLocal). The Ray runner builds its stages from the plan with PlanHashExchange and
/// these functions (python/ketch/runners/ray/stages.py).
/// `fragment` restricted to its input partition `partition`: the scan keeps only that scan task
/// (renumbered as group 0, its source row numbers kept, so errors name the rows of the whole
/// scan), an in-memory source only that partition's batches. Invalid for a partition out of range.
/// With `count` > 1: input partitions `partition` .. `partition + count - 1` of a scan, as scan
/// tasks 0 .. count-1 of one fragment (see SourceTaskRuns).
arrow::Result<LogicalPlanPtr> PartitionFragment(const LogicalPlanPtr& fragment, int64_t partition,
                                                int64_t count = 1);

/// The distributed tasks over the source at the bottom of `fragment` (following input 0), as
/// (first partition, partition count) runs covering 0 .. N-1 in order: one partition each, except
/// that the consecutive scan tasks holding the row ranges of one split Parquet row group form one
/// run, so that one task (one executor) reads that row group once, as the native runner does,
/// instead of every task over one of its ranges reading it again.
std::vector<std::pair<int64_t, int64_t>> SourceTaskRuns(const LogicalPlan& fragment);

/// `plan` with every in-memory source that feeds an expensive pipeline (a Python UDF, a URL
/// download, an image kernel: CallsExpensiveFunction, in a project or filter of the same
/// partition-local pipeline) and holds fewer partitions than `workers` cut into 2 x `workers`
/// partitions of consecutive rows (as even as can be, at least 64 rows each: a smaller source
/// stays whole; batches are sliced, not copied), so that the Ray runner gives every engine worker a share of
/// the expensive work instead of one task per partition: `from_glob_path(...)` and `from_pydict(...)` are one
/// partition. The native runner does not need it (its morsels spread one partition over its
/// threads), so only the Ray runner applies it, after the optimizer. A source whose partitions an
/// into_partitions above it cuts (through partition-local operators) is left as it is. Row numbers in errors
/// stay those of the whole source (PartitionFragment keeps each piece's first row). The plan itself when
/// nothing changes.
arrow::Result<LogicalPlanPtr> SplitInMemorySources(const LogicalPlanPtr& plan, int64_t workers);

/// Per key pair of an equi-join, the type both keys are compared in when their types differ
/// (JoinKeyCast), nullptr where they are equal; empty for a join without keys (or another node).
/// The Ray runner hash-shuffles such a join on the keys cast to these types (equal after the cast
/// means equal hashes), with the join itself unchanged.
std::vector<std::shared_ptr<arrow::DataType>> JoinKeyCasts(const LogicalPlan& node);

/// A node that runs bucket by bucket after a hash shuffle of its inputs (a hash exchange): input i
/// is hash-partitioned by the columns `keys[i]` (C++ RowHashes, the same in every process) into
/// the same N buckets, and the node then runs once per bucket over bucket j of every input.
/// Aggregations with group keys (groupby/agg, distinct) and joins whose key pairs have equal
/// types (so equal keys hash alike) qualify; so does a hash repartition, whose N is its own.
struct HashExchange {
  std::vector<std::vector<std::string>> keys;  ///< one list per input of the node
  /// Buckets fixed by the node (repartition(n, keys)); -1: the runner chooses.
  int64_t num_partitions = -1;
};

/// The hash exchange `node` can run under, or nullopt when it must see all its input at once
/// (sort, limit, writes, global aggregations, concat, into_partitions, ...: they stay on the
/// driver) or is partition-local (see IsPartitionLocal).
std::optional<HashExchange> PlanHashExchange(const LogicalPlan& node);

/// True for operators that map each input partition to one output partition on their own
/// (project, filter, explode, sample): they run inside the task of the stage below them.
bool IsPartitionLocal(LogicalKind kind);

/// The node kind's name as the Python runner matches it ("Aggregate", "Join", "Scan", ...).
std::string LogicalKindName(LogicalKind kind);

}  // namespace ketch::distributed
