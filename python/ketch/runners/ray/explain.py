"""The distributed plan of a query on Ray, described without running it (``explain(show_all=True)``
prints it under "== Distributed Plan =="): the stages in the order they would run, each with its
operators, its exchange (hash shuffle and its algorithm, broadcast, range shuffle, row-range
cuts) and its task count. It mirrors the stage cutting of stages.py; figures that are only known
at run time are named as such (a join's broadcast depends on the right side's measured bytes, a
sort's boundaries on the sample, a limit may stop tasks early)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ketch.runners.ray.exchange import exchange_of, shuffle_width
from ketch.runners.ray.sort_stage import is_distributed_sort
from ketch.runners.ray.stage_tasks import spread_runs
from ketch.runners.ray.stages import BROADCAST_RIGHT, ORDERED, SOURCES


@dataclass
class _Walk:
    config: Any
    max_shuffle_partitions: int
    broadcast_threshold: int
    shuffle_cap: int | None = None  # the user's max_shuffle_partitions (hash shuffles)
    workers: int = 1  # engine workers (one per alive node)
    lines: list[str] = field(default_factory=list)
    stages: int = 0

    def stage(self, kind: str, what: str, tasks: int) -> None:
        """One stage line; ``tasks`` < 0: known only at run time."""
        self.stages += 1
        count = "tasks known at run time" if tasks < 0 else f"{tasks} task{'s' * (tasks != 1)}"
        self.lines.append(f"stage {self.stages} ({kind}): {what}; {count}")

    def algorithm(self, maps: int, buckets: int) -> str:
        algorithm = getattr(self.config, "shuffle_algorithm", "auto")
        if algorithm == "auto":
            threshold = getattr(self.config, "pre_shuffle_merge_partition_threshold", 200)
            algorithm = "pre_shuffle_merge" if math.sqrt(maps * buckets) > threshold else "map_reduce"
        return str(algorithm)

    def distributable(self, node: Any) -> bool:
        kind = node.kind()
        if kind in ORDERED:
            return all(self.distributable(child) for child in node.inputs())
        random = kind == "Repartition" and not node.params()["by"]
        split = kind == "Aggregate" and node.split_aggregate() is not None
        return (
            kind in SOURCES
            or node.is_partition_local()
            or exchange_of(node) is not None
            or random
            or split
            or is_distributed_sort(node)
        )

    def walk(self, node: Any) -> tuple[str, int, str]:
        """(operators of the stage being built, its tasks, its kind) for ``node``; finished
        stages below it are appended to ``lines``."""
        kind = node.kind()
        if kind in SOURCES:
            runs = spread_runs(node.source_task_runs(), self.workers)  # stages.py
            partitions = sum(count for _, count in runs)
            if len(runs) < partitions:
                # The count returned is its partitions (what the stages above see); the label says
                # how many engine tasks make them.
                tasks = f"{len(runs)} task{'s' * (len(runs) != 1)}"
                label = (
                    f"{kind} (run as {tasks}: a split row group's ranges at most one run per worker, "
                    "the row group read once by a read task and shared)"
                )
                return label, partitions, "map"
            return kind, partitions, "map"
        if node.is_partition_local():
            label, tasks, stage_kind = self.walk(node.inputs()[0])
            return f"{label} -> {kind}", tasks, stage_kind
        if is_distributed_sort(node):
            if kind == "Limit":  # a top-k
                label, tasks, stage_kind = self.walk(node.inputs()[0].inputs()[0])
                k = node.limit_end()  # offset + limit rows per task
                if tasks <= 1:
                    return f"{label} -> Sort -> Limit", tasks, stage_kind
                self.stage("top-k map", f"{label} -> Sort -> Limit {k} (per task)", tasks)
                return "top-k merge: Sort -> Limit", 1, "reduce"
            label, tasks, stage_kind = self.walk(node.inputs()[0])
            if tasks <= 1:
                return f"{label} -> Sort", tasks, stage_kind
            n = max(1, min(tasks, self.max_shuffle_partitions))
            self.stage("sample", f"{label} -> sample of the sort keys", tasks)
            self.stage("range shuffle map", f"range partition into {n} (boundaries from the sample)", tasks)
            return "Sort", n, "reduce"
        split = node.split_aggregate() if kind == "Aggregate" else None
        if split is not None:
            label, tasks, _ = self.walk(node.inputs()[0])
            exchange = node.hash_exchange()
            if exchange is None:
                self.stage("map", f"{label} -> partial Aggregate", tasks)
                return "final Aggregate", 1, "reduce"
            n = shuffle_width(node, None, tasks, self.config, self.shuffle_cap)
            how = f"hash shuffle by {exchange[0][0]} into {n} ({self.algorithm(tasks, n)})"
            self.stage("shuffle map", f"{label} -> partial Aggregate -> {how}", tasks)
            return "final Aggregate", n, "reduce"
        if kind == "Repartition" and not node.params()["by"]:
            label, tasks, _ = self.walk(node.inputs()[0])
            n = node.params()["num_partitions"]
            n = n if n > 0 else max(1, tasks)
            self.stage(
                "shuffle map", f"{label} -> random shuffle into {n} ({self.algorithm(tasks, n)})", tasks
            )
            return "Repartition (random)", n, "reduce"
        if kind == "Join" and node.join_type() == "cross":
            for child in node.inputs():
                label, tasks, stage_kind = self.walk(child)
                self.stage(stage_kind, label, tasks)
            self.lines.append(
                "    cross Join: the side with fewer rows is broadcast to one task per partition of the other"
            )
            return "cross Join", -1, "reduce"
        exchange = exchange_of(node)
        if exchange is not None:
            sides = [self.walk(side) for side in exchange.sides]
            n = shuffle_width(node, exchange, max(t for _, t, _ in sides), self.config, self.shuffle_cap)
            for (label, tasks, _), side_keys in zip(sides, exchange.keys, strict=True):
                self.stage(
                    "shuffle map",
                    f"{label} -> hash shuffle by {side_keys} into {n} ({self.algorithm(tasks, n)})",
                    tasks,
                )
            strategy = node.join_strategy() if kind == "Join" else ""
            if kind == "Join" and strategy:
                self.lines.append(f"    (join strategy = {strategy})")
            if kind == "Join" and node.join_type() == "right" and strategy == "broadcast":
                self.lines.append(
                    "    (strategy broadcast: the left side is broadcast to the right side's tasks)"
                )
            elif kind == "Join" and node.join_type() in BROADCAST_RIGHT and strategy == "broadcast":
                self.lines.append(
                    "    (strategy broadcast: the right side is broadcast to the left side's tasks)"
                )
            elif kind == "Join" and node.join_type() in BROADCAST_RIGHT and not strategy:
                self.lines.append(
                    f"    (when the right side's shuffled bytes are at most {self.broadcast_threshold} "
                    "the right side is broadcast to the left side's tasks instead)"
                )
            return kind, n, "reduce"
        if kind in ORDERED and self.distributable(node):
            if kind == "Concat":
                tasks = 0
                for child in node.inputs():
                    label, t, stage_kind = self.walk(child)
                    self.stage(stage_kind, label, t)
                    tasks += t
                return "Concat (the inputs' partitions in order)", tasks, "reduce"
            label, tasks, stage_kind = self.walk(node.inputs()[0])
            params = node.params()
            if kind == "Limit":
                self.stage(
                    stage_kind,
                    f"{label} -> Limit (per task; stops once {params['limit']} rows are done)",
                    tasks,
                )
                return f"first {params['limit']} rows", 1, "reduce"
            if kind == "Write":
                name = {"parquet": "Parquet", "csv": "CSV", "json": "JSON"}[params["format"]]
                self.stage(
                    stage_kind,
                    f"{label} -> Write{name} (staged, committed when every task succeeded)",
                    tasks,
                )
                return "paths", 1, "reduce"
            self.stage(stage_kind, label, tasks)
            if kind == "IntoPartitions":
                return (
                    f"IntoPartitions (row-range cuts into {params['num_partitions']})",
                    params["num_partitions"],
                    "reduce",
                )
            return f"IntoBatches (row-range cuts of {params['batch_size']} rows)", -1, "reduce"
        for child in node.inputs():
            if self.distributable(child):
                label, tasks, stage_kind = self.walk(child)
                self.stage(stage_kind, label, tasks)
            else:
                self.walk(child)
        count, _exact = node.num_partitions()
        self.lines.append(f"driver: {kind} on the native executor over its inputs' partitions")
        return f"driver {kind} output", max(1, count), "map"


def describe(
    root: Any,
    config: Any,
    max_shuffle_partitions: int,
    broadcast_threshold: int,
    shuffle_cap: int | None = None,
    workers: int = 1,
) -> str:
    """The stages of ``root`` (an optimized PyPlan) on Ray, one line each, without running it
    (``max_shuffle_partitions``: the sort's most ranges; ``shuffle_cap``: the user's cap on hash
    shuffles, exchange.py)."""
    walk = _Walk(config, max(1, max_shuffle_partitions), broadcast_threshold, shuffle_cap, max(1, workers))
    if walk.distributable(root):
        label, tasks, stage_kind = walk.walk(root)
        walk.stage(stage_kind, label, tasks)
    else:
        walk.walk(root)
    return "\n".join(walk.lines)
