"""The hash and random shuffles through Ray's object store (``ObjectStoreShuffle``, part of
``QueryStages``): each map task leaves its N buckets as N objects; the reduce tasks read bucket j
of every map task. Also the choice between this shuffle and the Flight shuffle
(``shuffle_algorithm``) and the buckets' compression."""

from __future__ import annotations

import math
from typing import Any

from ketch.runners.ray.flight_shuffle import (
    normalize_compression,
)
from ketch.runners.ray.stage_tasks import Pending, _placeholder


def _random_repartition(node: Any) -> bool:
    """``repartition(n)`` without keys: rows spread evenly, no hash (not a hash exchange)."""
    return node.kind() == "Repartition" and not node.params()["by"]


class ObjectStoreShuffle:
    """The object-store shuffle methods of ``QueryStages`` (stages.py)."""

    def _shuffle(self, pending: Pending, keys: list[str], buckets: int) -> list[list[Any]]:
        """The map side: per map output, the refs of its ``buckets`` bucket tables (one output per
        task of ``pending`` with map_reduce, one per merge group with pre_shuffle_merge)."""
        algorithm = self._shuffle_algorithm(pending.num_tasks, buckets)
        if algorithm == "pre_shuffle_merge":
            return self._pre_shuffle_merge(pending, keys, buckets)
        if algorithm == "flight_shuffle":
            return self._flight_shuffle(pending, keys, buckets)
        return list(self._stage(pending, buckets, keys, "shuffle map"))

    def _shuffle_algorithm(self, map_tasks: int, buckets: int) -> str:
        """The config's ``shuffle_algorithm``; "auto" picks pre_shuffle_merge when
        sqrt(M x N) > ``pre_shuffle_merge_partition_threshold``, as Daft does."""
        algorithm = getattr(self.config, "shuffle_algorithm", "auto")
        if algorithm != "auto":
            return str(algorithm)
        threshold = getattr(self.config, "pre_shuffle_merge_partition_threshold", 200)
        return "pre_shuffle_merge" if math.sqrt(map_tasks * buckets) > threshold else "map_reduce"

    def _pre_shuffle_merge(self, pending: Pending, keys: list[str], buckets: int) -> list[list[Any]]:
        """Map tasks keep their whole output on their node; the outputs of each node are then
        grouped in task order up to ``pre_shuffle_merge_threshold`` bytes, and one task per group,
        on that node's worker, concatenates and hash-partitions the group into ``buckets``."""
        threshold = getattr(self.config, "pre_shuffle_merge_threshold", 1 << 30)
        groups: dict[str, list[tuple[list[Any], int]]] = {}  # node -> [(refs, bytes)]
        for refs, meta in self._stage_with_meta(pending, 0, None, "pre-shuffle map"):
            node_groups = groups.setdefault(meta["node_id"], [([], 0)])
            group_refs, size = node_groups[-1]
            if group_refs and size + meta["bytes"][0] > threshold:
                node_groups.append(([], 0))
                group_refs, size = node_groups[-1]
            group_refs.append(refs[0])
            node_groups[-1] = (group_refs, size + meta["bytes"][0])
        nodes = [node for node, node_groups in groups.items() for _ in node_groups]
        inputs = [[group_refs] for node_groups in groups.values() for group_refs, _ in node_groups]
        merge = Pending(_placeholder(pending.plan), len(inputs), False, inputs, label="pre-shuffle merge")
        return list(self._stage(merge, buckets, keys, "shuffle map", preferred_nodes=nodes))

    def _compression(self) -> str | None:
        return normalize_compression(getattr(self.config, "flight_shuffle_compression", "lz4"))
