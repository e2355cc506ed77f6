"""Partitions and batches on the native runner: repartition, into_partitions, into_batches,
num_partitions, iter_partitions, streamed iter_rows, results that keep their partitions, one
written file per partition, the optimizer dropping what nothing observes, and bad input."""

from __future__ import annotations

import collections
import io
import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col
from ketch.errors import ColumnNotFoundError, KetchTypeError

RENDEZVOUS_TIMEOUT_S = 30  # only reached when streaming is broken (the test then fails)


def _parts(df: ketch.DataFrame) -> list[dict[str, list]]:
    return [p.to_pydict() for p in df.iter_partitions()]


def _rows(parts: list[dict[str, list]]) -> list[tuple]:
    return sorted(r for p in parts for r in zip(*p.values(), strict=True))


# -- repartition ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("num", [1, 3, 8])
def test_hash_repartition_keeps_every_row_once_and_each_key_in_one_partition(seed, num):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    keys = [None if rng.random() < 0.1 else int(k) for k in rng.integers(0, 20, n)]
    strs = [None if k is None else f"s{k % 7}" for k in keys]
    df = ketch.from_pydict({"k": keys, "s": strs, "v": list(range(n))})
    parts = _parts(df.repartition(num, "k", col("s")))
    assert len(parts) == num
    got = collections.Counter(r for p in parts for r in zip(p["k"], p["s"], p["v"], strict=True))
    assert got == collections.Counter(zip(keys, strs, range(n), strict=True))
    owner: dict[tuple, int] = {}
    for i, part in enumerate(parts):
        for k, s in zip(part["k"], part["s"], strict=True):
            assert owner.setdefault((k, s), i) == i  # nulls included: one partition per key


def test_hash_repartition_spreads_distinct_keys_and_keeps_skewed_keys_together():
    hot = [7] * 900 + list(range(100))
    parts = _parts(ketch.from_pydict({"k": hot}).repartition(4, "k"))
    sizes = [len(p["k"]) for p in parts]
    assert sum(sizes) == 1000
    hot_home = [i for i, p in enumerate(parts) if 7 in p["k"]]
    assert len(hot_home) == 1 and sizes[hot_home[0]] >= 900
    assert sum(1 for s in sizes if s > 0) >= 3  # 100 distinct keys reach most partitions


def test_equal_keys_of_other_integer_widths_and_dictionaries_hash_alike():
    a = pa.table({"k": pa.array([1, 2, 3, 4, 5], pa.int8())})
    b = pa.table({"k": pa.array([1, 2, 3, 4, 5], pa.int64())})
    c = pa.table({"k": pa.array(["x", "y", "z", "x", "y"]).dictionary_encode()})
    d = pa.table({"k": pa.array(["x", "y", "z", "x", "y"])})

    def layout(table):
        return [sorted(p["k"]) for p in _parts(ketch.from_arrow(table).repartition(3, "k"))]

    assert layout(a) == layout(b)
    assert layout(c) == layout(d)


def test_random_repartition_balances_rows_and_none_keeps_the_count():
    df = ketch.from_pydict({"x": list(range(1000))})
    parts = _parts(df.repartition(4))
    assert [len(p["x"]) for p in parts] == [250, 250, 250, 250]
    assert sorted(x for p in parts for x in p["x"]) == list(range(1000))
    three = df.into_partitions(3).repartition(None, "x")
    assert three.num_partitions() == 3
    assert len(_parts(three)) == 3


def test_repartition_of_empty_input_and_after_filter_explode_and_udf():
    empty = ketch.from_pydict({"k": pa.array([], pa.int64())})
    parts = _parts(empty.repartition(5, "k"))
    assert len(parts) == 5 and all(p == {"k": []} for p in parts)

    @ketch.func
    def double(x: int) -> int:
        return 2 * x

    df = (
        ketch.from_pydict({"k": [[1, 2], [3], [4, 5, 6]], "n": [1, 2, 3]})
        .explode("k")
        .where(col("k") != 3)
        .with_column("d", double(col("k")))
        .repartition(2, "d")
    )
    parts = _parts(df)
    assert len(parts) == 2
    assert _rows(parts) == sorted([(1, 1, 2), (2, 1, 4), (4, 3, 8), (5, 3, 10), (6, 3, 12)])


def test_repartition_spills_under_a_small_budget_and_loses_nothing(tmp_path):
    n = 200_000
    table = pa.table({"k": np.arange(n) % 1000, "pad": pa.array([b"x" * 64] * n)})
    with ketch.execution_config_ctx(memory_budget_bytes=4 << 20, spill_dir=str(tmp_path)):
        parts = list(ketch.from_arrow(table).repartition(8, "k").iter_partitions())
    assert sum(len(p) for p in parts) == n
    seen: dict[int, int] = {}
    for i, part in enumerate(parts):
        for k in set(part.to_pydict()["k"]):
            assert seen.setdefault(k, i) == i
    assert len(seen) == 1000


# -- into_partitions -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("rows", "num"), [(10, 3), (100, 7), (2, 5), (0, 4), (9, 1)])
def test_into_partitions_splits_evenly_in_order(rows, num):
    parts = _parts(ketch.from_pydict({"x": list(range(rows))}).into_partitions(num))
    sizes = [len(p["x"]) for p in parts]
    assert len(sizes) == num
    assert max(sizes) - min(sizes) <= 1
    assert [x for p in parts for x in p["x"]] == list(range(rows))


def test_into_partitions_coalesces_adjacent_partitions_without_reordering():
    df = ketch.from_pydict({"x": list(range(100))}).into_partitions(10)
    parts = _parts(df.into_partitions(3))
    # 10 inputs of 10 rows into 3: 4 + 3 + 3 adjacent inputs.
    assert [len(p["x"]) for p in parts] == [40, 30, 30]
    assert [x for p in parts for x in p["x"]] == list(range(100))
    split = _parts(df.into_partitions(25))  # 10 inputs into 25: 3,3,3,3,3,2,2,2,2,2 pieces each
    assert len(split) == 25
    assert [len(p["x"]) for p in split][:6] == [4, 3, 3, 4, 3, 3]
    assert [x for p in split for x in p["x"]] == list(range(100))


@pytest.mark.parametrize(
    ("inputs", "num"),
    [([10], 3), ([100], 7), ([2], 5), ([0], 4), ([9], 1), ([5, 0, 7, 3], 9), ([5, 0, 7, 3], 2), ([4, 4], 4)],
)
def test_into_partitions_streams_with_known_partitions_and_cuts_as_the_blocking_sink(inputs, num):
    # Known partition sizes (in-memory data under a projection): the executor slices and relabels
    # morsels as they pass. Behind a filter the sizes are unknown: a split needs the blocking sink
    # (coalescing needs no sizes and still streams). Both must cut the same partitions.
    table = pa.table({"x": list(range(sum(inputs)))})
    source = ketch.DataFrame(ketch._core.PyPlan.in_memory(table, inputs)).with_column("y", col("x") * 2)
    streamed = source.into_partitions(num)
    blocked = source.where(col("x") >= 0).into_partitions(num)
    assert "IntoPartitions (streaming)" in _physical(streamed)
    behind_filter = "streaming" if num < len(inputs) else "blocking"
    assert f"IntoPartitions ({behind_filter})" in _physical(blocked)
    assert _parts(streamed) == _parts(blocked)
    assert len(_parts(streamed)) == num


def _physical(df: ketch.DataFrame) -> str:
    out = io.StringIO()
    df.explain(show_all=True, file=out)
    return out.getvalue().split("== Physical Plan ==")[1]


def test_into_partitions_after_a_slow_stage_streams_its_first_partition():
    consumer_got_first = threading.Event()
    waited: list[bool] = []

    @ketch.func(batch_size=10)
    def gate(x: int) -> int:
        if x == 90:  # the last batch waits until the consumer holds the first partition
            waited.append(consumer_got_first.wait(RENDEZVOUS_TIMEOUT_S))
        return x

    df = ketch.from_pydict({"x": list(range(100))}).with_column("y", gate(col("x"))).into_partitions(4)
    seen = []
    for part in df.iter_partitions():
        seen.append(part.to_pydict()["y"])
        consumer_got_first.set()
    assert waited == [True]
    assert seen == [list(range(k * 25, k * 25 + 25)) for k in range(4)]


# -- into_batches --------------------------------------------------------------------------------------


def test_into_batches_gives_exact_batches_to_a_udf_and_only_the_last_is_short():
    sizes: list[int] = []
    lock = threading.Lock()

    @ketch.func.batch(return_dtype=int)
    def record(x):
        with lock:
            sizes.append(len(x))
        return x

    # Several source batches of odd sizes: batches are cut across them.
    table = pa.Table.from_batches(
        [pa.record_batch({"x": list(range(s, s + n))}) for s, n in [(0, 37), (37, 170), (207, 1), (208, 42)]]
    )
    df = ketch.from_arrow(table).where(col("x") >= 50).into_batches(100).with_column("y", record(col("x")))
    out = df.to_pydict()
    kept = list(range(50, 250))
    assert out["y"] == kept
    assert sorted(sizes, reverse=True) == [100, 100]  # 200 rows; no batch larger than 100
    assert df.num_partitions() == 2


def test_into_batches_over_a_udf_with_its_own_batch_size_never_merges_batches():
    sizes: list[int] = []

    @ketch.func.batch(return_dtype=int, batch_size=30)
    def record(x):
        sizes.append(len(x))
        return x

    ketch.from_pydict({"x": list(range(250))}).into_batches(100).with_column("y", record(col("x"))).collect()
    assert sorted(sizes, reverse=True) == [30] * 7 + [20, 10, 10]  # 100 | 100 | 50, cut by 30


def test_into_batches_writes_one_file_per_batch(tmp_path):
    ketch.from_pydict({"x": list(range(1050))}).into_batches(250).write_parquet(tmp_path)
    files = sorted(tmp_path.glob("*.parquet"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    counts = [pq.read_metadata(f).num_rows for f in files]
    assert counts == [250, 250, 250, 250, 50]
    assert [x for f in files for x in pq.read_table(f).column("x").to_pylist()] == list(range(1050))


# -- results keep their partitions ---------------------------------------------------------------------


def test_collect_keeps_partitions_and_write_parquet_writes_one_file_per_non_empty_partition(tmp_path):
    df = ketch.from_pydict({"k": [1, 1, 2, 2, 3]}).into_partitions(4).collect()
    assert df.num_partitions() == 4
    assert [len(p) for p in df.iter_partitions()] == [2, 1, 1, 1]
    later = df.with_column("j", col("k") * 10)
    assert later.num_partitions() == 4
    assert [p.to_pydict()["j"] for p in later.iter_partitions()] == [[10, 10], [20], [20], [30]]
    sparse = ketch.from_pydict({"k": [1, 2]}).into_partitions(5).collect()
    paths = sparse.write_parquet(tmp_path).to_pydict()["path"]
    assert len(paths) == 2  # three partitions are empty
    assert sorted(pq.read_table(p).column("k").to_pylist()[0] for p in paths) == [1, 2]


def test_num_partitions_of_lazy_plans():
    df = ketch.from_pydict({"x": list(range(10))})
    assert df.num_partitions() == 1
    assert df.repartition(6).num_partitions() == 6
    assert df.into_partitions(4).where(col("x") > 3).num_partitions() == 4
    assert df.into_batches(3).num_partitions() == 4
    assert df.into_partitions(4).sort("x").num_partitions() == 1
    assert df.into_partitions(2).concat(df.into_partitions(3)).num_partitions() == 5
    assert len(list(df.into_partitions(2).concat(df.into_partitions(3)).iter_partitions())) == 5


# -- streaming -----------------------------------------------------------------------------------------


def test_iter_partitions_yields_the_first_partition_before_the_query_ends():
    consumer_got_first = threading.Event()
    waited: list[bool] = []

    @ketch.func
    def gate(x: int) -> int:
        if x == 90:  # the last batch waits until the consumer holds the first partition
            waited.append(consumer_got_first.wait(RENDEZVOUS_TIMEOUT_S))
        return x

    df = ketch.from_pydict({"x": list(range(100))}).into_batches(10).with_column("y", gate(col("x")))
    seen = []
    for part in df.iter_partitions():
        seen.append(part.to_pydict()["y"])
        consumer_got_first.set()
    assert waited == [True]
    assert [x for p in seen for x in p] == list(range(100))
    assert len(seen) == 10


def test_iter_rows_streams_and_stopping_early_cancels_the_query():
    consumer_got_row = threading.Event()
    waited: list[bool] = []

    @ketch.func
    def gate(x: int) -> int:
        if x == 50:
            waited.append(consumer_got_row.wait(RENDEZVOUS_TIMEOUT_S))
        return x

    df = ketch.from_pydict({"x": list(range(60))}).into_batches(10).with_column("y", gate(col("x")))
    first = []
    for row in df.iter_rows():
        first.append(row)
        consumer_got_row.set()
        if len(first) == 3:
            break
    assert first == [{"x": 0, "y": 0}, {"x": 1, "y": 1}, {"x": 2, "y": 2}]
    assert waited in ([], [True])  # the query stopped, or finished that batch first
    arrow_rows = list(ketch.from_pydict({"x": [1, 2]}).iter_rows(column_format="arrow"))
    assert [r["x"].as_py() for r in arrow_rows] == [1, 2]


# -- optimizer and explain -----------------------------------------------------------------------------


def _optimized(df: ketch.DataFrame) -> str:
    out = io.StringIO()
    df.explain(show_all=True, file=out)
    text = out.getvalue()
    return text[text.index("== Optimized Logical Plan ==") : text.index("== Physical Plan ==")]


def test_optimizer_drops_what_nothing_observes_and_explain_shows_parameters():
    df = ketch.from_pydict({"k": [3, 1, 2], "v": [1, 2, 3]})
    plan = _optimized(df.repartition(4, "k").groupby("k").agg(col("v").sum()))
    assert "Repartition" not in plan
    plan = _optimized(df.into_batches(2).into_batches(5))
    assert plan.count("IntoBatches") == 1 and "Batch size = 5" in plan
    plan = _optimized(df.repartition(3, "k").repartition(None))
    assert plan.count("Repartition") == 1 and "Scheme = Random, Num partitions = 3" in plan
    kept = _optimized(df.repartition(4, "k").with_column("w", col("v") + 1))
    assert "Repartition: Scheme = Hash, Num partitions = 4, By = [k]" in kept
    assert "IntoPartitions: Num partitions = 2" in _optimized(df.into_partitions(2))
    assert sorted(df.repartition(4, "k").groupby("k").agg(col("v").sum()).to_pydict()["k"]) == [1, 2, 3]


# -- bad input -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("num", [0, -2, 2.5, "4", True])
def test_bad_partition_counts_are_refused_naming_the_argument(num):
    df = ketch.from_pydict({"x": [1]})
    with pytest.raises(ValueError, match=r"repartition\(\): num must be a positive int or None, got"):
        df.repartition(num)
    with pytest.raises(ValueError, match=r"into_partitions\(\): num must be a positive int, got"):
        df.into_partitions(num)
    with pytest.raises(ValueError, match=r"into_batches\(\): batch_size must be a positive int, got"):
        df.into_batches(num)


def test_partition_by_a_missing_or_unhashable_column_is_refused_at_plan_time():
    df = ketch.from_pydict({"x": [1], "b": [b"\x89PNG"], "o": [object()], "l": [[1, 2]]})
    with pytest.raises(ColumnNotFoundError, match="nope"):
        df.repartition(2, "nope")
    with pytest.raises(KetchTypeError, match=r"column 'o' of type"):
        df.repartition(2, "o")
    with pytest.raises(KetchTypeError, match=r"column 'l' of type list"):
        df.repartition(2, col("l"))
    images = df.with_column("img", col("b").image.decode(on_error="null"))
    with pytest.raises(KetchTypeError, match=r"(?i)column .img. of type image"):
        images.repartition(2, "img")


def test_partition_by_an_expression_hashes_its_values_and_drops_the_temporary_column():
    df = ketch.from_pydict({"x": list(range(20))})
    parts = _parts(df.repartition(3, col("x") > 9))
    assert all(list(p) == ["x"] for p in parts)
    homes = collections.defaultdict(set)
    for i, p in enumerate(parts):
        for x in p["x"]:
            homes[x > 9].add(i)
    assert all(len(h) == 1 for h in homes.values())
