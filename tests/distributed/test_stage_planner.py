"""The distributed stage planner without Ray: a fragment (source + partition-local operators)
restricted to each input partition, and hash exchanges. Running every partition's fragment and
then the rest over the gathered outputs must give the whole plan's result."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

import ketch
from ketch import _core, col
from ketch.runners.native import read_partitioned


def _optimized(df: ketch.DataFrame) -> _core.PyPlan:
    return df._plan.optimize(config=ketch.get_execution_config().to_native())


def _run(plan: _core.PyPlan) -> tuple[pa.Table, list[int]]:
    partitions, reader = plan.execute(ketch.get_execution_config().to_native(), _core.ExecutionStats())
    return read_partitioned(partitions, reader)


def _files(tmp_path, n=5, rows=40):
    for f in range(n):
        ids = list(range(f * rows, (f + 1) * rows))
        pq.write_table(pa.table({"id": ids, "g": [i % 3 for i in ids]}), tmp_path / f"p{f}.parquet")
    return str(tmp_path / "*.parquet")


def test_fragment_per_partition_then_the_rest_equals_the_whole_plan(tmp_path):
    glob = _files(tmp_path)
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=1, max_sources_per_scan_task=1):
        mapped = ketch.read_parquet(glob).where(col("g") != 1).with_column("x", col("id") * 2)
        optimized = _optimized(mapped.groupby("g").agg(col("x").sum()))
        assert optimized.kind() == "Aggregate"
        fragment = optimized.inputs()[0]
        assert fragment.is_partition_local() and "ScanParquet" in repr(fragment)
        assert fragment.num_partitions() == (5, True)
        outputs = [_run(fragment.partition_fragment(i))[0] for i in range(5)]
        expected = [sum(1 for i in range(f * 40, (f + 1) * 40) if i % 3 != 1) for f in range(5)]
        assert [t.num_rows for t in outputs] == expected  # each file's g != 1 rows
        gathered = _core.PyPlan.in_memory(pa.concat_tables(outputs), [t.num_rows for t in outputs])
        got = _run(optimized.with_inputs([gathered]))[0].sort_by("g").to_pydict()
        assert got == _run(optimized)[0].sort_by("g").to_pydict()


def test_in_memory_partitions_are_the_tasks():
    df = ketch.from_pydict({"x": list(range(10))}).into_partitions(3).collect().with_column("y", col("x") + 1)
    fragment = _optimized(df)
    assert fragment.num_partitions() == (3, True)
    parts = [_run(fragment.partition_fragment(i))[0].to_pydict()["y"] for i in range(3)]
    assert parts == [[1, 2, 3, 4], [5, 6, 7], [8, 9, 10]]


def test_a_partition_out_of_range_is_refused():
    fragment = _optimized(ketch.from_pydict({"x": [1]}))
    try:
        fragment.partition_fragment(3)
    except ketch.errors.KetchError as error:
        assert "partition 3" in str(error)
    else:
        raise AssertionError("partition 3 of 1 was accepted")


def test_hash_exchanges_name_the_keys_each_input_is_shuffled_by():
    left = ketch.from_pydict({"k": [1, 2, None], "a": [1, 2, 3]})
    right = ketch.from_pydict({"rk": [1, 1, 2], "b": ["x", "y", "z"]})
    agg = _optimized(left.groupby("k").agg(col("a").sum()))
    assert agg.kind() == "Aggregate" and agg.hash_exchange() == ([["k"]], -1)
    assert [i.kind() for i in agg.inputs()] == ["InMemorySource"]
    join = _optimized(left.join(right, left_on="k", right_on="rk", how="outer"))
    assert join.kind() == "Join" and join.hash_exchange() == ([["k"], ["rk"]], -1)
    assert _optimized(left.repartition(3, "k")).hash_exchange() == ([["k"]], 3)
    # No hash exchange: a global aggregate, a random repartition, a sort, keys of different types.
    assert _optimized(left.agg(col("a").sum())).hash_exchange() is None
    assert _optimized(left.repartition(3)).hash_exchange() is None
    assert _optimized(left.sort("k")).hash_exchange() is None
    wide = ketch.from_arrow(pa.table({"rk": pa.array([1], pa.int32()), "b": ["x"]}))
    assert _optimized(left.join(wide, left_on="k", right_on="rk")).hash_exchange() is None
    assert _optimized(left.where(col("a") > 1).with_column("c", col("a") + 1)).is_partition_local()


def test_an_aggregate_run_bucket_by_bucket_over_hashed_inputs_gives_the_whole_result():
    rows = 200
    df = ketch.from_pydict({"g": [i % 7 if i % 9 else None for i in range(rows)], "v": list(range(rows))})
    plan = _optimized(
        df.into_partitions(4).collect().groupby("g").agg(col("v").sum(), col("v").count().alias("n"))
    )
    whole, _ = _run(plan)
    (source,) = plan.inputs()
    buckets: list[list[pa.Table]] = [[] for _ in range(3)]
    for i in range(4):  # map tasks: each input partition hashed into 3 buckets
        table, counts = _run(source.partition_fragment(i).repartition(3, ["g"]))
        offset = 0
        for b, n in enumerate(counts + [0] * (3 - len(counts))):
            buckets[b].append(table.slice(offset, n))
            offset += n
    outputs = [_run(plan.with_inputs([_core.PyPlan.in_memory(pa.concat_tables(b))]))[0] for b in buckets]
    groups = [set(t.column("g").to_pylist()) for t in outputs]
    assert sum(len(g) for g in groups) == len(set().union(*groups))  # every key in one bucket
    assert pa.concat_tables(outputs).sort_by("g").to_pylist() == whole.sort_by("g").to_pylist()


@ketch.func
def _text_length(u: str) -> int:
    return len(u)


def test_the_ranges_of_a_split_row_group_are_one_distributed_task(tmp_path):
    """Below a UDF, row groups are split into row ranges (scan tasks); the distributed tasks keep
    the ranges of one row group together (one task reads it once), other scan tasks alone."""
    sizes = [30_000, 4_000, 30_000]  # file 1 is small: a scan task of its own, never split
    for f, n in enumerate(sizes):
        start = sum(sizes[:f])
        urls = [f"https://example.com/{i:08d}" for i in range(start, start + n)]
        pq.write_table(pa.table({"u": urls}), tmp_path / f"f{f}.parquet", row_group_size=n)
    with ketch.execution_config_ctx(num_compute_threads=4, morsel_size_rows=2_000):
        df = ketch.read_parquet(str(tmp_path)).with_column("n", _text_length(col("u")))
        fragment = _optimized(df)
        scan_tasks, _exact = fragment.num_partitions()
        runs = fragment.source_task_runs()
        assert scan_tasks > 3, repr(fragment)
        # Runs cover 0..scan_tasks-1 in order, without gaps.
        assert [first for first, _ in runs] == [sum(c for _, c in runs[:k]) for k in range(len(runs))]
        assert sum(count for _, count in runs) == scan_tasks
        assert any(count > 1 for _, count in runs)
        # Each run's fragment reads its row groups once: rows in order, one row group read per file.
        pieces, row_groups = [], 0
        for first, count in runs:
            stats = _core.ExecutionStats()
            plan = fragment.partition_fragment(first, count)
            partitions, reader = plan.execute(ketch.get_execution_config().to_native(), stats)
            pieces.append(read_partitioned(partitions, reader)[0])
            row_groups += stats.scan["row_groups_read"]
        out = pa.concat_tables(pieces)
        want = [f"https://example.com/{i:08d}" for i in range(sum(sizes))]
        assert out.column("u").to_pylist() == want
        assert out.column("n").to_pylist() == [len(u) for u in want]
        assert row_groups == 3
        # An in-memory source: one partition per task.
        parts = _optimized(ketch.from_pydict({"x": list(range(9))}).into_partitions(3).collect())
        assert parts.source_task_runs() == [(i, 1) for i in range(parts.num_partitions()[0])]


@ketch.func
def _plus_one(x: int) -> int:
    return x + 1


def _leaf(plan: _core.PyPlan) -> _core.PyPlan:
    while plan.inputs():
        plan = plan.inputs()[0]
    return plan


def test_an_in_memory_source_below_an_expensive_pipeline_is_cut_for_the_workers():
    n = 400
    df = ketch.from_pydict({"x": list(range(n))}).with_column("y", _plus_one(col("x"))).where(col("y") > 0)
    plan = _optimized(df)
    assert plan.num_partitions() == (1, True)
    split = plan.split_in_memory_sources(3)  # 3 workers: two pieces each
    assert split.num_partitions() == (6, True)
    assert split.source_task_runs() == [(i, 1) for i in range(6)]
    parts = [_run(split.partition_fragment(i))[0] for i in range(6)]
    assert [t.num_rows for t in parts] == [67, 67, 67, 67, 66, 66]
    assert pa.concat_tables(parts).to_pydict() == {"x": list(range(n)), "y": list(range(1, n + 1))}
    # Each piece numbers its rows by their place in the whole source (errors name those rows).
    rows = [
        _run(split.partition_fragment(i).project([_core.call("_source_row", [], {}).alias("r")]))[0]
        for i in range(6)
    ]
    assert [r for t in rows for r in t.column("r").to_pylist()] == list(range(n))
    # No piece under 64 rows: 200 rows make 3 pieces, 100 rows stay whole.
    for rows_in, pieces in ((200, 3), (100, 1)):
        small = _optimized(
            ketch.from_pydict({"x": list(range(rows_in))}).with_column("y", _plus_one(col("x")))
        )
        assert small.split_in_memory_sources(3).num_partitions() == (pieces, True)


def test_in_memory_sources_are_not_cut_without_an_expensive_pipeline_above_them():
    cheap = _optimized(ketch.from_pydict({"x": list(range(400))}).with_column("y", col("x") + 1))
    assert cheap.split_in_memory_sources(3).num_partitions() == (1, True)
    # The UDF runs above a sort: not in the source's pipeline.
    sorted_first = _optimized(
        ketch.from_pydict({"x": list(range(400))}).sort("x").with_column("y", _plus_one(col("x")))
    )
    assert _leaf(sorted_first.split_in_memory_sources(3)).num_partitions() == (1, True)
    # A partition per worker already: the user's partitioning stays.
    parts = ketch.from_pydict({"x": list(range(800))}).into_partitions(3).collect()
    plan = _optimized(parts.with_column("y", _plus_one(col("x"))))
    assert plan.split_in_memory_sources(3).num_partitions() == (3, True)
    assert plan.split_in_memory_sources(4).num_partitions() == (8, True)
    # into_partitions above cuts the source's own partitions: they stay.
    cut = _optimized(
        ketch.from_pydict({"x": list(range(400))}).with_column("y", _plus_one(col("x"))).into_partitions(4)
    )
    assert _leaf(cut.split_in_memory_sources(3)).num_partitions() == (1, True)
