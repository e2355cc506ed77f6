"""The hash exchange a node runs under on Ray, and how many buckets its shuffle makes.

``exchange_of(node)`` is ``PyPlan.hash_exchange`` (cpp/ketch/distributed/stage_planner) plus the
joins it leaves out: a keyed join whose key types differ (int64 with int32, string with
large_string; built with the raw plan API: ``DataFrame.join`` casts its keys itself). The native
join compares such keys cast to one type (``JoinKeyCast``), and equal values of different types
may hash apart, so each side is shuffled on hidden columns holding its keys cast to that type
(equal after the cast, equal hashes), and the join itself runs unchanged over the sides' own
columns in every reduce task (``Exchange.leaf`` drops the hidden columns).

``shuffle_width`` is Daft's rule for the number of buckets (reduce partitions): a join or a
repartition by keys takes its widest input's partition count (Daft's physical planner:
``max(left, right)``); an aggregation (groupby, distinct) or a window its input's count, at most
``shuffle_aggregation_default_partitions`` (200, Daft's config); both at most the runner's
``max_shuffle_partitions`` when the user set one. A repartition with a count keeps it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ketch import _core

HIDDEN_KEY = "__ketch_shuffle_key_{}__"
DEFAULT_AGGREGATION_PARTITIONS = 200  # Daft's shuffle_aggregation_default_partitions


@dataclass(frozen=True)
class Exchange:
    """``keys[i]``: the columns input i is hash-partitioned by; ``fixed``: the buckets the node
    fixes (repartition(n, keys)) or -1; ``sides[i]``: the plan shuffled for input i (the input
    itself, or with hidden cast key columns added); ``originals``: the node's inputs when the
    sides hold hidden columns, else None."""

    keys: list[list[str]]
    fixed: int
    sides: list[Any]
    originals: list[Any] | None = None

    def leaf(self, index: int, plan: Any) -> Any:
        """What the node reads at input ``index`` from ``plan`` (a plan with side ``index``'s
        columns): ``plan`` itself, or without the hidden key columns."""
        if self.originals is None:
            return plan
        return plan.project([_core.col(name) for name in self.originals[index].schema().names])


def exchange_of(node: Any) -> Exchange | None:
    """The hash exchange ``node`` runs under, or None (see the module's docstring)."""
    exchange = node.hash_exchange()
    if exchange is not None:
        keys, fixed = exchange
        return Exchange([list(k) for k in keys], fixed, list(node.inputs()))
    if node.kind() != "Join" or node.join_type() == "cross":
        return None
    pairs = node.join_key_casts()
    if not pairs or all(cast is None for _, _, cast in pairs):
        return None
    originals = list(node.inputs())
    sides, keys = [], []
    for side, child in enumerate(originals):
        exprs = [_core.col(name) for name in child.schema().names]
        side_keys = []
        for i, pair in enumerate(pairs):
            key, cast = pair[side], pair[2]
            if cast is None:
                side_keys.append(key)
                continue
            hidden = HIDDEN_KEY.format(i)
            exprs.append(_core.col(key).cast(cast).alias(hidden))
            side_keys.append(hidden)
        sides.append(child.project(exprs))
        keys.append(side_keys)
    return Exchange(keys, -1, sides, originals)


def shuffle_width(node: Any, exchange: Exchange | None, widest: int, config: Any, cap: int | None) -> int:
    """The buckets of ``node``'s hash shuffle over inputs whose widest has ``widest`` partitions
    (Daft's rule, see the module's docstring); ``cap``: the runner's ``max_shuffle_partitions``
    when the user set it, else None. At least 1."""
    if exchange is not None and exchange.fixed > 0:
        return exchange.fixed
    n = max(1, widest)
    if node.kind() in ("Aggregate", "Window"):
        n = min(n, aggregation_partitions(config))
    if cap is not None:
        n = min(n, cap)
    return max(1, n)


def aggregation_partitions(config: Any) -> int:
    """``shuffle_aggregation_default_partitions`` of ``config`` (Daft's knob, default 200)."""
    value = getattr(config, "shuffle_aggregation_default_partitions", DEFAULT_AGGREGATION_PARTITIONS)
    return max(1, int(value or DEFAULT_AGGREGATION_PARTITIONS))
