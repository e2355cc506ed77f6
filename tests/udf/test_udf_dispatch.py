"""UDF stages keep their concurrency and their pipelining: batches go to whichever instance is idle
(whatever the input size), a chained stage starts on the first finished batch, max_concurrency on
a sync function runs that many calls at once, async functions keep many rows in flight, batch UDFs
without batch_size get large batches, and timeout_s stops one long call.

Concurrency is proven by rendezvous, not by timing: calls wait (with a generous timeout that fails
the test) until enough other calls have arrived, which only happens when they really overlap."""

from __future__ import annotations

import asyncio
import io
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import redirect_stdout
from pathlib import Path

import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.errors import UDFError

# Each test runs on the native and on the Ray runner (tests/conftest.py: runner).
pytestmark = pytest.mark.usefixtures("runner")

RENDEZVOUS_TIMEOUT_S = 60.0


def _rendezvous(directory: str, parties: int) -> None:
    """A barrier across threads and processes: registers this call in ``directory`` and waits until
    ``parties`` calls have registered (raises TimeoutError if they never do)."""
    Path(directory, uuid.uuid4().hex).touch()
    deadline = time.monotonic() + RENDEZVOUS_TIMEOUT_S
    while len(os.listdir(directory)) < parties:
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(os.listdir(directory))} of {parties} calls ever ran at once")
        time.sleep(0.01)


def _wait_for_file(path: str) -> None:
    deadline = time.monotonic() + RENDEZVOUS_TIMEOUT_S
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared: the stages did not overlap")
        time.sleep(0.01)


@ketch.cls(return_dtype=int, batch_size=1, concurrency=1)
class Fast:
    def __call__(self, x):
        return x.to_arrow()


@ketch.cls(return_dtype=int, batch_size=1, concurrency=4)
class SlowInstance:
    """Returns an id of the instance that handled the row (its pid in process mode)."""

    def __init__(self, directory: str):
        self.directory = directory

    def __call__(self, x):
        _rendezvous(self.directory, 4)
        return [os.getpid() * 1_000_000 + id(self) % 1_000_000] * len(x)


@pytest.mark.parametrize("use_process", [False, True])
def test_seven_rows_reach_all_four_instances(tmp_path, use_process):
    model = ketch.cls(return_dtype=int, batch_size=1, concurrency=4, use_process=use_process)(
        SlowInstance.cls
    )(str(tmp_path))
    fast = ketch.cls(return_dtype=int, batch_size=1, concurrency=1, use_process=use_process)(Fast.cls)()
    df = ketch.from_pydict({"x": list(range(7))})
    df = df.with_column("a", fast(col("x"))).with_column("who", model(col("a")))
    df = df.with_column("b", fast(col("who")))
    out = df.to_pydict()
    assert out["x"] == list(range(7)) and out["a"] == list(range(7))
    assert len(set(out["who"])) == 4  # every slow instance got rows
    if use_process:
        assert len({w // 1_000_000 for w in out["who"]}) == 4  # four worker processes


class _Chained:
    """Stage A holds its last batch until stage B has started: without pipelining, never."""

    def __init__(self, marker: str, role: str, last_row: int):
        self.marker, self.role, self.last_row = marker, role, last_row

    def __call__(self, x):
        values = x.to_pylist()
        if self.role == "b":
            Path(self.marker).touch()
        elif self.last_row in values:
            _wait_for_file(self.marker)
        return values


@pytest.mark.parametrize("nested", [False, True])
@pytest.mark.parametrize("use_process", [False, True])
def test_a_chained_stage_starts_on_the_first_finished_batch(tmp_path, use_process, nested):
    marker = str(tmp_path / "b_started")
    stage = ketch.cls(return_dtype=int, batch_size=10, concurrency=1, use_process=use_process)(_Chained)
    a, b = stage(marker, "a", 99), stage(marker, "b", 99)
    df = ketch.from_pydict({"x": list(range(100))})
    if nested:  # b(a(x)) in one expression: the optimizer gives each call a stage of its own
        out = df.select(b(a(col("x"))).alias("b")).to_pydict()
    else:
        out = df.with_column("a", a(col("x"))).with_column("b", b(col("a"))).to_pydict()
    assert out["b"] == list(range(100))


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
def test_sync_max_concurrency_runs_that_many_calls_at_once():
    barrier = threading.Barrier(4, timeout=RENDEZVOUS_TIMEOUT_S)
    threads: set[int] = set()

    @ketch.func(max_concurrency=4)
    def wait_for_three_others(x: int) -> int:
        threads.add(threading.get_ident())
        barrier.wait()  # BrokenBarrierError unless 4 calls run at once
        return x * 10

    out = ketch.from_pydict({"x": list(range(8))}).with_column("y", wait_for_three_others(col("x")))
    assert out.to_pydict()["y"] == [x * 10 for x in range(8)]
    assert len(threads) == 4


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
def test_async_default_keeps_far_more_than_64_rows_in_flight():
    state = {"active": 0, "max": 0, "all_in": None}

    @ketch.func
    async def fetch(x: int) -> int:
        if state["all_in"] is None:
            state["all_in"] = asyncio.Event()
        state["active"] += 1
        state["max"] = max(state["max"], state["active"])
        if state["active"] == 1000:
            state["all_in"].set()
        # Every row waits until all 1,000 are awaiting at once (fails with TimeoutError otherwise).
        await asyncio.wait_for(state["all_in"].wait(), RENDEZVOUS_TIMEOUT_S)
        state["active"] -= 1
        return x + 1

    out = ketch.from_pydict({"x": list(range(1000))}).with_column("y", fetch(col("x"))).to_pydict()
    assert out["y"] == [x + 1 for x in range(1000)]
    assert state["max"] == 1000


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
def test_batch_udf_without_batch_size_gets_large_batches():
    sizes: list[int] = []

    @ketch.func.batch(return_dtype=int)
    def identity(x):
        sizes.append(len(x))
        return x

    n = 300_000
    out = ketch.from_arrow(pa.table({"x": pa.array(range(n), pa.int64())})).with_column(
        "y", identity(col("x"))
    )
    assert out.to_arrow().column("y").to_pylist() == list(range(n))
    assert sorted(sizes, reverse=True) == [131072, 131072, n - 2 * 131072]  # whole morsels, not 512 rows


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
def test_row_udf_batches_spread_over_its_workers_for_small_inputs():
    batches: list[int] = []
    lock = threading.Lock()

    @ketch.func.batch(return_dtype=int, max_concurrency=4)
    def record(x):
        with lock:
            batches.append(len(x))
        return x

    ketch.from_pydict({"x": list(range(10))}).with_column("y", record(col("x"))).collect()
    assert sorted(batches) == [1, 3, 3, 3]  # ceil(10 / 4) rows per call


# -- timeout_s ---------------------------------------------------------------------------------
@pytest.fixture
def hang(tmp_path: Path) -> Iterator[Callable[[], None]]:
    """A blocking wait for a UDF call that must time out: up to 120 s, released when the test ends.

    A thread-mode call that timed out is abandoned, and Python cannot interrupt its thread: a plain
    ``time.sleep(120)`` kept that thread alive two minutes past the test, and
    tests/udf/test_udf_threads.py (which waits for every UDF thread to exit) failed when it came
    sooner (``-m "not ray_runner"``). The flag is a file, so the wait also pickles to Ray workers."""
    released = tmp_path / "released"

    def block() -> None:
        deadline = time.monotonic() + 120
        while not released.exists() and time.monotonic() < deadline:
            time.sleep(0.02)

    yield block
    released.touch()


def test_timeout_s_stops_one_row_and_on_error_applies(hang):
    @ketch.func(timeout_s=0.5, on_error="ignore")
    def sometimes_hangs(x: int) -> int:
        if x == 3:
            hang()
        return x + 1

    out = ketch.from_pydict({"x": [1, 2, 3, 4]}).with_column("y", sometimes_hangs(col("x"))).to_pydict()
    assert out["y"] == [2, 3, None, 5]


def test_timeout_s_raise_names_the_udf_and_rows(hang):
    @ketch.func(timeout_s=0.3)
    def hangs(x: int) -> int:
        hang()
        return x

    df = ketch.from_pydict({"x": [1, 2]}).with_column("y", hangs(col("x")))
    with pytest.raises(UDFError, match=r"hangs.*timeout_s=0.3.*source rows 0") as info:
        df.collect()
    assert isinstance(info.value.__cause__, TimeoutError)


@pytest.mark.parametrize("use_process", [False, True])
def test_timeout_s_on_a_class_udf_batch(use_process, hang):
    @ketch.cls(return_dtype=int, batch_size=2, timeout_s=3, on_error="ignore", use_process=use_process)
    class SlowOnSecondBatch:
        def __call__(self, x):
            values = x.to_pylist()
            if 2 in values:
                hang()
            return values

    df = ketch.from_pydict({"x": [0, 1, 2, 3, 4]}).with_column("y", SlowOnSecondBatch()(col("x")))
    assert df.to_pydict()["y"] == [0, 1, None, None, 4]


@pytest.mark.parametrize("bad", [0, -1, "1", True])
def test_timeout_s_must_be_positive(bad):
    with pytest.raises(ValueError, match="timeout_s"):
        ketch.func(return_dtype=int, timeout_s=bad)(lambda x: x)


# -- generators under a limit ---------------------------------------------------------------------


def _endless(x: int):
    i = 0
    while True:  # never ends: only a limit above can stop it
        yield x * 1000 + i
        i += 1


@pytest.mark.parametrize("use_process", [False, True])
def test_limit_stops_an_endless_generator(use_process):
    gen = ketch.func(return_dtype=int, use_process=use_process)(_endless)
    df = ketch.from_pydict({"x": [1, 2, 3]}).with_column("y", gen(col("x"))).limit(5)
    out = io.StringIO()
    with redirect_stdout(out):
        df.explain(show_all=True)
    assert "Generator items per row <= 5 (limit pushdown)" in out.getvalue()
    assert df.to_pydict() == {"x": [1] * 5, "y": [1000, 1001, 1002, 1003, 1004]}


def test_generator_under_a_limit_keeps_a_null_row_for_empty_generators():
    @ketch.func
    def upto(x: int) -> Iterator[int]:
        yield from range(x)

    # Daft's rule: a row whose generator yields nothing gives one row with null there.
    df = ketch.from_pydict({"x": [0, 2, 0, 3]}).with_column("y", upto(col("x"))).limit(4)
    assert df.to_pydict() == {"x": [0, 2, 2, 0], "y": [None, 0, 1, None]}


@pytest.mark.native_only  # observes this process's UDF calls (closure state)
def test_batch_size_over_scan_tasks_is_exact_within_each_partition(tmp_path):
    """The README's promise: exactly B rows per call except each partition's last batch (a scan
    task ends its own batches); into_batches(B) in front gives exact batches across partitions."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for f in range(3):
        table = pa.table({"a": list(range(f * 10, f * 10 + 10))})
        pq.write_table(table, tmp_path / f"f{f}.parquet", row_group_size=5)
    sizes: list[int] = []

    @ketch.func.batch(return_dtype=ketch.DataType.int64(), batch_size=8)
    def record(x):
        sizes.append(len(x))
        return x

    out = ketch.read_parquet(str(tmp_path)).select(record(ketch.col("a")).alias("a")).to_pydict()
    assert sorted(out["a"]) == list(range(30))
    assert sorted(sizes) == [2, 2, 2, 8, 8, 8]  # per 10-row file: 8 then 2
    sizes.clear()
    out = ketch.read_parquet(str(tmp_path)).into_batches(8).select(record(ketch.col("a")).alias("a"))
    assert sorted(out.to_pydict()["a"]) == list(range(30))
    assert sizes == [8, 8, 8, 6]
