"""Float sums give the same bits on every run: partial states are merged in stream order, not in
the order workers happen to finish (floating-point addition does not associate). TPC-H Q15
compares a CTE's sums, computed twice, for equality; with an order-dependent merge it found no
row on some runs."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

import ketch
from ketch import col


def _values(n: int) -> pa.Table:
    rng = np.random.default_rng(7)
    # Magnitudes from 1e-3 to 1e9: the sum's last bits depend on the order of the additions.
    v = rng.random(n) * 10.0 ** rng.integers(-3, 10, n)
    return pa.table({"k": rng.integers(0, 500, n), "v": v})


def test_grouped_and_global_float_sums_are_the_same_on_every_run():
    table = _values(400_000)
    with ketch.execution_config_ctx(default_morsel_size=4096):
        df = ketch.from_arrow(table).into_partitions(8)
        grouped = [
            df.groupby("k").agg(col("v").sum().alias("s"), col("v").mean().alias("m")).sort("k").to_pydict()
            for _ in range(6)
        ]
        total = [df.agg(col("v").sum().alias("s")).to_pydict()["s"][0] for _ in range(6)]
    assert all(g == grouped[0] for g in grouped[1:])
    assert len(set(total)) == 1
    assert math.isclose(total[0], math.fsum(table.column("v").to_pylist()), rel_tol=1e-12)
    first = {k: s for k, s in zip(grouped[0]["k"], grouped[0]["s"], strict=True)}
    exact: dict[int, list[float]] = {}
    for k, v in zip(table.column("k").to_pylist(), table.column("v").to_pylist(), strict=True):
        exact.setdefault(k, []).append(v)
    assert all(math.isclose(first[k], math.fsum(vs), rel_tol=1e-12) for k, vs in exact.items())


def test_a_sum_compared_with_its_own_maximum_finds_its_row_every_time():
    table = _values(200_000)
    query = (
        "WITH r AS (SELECT k, sum(v) AS s FROM t GROUP BY k) SELECT k FROM r WHERE s = (SELECT max(s) FROM r)"
    )
    sums: dict[int, float] = {}
    for k, v in zip(table.column("k").to_pylist(), table.column("v").to_pylist(), strict=True):
        sums[k] = sums.get(k, 0.0) + v
    best = max(sums, key=lambda k: sums[k])
    with ketch.execution_config_ctx(default_morsel_size=4096):
        for _ in range(5):
            assert ketch.sql(query, t=ketch.from_arrow(table).into_partitions(4)).to_pydict() == {"k": [best]}
