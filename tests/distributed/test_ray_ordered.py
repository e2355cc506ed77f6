"""Order-keeping operators on Ray without a shuffle: a two-phase limit, into_partitions and
into_batches as row-range cuts of the ordered task outputs, and write_parquet with staged files
committed only when every task succeeded. Results equal the native runner's, partition by
partition. The cuts themselves (slicing.py) are checked without Ray first."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from ray_compare import native_then_ray

import ketch
from ketch import _core, col
from ketch.dataframe import DataFrame
from ketch.runners.ray import slicing

# -- the cuts, against the native executor (no Ray) -----------------------------------------------


@pytest.mark.parametrize("rows", [[5], [3, 0, 7], [0, 0], [1, 2, 3, 4, 5, 6, 7, 8], [10, 1]])
@pytest.mark.parametrize("num", [1, 2, 3, 5, 9])
def test_into_partitions_cuts_are_the_native_executors(rows: list[int], num: int) -> None:
    start = [0]
    for r in rows:
        start.append(start[-1] + r)
    table = pa.table({"x": list(range(start[-1]))})
    source = DataFrame(_core.PyPlan.in_memory(table, rows))  # partitions of exactly these sizes
    expected = [p.to_pydict()["x"] for p in source.into_partitions(num).collect().iter_partitions()]
    cuts = slicing.into_partitions(rows, num)
    got = [[start[i] + o + k for i, o, n in cut for k in range(n)] for cut in cuts]
    assert len(cuts) == num
    assert got == expected


def test_into_batches_and_first_rows_cuts() -> None:
    assert slicing.into_batches([3, 0, 4, 1], 3) == [[(0, 0, 3)], [(2, 0, 3)], [(2, 3, 1), (3, 0, 1)]]
    assert slicing.into_batches([0, 0], 2) == []
    assert slicing.first_rows([3, 0, 4], 5) == [(0, 0, 3), (2, 0, 2)]
    assert slicing.first_rows([3, 4], 0) == []
    with pytest.raises(ValueError, match="batch_size"):
        slicing.into_batches([1], 0)
    with pytest.raises(ValueError, match="num >= 1"):
        slicing.into_partitions([1], 0)


# -- on the cluster ---------------------------------------------------------------------------------


def _partitions(df: Any) -> list[dict[str, list[Any]]]:
    return [p.to_pydict() for p in df.iter_partitions()]


@pytest.fixture
def parquet_parts(tmp_path: Any) -> Iterator[str]:
    """Five Parquet files of 0..999 in order, 200 rows each, read as 5 scan tasks (no merging of
    small files while the test runs)."""
    root = tmp_path / "in"
    root.mkdir()
    for i in range(5):
        ids = list(range(i * 200, (i + 1) * 200))
        pq.write_table(pa.table({"id": ids, "s": [f"r{j}" for j in ids]}), root / f"part-{i}.parquet")
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=1, max_sources_per_scan_task=1):
        yield str(root / "*.parquet")


def test_limit_runs_per_task_then_keeps_the_first_rows_in_order(on_ray: Any, parquet_parts: str) -> None:
    def build() -> Any:
        return ketch.read_parquet(parquet_parts).where((col("id") < 100) | (col("id") >= 300)).limit(250)

    native, on = native_then_ray(build)
    assert on.to_pydict() == native.to_pydict()
    assert on.to_pydict()["id"] == list(range(100)) + list(range(300, 450))
    stages = on_ray.last_stages
    assert stages and "Limit" in stages[0].name and stages[0].tasks >= 2
    # Each task stopped at 250 rows: never more than 250 per task came out.
    assert stages[0].rows_out <= 250 * stages[0].tasks


def test_limit_larger_than_the_input_and_limit_zero(on_ray: Any, parquet_parts: str) -> None:
    assert ketch.read_parquet(parquet_parts).limit(5000).to_pydict()["id"] == list(range(1000))
    empty = ketch.read_parquet(parquet_parts).limit(0).to_pydict()
    assert empty == {"id": [], "s": []}


@pytest.mark.parametrize("num", [1, 3, 5, 7, 12])
def test_into_partitions_splits_and_coalesces_like_the_native_runner(
    on_ray: Any, parquet_parts: str, num: int
) -> None:
    native, on = native_then_ray(lambda: ketch.read_parquet(parquet_parts).into_partitions(num))
    assert on.num_partitions() == num
    assert _partitions(on) == _partitions(native)
    assert not any(s.name.startswith("stage") and "driver" in s.name for s in on_ray.last_stages)


def test_into_batches_feeds_a_udf_on_the_workers_exact_batches(on_ray: Any, parquet_parts: str) -> None:
    @ketch.func.batch(return_dtype=pa.int64())
    def batch_len(x: Any) -> Any:
        return pa.array([len(x)] * len(x), pa.int64())

    def build() -> Any:
        return ketch.read_parquet(parquet_parts).into_batches(300).with_column("n", batch_len(col("id")))

    native, on = native_then_ray(build)
    assert _partitions(on) == _partitions(native)
    assert [len(p) for p in on.iter_partitions()] == [300, 300, 300, 100]
    assert set(on.to_pydict()["n"]) == {300, 100}
    # The UDF ran in a stage on the engine workers (one task per batch), not on the driver.
    udf_stage = on_ray.last_stages[-1]
    assert udf_stage.tasks == 4 and udf_stage.kind == "reduce"


def test_write_parquet_stages_files_and_commits_them_in_order(
    on_ray: Any, parquet_parts: str, tmp_path: Any
) -> None:
    out = tmp_path / "out"
    written = ketch.read_parquet(parquet_parts).where(col("id") < 700).write_parquet(str(out))
    paths = written.to_pydict()["path"]
    assert len(paths) == 4  # the fifth task had no rows: no empty file
    assert sorted(os.listdir(out)) == sorted(os.path.basename(p) for p in paths)  # no staging left
    ids = [i for p in paths for i in pq.read_table(p).column("id").to_pylist()]
    assert ids == list(range(700))
    assert "WriteParquet (staged)" in on_ray.last_stages[0].name


def test_write_parquet_of_an_empty_result_keeps_one_file_with_the_schema(
    on_ray: Any, parquet_parts: str, tmp_path: Any
) -> None:
    out = tmp_path / "empty"
    paths = ketch.read_parquet(parquet_parts).where(col("id") < 0).write_parquet(str(out)).to_pydict()["path"]
    assert len(paths) == 1
    table = pq.read_table(paths[0])
    assert table.num_rows == 0 and table.schema.names == ["id", "s"]


def test_a_failing_write_task_leaves_no_file(on_ray: Any, parquet_parts: str, tmp_path: Any) -> None:
    @ketch.func(return_dtype=pa.int64())
    def fail_late(x: int) -> int:
        if x == 950:
            raise ValueError("row 950 is bad")
        return x

    out = tmp_path / "failed"
    with pytest.raises(ketch.errors.UDFError, match="row 950 is bad"):
        ketch.read_parquet(parquet_parts).with_column("y", fail_late(col("id"))).write_parquet(str(out))
    assert os.listdir(out) == []  # the other tasks' files were staged, never committed


def test_overwrite_on_ray_replaces_the_old_files(on_ray: Any, parquet_parts: str, tmp_path: Any) -> None:
    out = tmp_path / "over"
    ketch.read_parquet(parquet_parts).write_parquet(str(out))
    paths = ketch.read_parquet(parquet_parts).limit(10).write_parquet(str(out), write_mode="overwrite")
    assert sorted(os.listdir(out)) == sorted(os.path.basename(p) for p in paths.to_pydict()["path"])
    assert ketch.read_parquet(str(out)).to_pydict()["id"] == list(range(10))


def test_concat_and_stacked_order_keeping_operators_stay_on_the_workers(
    on_ray: Any, parquet_parts: str
) -> None:
    def build() -> Any:
        left = ketch.read_parquet(parquet_parts).where(col("id") < 300)
        right = ketch.read_parquet(parquet_parts).where(col("id") >= 900)
        return left.concat(right).into_partitions(3).limit(350)

    native, on = native_then_ray(build)
    assert on.to_pydict() == native.to_pydict()
    assert on.to_pydict()["id"] == list(range(300)) + list(range(900, 950))
    assert all("driver" not in s.name for s in on_ray.last_stages)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_each_stage_draws_a_progress_bar_of_its_tasks(on_ray: Any, parquet_parts: str) -> None:
    from ketch.runners.ray.progress import StageProgress

    stream = _Terminal()
    StageProgress.stream = stream
    try:
        with ketch.execution_config_ctx(progress_bar_delay_seconds=0.0):
            ketch.read_parquet(parquet_parts).groupby("s").agg(col("id").sum()).collect()
    finally:
        StageProgress.stream = None
    text = stream.getvalue()
    assert "stage 1 (shuffle map: Scan" in text and "5/5" in text
    assert "stage 2 (reduce: final Aggregate" in text
    assert "rows" in text
    assert all(s.seconds > 0 for s in on_ray.last_stages)
    assert "tasks, " in on_ray.stage_report() and " s, " in on_ray.stage_report()


def test_explain_shows_the_distributed_plan_without_running_it(on_ray: Any, parquet_parts: str) -> None:
    left = ketch.read_parquet(parquet_parts).where(col("id") < 900)
    right = ketch.read_parquet(parquet_parts).select(col("id"), col("s").alias("t"))
    df = left.join(right, on="id").groupby("s").agg(col("id").count()).limit(3)
    on_ray.last_stages.clear()
    out = io.StringIO()
    df.explain(show_all=True, file=out)
    text = out.getvalue()
    plan = text.split("== Distributed Plan ==", 1)[1]
    assert "hash shuffle by ['id'] into 5 (map_reduce); 5 tasks" in plan
    assert "broadcast to the left side's tasks instead" in plan
    assert "hash shuffle by ['s']" in plan
    assert "Limit (per task; stops once 3 rows are done)" in plan
    assert on_ray.last_stages == []  # nothing ran


def test_a_stage_over_into_batches_starts_before_the_stage_feeding_it_ends(
    on_ray: Any, parquet_parts: str, tmp_path: Any
) -> None:
    """Pipelining: the UDF stage over into_batches is fed batch by batch. The source stage's
    last task blocks until a UDF task has run (a file the UDF writes), which can only happen
    when the UDF stage does not wait for the whole source stage."""
    marker = tmp_path / "udf-ran"

    @ketch.func(return_dtype=pa.int64())
    def wait_for_udf(x: int) -> int:
        if x == 999:  # the last row of the last source task
            import time

            deadline = time.monotonic() + 120
            while not marker.exists():
                if time.monotonic() > deadline:
                    raise TimeoutError("the UDF stage never started while the source stage ran")
                time.sleep(0.05)
        return x

    @ketch.func(return_dtype=pa.int64())
    def mark(x: int) -> int:
        marker.touch()
        return x

    df = (
        ketch.read_parquet(parquet_parts)
        .with_column("w", wait_for_udf(col("id")))
        .into_batches(150)
        .with_column("m", mark(col("id")))
    )
    with ketch.execution_config_ctx(morsel_size_rows=50):
        out = df.to_pydict()
    assert out["m"] == list(range(1000))
    names = [s.name for s in on_ray.last_stages]
    assert len(names) == 2 and "IntoBatches" in names[1]
    assert on_ray.last_stages[1].tasks == 7  # 6 x 150 + 100


def test_random_repartition_is_a_shuffle_on_the_workers(on_ray: Any, parquet_parts: str) -> None:
    df = ketch.read_parquet(parquet_parts).repartition(4).collect()
    sizes = [len(p) for p in df.iter_partitions()]
    assert sizes == [250, 250, 250, 250]  # each task's 200 rows go round-robin over 4 buckets
    assert sorted(df.to_pydict()["id"]) == list(range(1000))
    assert "random shuffle into 4" in on_ray.last_stages[0].name
    assert all("driver" not in s.name for s in on_ray.last_stages)
    again = ketch.read_parquet(parquet_parts).repartition(None).collect()
    assert again.num_partitions() == 5 and sorted(again.to_pydict()["id"]) == list(range(1000))


# -- streaming: the first cut leaves before the last task ends ----------------------------------


def _rendezvous() -> Any:
    """A Ray actor the last rows' UDF waits on until the driver holds its first partition."""
    import asyncio

    import ray

    @ray.remote
    class Rendezvous:
        def __init__(self) -> None:
            self.event = asyncio.Event()

        async def set(self) -> None:
            self.event.set()

        async def wait(self, timeout_s: float) -> bool:
            try:
                await asyncio.wait_for(self.event.wait(), timeout_s)
                return True
            except TimeoutError:
                return False

    return Rendezvous.remote()


@pytest.mark.parametrize("cut", ["into_batches", "into_partitions"])
def test_into_batches_and_into_partitions_stream_their_first_cut(on_ray: Any, cut: str) -> None:
    import ray

    rendezvous = _rendezvous()

    @ketch.func(batch_size=10)
    def gate(x: int) -> bool:
        # The last partition's rows wait (30 s at most) until the driver holds the first cut.
        return x < 350 or ray.get(rendezvous.wait.remote(30))

    df = ketch.from_pydict({"x": list(range(400))}).into_partitions(8).collect()
    df = df.with_column("ok", gate(col("x")))
    df = df.into_batches(100) if cut == "into_batches" else df.into_partitions(4)
    seen = []
    for part in df.iter_partitions():
        seen.append(part.to_pydict())
        ray.get(rendezvous.set.remote())
    assert all(ok for p in seen for ok in p["ok"])  # no row gave up waiting
    assert [p["x"] for p in seen] == [list(range(k * 100, k * 100 + 100)) for k in range(4)]
