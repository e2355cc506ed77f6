"""Two-phase aggregation plans (the Ray runner's partial aggregate -> shuffle -> final aggregate),
run here on the native executor: ``PyPlan.split_aggregate`` gives a partial plan (input rows ->
one row of partial states per group) and a final plan (partial states of any number of partial
plans -> the aggregate's output). Partial over each of several chunks of the input, then final
over all their states, equals the full aggregate; the phases show in explain text and survive
plan serialization."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import _core, col
from ketch.context import get_execution_config
from ketch.errors import KetchError


def _config() -> _core.ExecutionConfig:
    return get_execution_config().to_native()


def _execute(plan: _core.PyPlan) -> pa.Table:
    _partitions, reader = plan.execute(_config(), None)
    return reader.read_all()


def _aggregate_plan(df: ketch.DataFrame) -> _core.PyPlan:
    """The optimized plan of ``df`` (its root an Aggregate)."""
    plan = df._plan.optimize(config=_config())
    assert plan.kind() == "Aggregate", repr(plan)
    return plan


def _two_phase(plan: _core.PyPlan, chunks: list[pa.Table]) -> tuple[pa.Table, list[pa.Table]]:
    """The aggregate ``plan`` (over an in-memory source) run as partial per chunk + one final over
    every chunk's states, through plan bytes as on Ray. Returns (result, states per chunk)."""
    split = plan.split_aggregate()
    assert split is not None
    partial, final = split
    states = []
    for chunk in chunks:
        source = _core.PyPlan.in_memory(chunk)
        task = _core.PyPlan.from_bytes(partial.with_inputs([source]).to_bytes())
        states.append(_execute(task))
    merged = pa.concat_tables(states) if states else partial.schema().empty_table()
    final_task = _core.PyPlan.from_bytes(final.with_inputs([_core.PyPlan.in_memory(merged)]).to_bytes())
    return _execute(final_task), states


def _chunks(table: pa.Table, n: int) -> list[pa.Table]:
    size = math.ceil(table.num_rows / n) if table.num_rows else 0
    return [table.slice(i * size, size) for i in range(n)] if size else [table]


def _sorted_rows(table: pa.Table, keys: list[str]) -> list[dict[str, Any]]:
    rows = table.to_pylist()
    return sorted(rows, key=lambda r: tuple((r[k] is None, r[k] if r[k] is not None else 0) for k in keys))


def _close(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for k in x:
            if isinstance(x[k], float) and isinstance(y[k], float):
                assert x[k] == pytest.approx(y[k], rel=1e-12, abs=1e-9), (k, x, y)
            else:
                assert x[k] == y[k], (k, x, y)


def _random_table(rows: int, groups: int, seed: int) -> pa.Table:
    rng = random.Random(seed)
    return pa.table(
        {
            "g": pa.array(
                [None if rng.random() < 0.05 else rng.randrange(groups) for _ in range(rows)], pa.int32()
            ),
            "s": pa.array([rng.choice(["a", "b", "c"]) for _ in range(rows)], pa.string()),
            "i": pa.array(
                [None if rng.random() < 0.1 else rng.randrange(-1000, 1000) for _ in range(rows)], pa.int64()
            ),
            "u": pa.array([rng.randrange(0, 50) for _ in range(rows)], pa.uint8()),
            "f": pa.array(
                [None if rng.random() < 0.1 else rng.uniform(-5, 5) for _ in range(rows)], pa.float32()
            ),
            "t": pa.array(
                [None if rng.random() < 0.2 else f"w{rng.randrange(30)}" for _ in range(rows)], pa.string()
            ),
        }
    )


ALL_MERGEABLE = [
    col("i").sum().alias("i_sum"),
    col("u").sum().alias("u_sum"),
    col("f").sum().alias("f_sum"),
    col("i").count().alias("i_count"),
    col("i").count("all").alias("i_count_all"),
    col("i").count("null").alias("i_count_null"),
    col("f").mean().alias("f_mean"),
    col("i").mean().alias("i_mean"),
    col("i").min().alias("i_min"),
    col("t").max().alias("t_max"),
    col("t").min().alias("t_min"),
    col("f").max().alias("f_max"),
    col("t").any_value(ignore_nulls=True).alias("t_any"),
]


@pytest.mark.parametrize("n_chunks", [1, 3, 7])
def test_partial_per_chunk_then_final_equals_the_full_aggregate(n_chunks):
    table = _random_table(5000, 40, seed=n_chunks)
    df = ketch.from_arrow(table).groupby("g", "s").agg(*ALL_MERGEABLE)
    plan = _aggregate_plan(df)
    expected = _execute(plan)
    actual, states = _two_phase(plan, _chunks(table, n_chunks))
    assert actual.schema == expected.schema
    assert actual.num_rows == expected.num_rows > 80
    _close(_sorted_rows(actual, ["g", "s"]), _sorted_rows(expected, ["g", "s"]))
    # One row of states per group present in the chunk, not one per input row.
    assert all(s.num_rows <= 41 * 3 for s in states)
    assert sum(s.num_rows for s in states) < table.num_rows


def test_partial_state_schema_names_each_aggregations_states():
    table = _random_table(100, 5, seed=1)
    plan = _aggregate_plan(
        ketch.from_arrow(table)
        .groupby("g")
        .agg(col("i").sum(), col("f").mean().alias("m"), col("u").count().alias("c"), col("t").max())
    )
    partial, final = plan.split_aggregate()
    assert partial.aggregate_phase() == "partial" and final.aggregate_phase() == "final"
    assert plan.aggregate_phase() == "full"
    assert partial.schema() == pa.schema(
        [
            ("g", pa.int32()),
            ("__a0_sum", pa.int64()),
            ("__a0_fsum", pa.float64()),
            ("__a1_sum", pa.float64()),
            ("__a1_count", pa.int64()),
            ("__a2_count", pa.int64()),
            ("__a3_max", pa.string()),
        ]
    )
    assert final.schema() == plan.schema()
    assert _execute(partial).schema == partial.schema()
    # the final plan's placeholder input has the partial schema
    assert final.inputs()[0].schema() == partial.schema()


def test_global_aggregate_has_one_state_row_per_chunk_and_one_result_row():
    table = _random_table(3000, 10, seed=2)
    df = ketch.from_arrow(table).agg(
        col("i").sum().alias("s"), col("f").mean().alias("m"), col("i").count().alias("c"), col("t").min()
    )
    plan = _aggregate_plan(df)
    actual, states = _two_phase(plan, _chunks(table, 4))
    assert [s.num_rows for s in states] == [1, 1, 1, 1]
    assert states[0].column_names[0] == "__ketch_all"
    _close(actual.to_pylist(), _execute(plan).to_pylist())


def test_global_aggregate_over_empty_input_gives_counts_zero_and_nulls():
    table = _random_table(0, 1, seed=3)
    df = ketch.from_arrow(table).agg(col("i").sum().alias("s"), col("i").count().alias("c"), col("t").max())
    plan = _aggregate_plan(df)
    actual, states = _two_phase(plan, [table])
    assert [s.num_rows for s in states] == [0]
    assert actual.to_pylist() == [{"s": None, "c": 0, "t": None}]
    assert actual.to_pylist() == _execute(plan).to_pylist()
    # no partial states at all (no map task output) gives the same
    split = plan.split_aggregate()
    assert split is not None
    final = split[1]
    assert _execute(final).to_pylist() == [{"s": None, "c": 0, "t": None}]


def test_grouped_aggregate_over_empty_input_is_empty():
    table = _random_table(0, 1, seed=4)
    plan = _aggregate_plan(ketch.from_arrow(table).groupby("g").agg(col("i").sum()))
    actual, _ = _two_phase(plan, [table])
    assert actual.num_rows == 0 and actual.schema == plan.schema()


def test_int64_overflow_is_detected_after_merging_chunks():
    # each chunk's sum fits in int64; the total does not
    big = 2**62
    table = pa.table({"g": [1, 1, 1, 2], "v": pa.array([big, big, big, 1], pa.int64())})
    plan = _aggregate_plan(ketch.from_arrow(table).groupby("g").agg(col("v").sum()))
    split = plan.split_aggregate()
    partial, final = split
    states = [_execute(partial.with_inputs([_core.PyPlan.in_memory(c)])) for c in _chunks(table, 4)]
    with pytest.raises(KetchError, match="overflows int64"):
        _execute(final.with_inputs([_core.PyPlan.in_memory(pa.concat_tables(states))]))
    with pytest.raises(KetchError, match="overflows int64"):
        _execute(plan)


def test_float_keys_minus_zero_and_zero_are_one_group_across_chunks():
    table = pa.table({"k": [0.0, -0.0, 1.5, -0.0, 0.0, None], "v": [1, 2, 3, 4, 5, 6]})
    plan = _aggregate_plan(
        ketch.from_arrow(table).groupby("k").agg(col("v").sum(), col("v").count().alias("n"))
    )
    actual, _ = _two_phase(plan, _chunks(table, 3))
    rows = {(r["k"] if r["k"] is None else float(r["k"])): (r["v"], r["n"]) for r in actual.to_pylist()}
    assert rows == {0.0: (12, 4), 1.5: (3, 1), None: (6, 1)}
    assert actual.num_rows == 3


@pytest.mark.parametrize(
    "agg",
    [
        col("i").agg_list(),
        col("t").agg_concat(),
        col("i").approx_count_distinct(),
        col("f").stddev(),
    ],
)
def test_value_collecting_aggregations_do_not_split(agg):
    table = _random_table(50, 5, seed=5)
    plan = _aggregate_plan(ketch.from_arrow(table).groupby("g").agg(col("i").sum().alias("x"), agg))
    assert plan.split_aggregate() is None


def test_non_aggregates_do_not_split():
    table = _random_table(10, 2, seed=6)
    plan = ketch.from_arrow(table).where(col("i") > 0)._plan.optimize(config=_config())
    assert plan.split_aggregate() is None
    assert plan.aggregate_phase() is None


def test_explain_text_names_the_phase_and_plan_bytes_keep_it():
    table = _random_table(200, 5, seed=7)
    plan = _aggregate_plan(ketch.from_arrow(table).groupby("g").agg(col("i").sum(), col("f").mean()))
    partial, final = plan.split_aggregate()
    assert repr(partial).startswith("* Aggregate (partial): ")
    assert repr(final).startswith("* Aggregate (final): ")
    assert repr(plan).startswith("* Aggregate: ")
    assert "HashAggregate (partial" in partial.physical_repr(_config())
    assert "HashAggregate (final" in final.physical_repr(_config())
    for p in (partial, final):
        copy = _core.PyPlan.from_bytes(p.to_bytes())
        assert repr(copy) == repr(p)
        assert copy.schema() == p.schema()
        assert copy.aggregate_phase() == p.aggregate_phase()
        assert copy.physical_repr(_config()) == p.physical_repr(_config())
    states = _execute(_core.PyPlan.from_bytes(partial.to_bytes()))
    assert states.equals(_execute(partial))
    # the final copy still resolves the aggregations against the source schema
    final_copy = _core.PyPlan.from_bytes(final.to_bytes())
    result = _execute(final_copy.with_inputs([_core.PyPlan.in_memory(states)]))
    _close(_sorted_rows(result, ["g"]), _sorted_rows(_execute(plan), ["g"]))


def test_a_final_aggregate_over_rows_without_partial_states_is_an_error():
    table = _random_table(20, 2, seed=8)
    plan = _aggregate_plan(ketch.from_arrow(table).groupby("g").agg(col("i").sum()))
    _partial, final = plan.split_aggregate()
    with pytest.raises(KetchError, match="partial-state column '__a0_sum'"):
        final.with_inputs([_core.PyPlan.in_memory(table)])


@pytest.mark.parametrize("keys", [["g"], ["g", "s"]])
def test_high_cardinality_partial_skips_grouping_and_still_equals_the_full_aggregate(keys):
    # 0.9 groups per row in a 131072-row morsel: after it (>= 100k probed rows) the partial phase
    # stops grouping and does not merge its states (keys repeat within each 150k-row chunk).
    rows = 300_000
    rng = random.Random(9)
    table = pa.table(
        {
            "g": pa.array([None if i % 1000 == 0 else i % 120_000 for i in range(rows)], pa.int64()),
            "s": pa.array(["a" if i % 3 else "b" for i in range(rows)], pa.string()),
            "i": pa.array(
                [None if i % 7 == 0 else rng.randrange(-1000, 1000) for i in range(rows)], pa.int64()
            ),
            "u": pa.array([i % 50 for i in range(rows)], pa.uint8()),
            "f": pa.array([None if i % 9 == 0 else (i % 400) / 4 for i in range(rows)], pa.float32()),
            "t": pa.array([None if i % 5 == 0 else f"w{i % 30}" for i in range(rows)], pa.string()),
        }
    )
    plan = _aggregate_plan(ketch.from_arrow(table).groupby(*keys).agg(*ALL_MERGEABLE))
    expected = _execute(plan)
    actual, states = _two_phase(plan, _chunks(table, 2))

    # Merged, chunk 0 would have one row per group; unmerged it keeps the first morsel's groups
    # plus the rest of the chunk's rows (grouped or not, depending on which morsel ran first).
    def groups(t: pa.Table) -> int:
        return len({tuple(r[k] for k in keys) for r in t.select(keys).to_pylist()})

    probe_groups = groups(table.slice(0, 131_072))
    assert groups(table.slice(0, 150_000)) < states[0].num_rows <= probe_groups + (150_000 - 131_072)
    assert states[0].schema == plan.split_aggregate()[0].schema()
    order = [(k, "ascending") for k in keys]
    actual, expected = actual.sort_by(order), expected.sort_by(order)
    for name in expected.column_names:
        a, e = actual.column(name), expected.column(name)
        if pa.types.is_floating(e.type):
            assert a.is_null().equals(e.is_null()), name
            np.testing.assert_allclose(
                a.fill_null(0).to_numpy(), e.fill_null(0).to_numpy(), rtol=1e-12, err_msg=name
            )
        else:
            assert a.equals(e), name
