"""The UDF runtime: @ketch.func forms, class UDFs in thread and process mode, retries, on_error,
worker-process failure modes, resource requests and explain's UDF details."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import redirect_stdout

import numpy as np
import pytest

import ketch
from ketch import col
from ketch.errors import UDFError

# Each test runs on the native and on the Ray runner (tests/conftest.py: runner).
pytestmark = pytest.mark.usefixtures("runner")
# -- @ketch.func forms ---------------------------------------------------------------------------


@ketch.func
def double(x: int) -> int:
    return x * 2


def test_row_wise_func_infers_dtype_and_runs_plain_values():
    assert double(21) == 42  # plain values: an ordinary call
    df = ketch.from_pydict({"x": [1, None, 3]})
    out = df.with_column("d", double(col("x")))
    assert out.schema().field("d").type == ketch.DataType.int64().to_arrow()
    # None reaches the function as None: the UDF decides (here it raises, so skip nulls).
    assert ketch.from_pydict({"x": [1, 2]}).with_column("d", double(col("x"))).to_pydict()["d"] == [2, 4]


def test_func_needs_a_dtype():
    with pytest.raises(TypeError, match="return_dtype"):

        @ketch.func
        def untyped(x):
            return x


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
def test_async_func_keeps_many_rows_in_flight():
    state = {"active": 0, "max": 0}

    @ketch.func(max_concurrency=16)
    async def fetch(x: int) -> int:
        state["active"] += 1
        state["max"] = max(state["max"], state["active"])
        await asyncio.sleep(0.02)
        state["active"] -= 1
        return x + 1

    out = ketch.from_pydict({"x": list(range(64))}).with_column("y", fetch(col("x"))).to_pydict()
    assert out["y"] == [x + 1 for x in range(64)]
    assert 2 <= state["max"] <= 16  # concurrent, and bounded by max_concurrency


def test_generator_func_yields_several_rows_per_input():
    @ketch.func
    def tokens(text: str) -> Iterator[str]:
        yield from text.split()

    df = ketch.from_pydict({"id": [1, 2, 3], "text": ["a b", "", "c d e"]})
    out = df.with_column("tok", tokens(col("text"))).to_pydict()
    assert out == {  # the row whose generator yields nothing gives a null (Daft's rule)
        "id": [1, 1, 2, 3, 3, 3],
        "text": ["a b", "a b", "", "c d e", "c d e", "c d e"],
        "tok": ["a", "b", None, "c", "d", "e"],
    }


def test_batch_func_receives_series_and_wrong_length_is_named():
    @ketch.func.batch(return_dtype=ketch.DataType.float64(), batch_size=7)
    def scaled(x: ketch.Series) -> np.ndarray:
        assert isinstance(x, ketch.Series) and len(x) <= 7
        return x.to_numpy() / 2

    out = ketch.from_pydict({"x": list(range(20))}).with_column("h", scaled(col("x"))).to_pydict()
    assert out["h"] == [x / 2 for x in range(20)]

    @ketch.func(batch=True, return_dtype=int)
    def short(x):
        return x.to_pylist()[:-1]

    with pytest.raises(UDFError, match="UDF 'short' returned 2 values for a batch of 3 rows"):
        ketch.from_pydict({"x": [1, 2, 3]}).with_column("s", short(col("x"))).collect()


def test_wrong_type_is_cast_when_safe_else_named():
    @ketch.func(return_dtype=ketch.DataType.float64())
    def as_int(x: int):
        return x  # ints: a safe cast to float64

    @ketch.func(return_dtype=ketch.DataType.int64())
    def as_text(x: int):
        return f"v{x}"

    df = ketch.from_pydict({"x": [1, 2]})
    assert df.with_column("f", as_int(col("x"))).to_pydict()["f"] == [1.0, 2.0]
    with pytest.raises(UDFError, match="as_text.*cannot be cast to its return_dtype Int64"):
        df.with_column("t", as_text(col("x"))).collect()


# -- retries and on_error ------------------------------------------------------------------------


def test_retries_then_success(tmp_path):
    attempts = tmp_path / "attempts"

    @ketch.func.batch(return_dtype=int, max_retries=2)
    def flaky(x):
        with open(attempts, "a") as f:
            f.write("x")
        if len(attempts.read_text()) == 1:
            raise ConnectionError("first call fails")
        return x.to_pylist()

    out = ketch.from_pydict({"x": [1, 2, 3]}).with_column("y", flaky(col("x"))).to_pydict()
    assert out["y"] == [1, 2, 3]
    assert attempts.read_text() == "xx"


def _failing_row(x: int) -> int:
    if x % 3 == 0:
        raise ValueError(f"bad {x}")
    return x


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
@pytest.mark.parametrize("on_error", ["log", "ignore"])
def test_on_error_log_and_ignore_yield_nulls_for_failing_rows(on_error, caplog):
    udf = ketch.func(_failing_row, return_dtype=int, on_error=on_error)
    with caplog.at_level(logging.WARNING, logger="ketch.udf"):
        out = ketch.from_pydict({"x": list(range(1, 8))}).with_column("y", udf(col("x"))).to_pydict()
    assert out["y"] == [1, 2, None, 4, 5, None, 7]
    logged = [r for r in caplog.records if "failed" in r.getMessage()]
    assert (len(logged) == 2) == (on_error == "log")


def test_on_error_raise_keeps_the_original_exception_and_traceback():
    udf = ketch.func(_failing_row, return_dtype=int)
    with pytest.raises(UDFError, match="_failing_row.*ValueError: bad 3") as info:
        ketch.from_pydict({"x": [1, 2, 3]}).with_column("y", udf(col("x"))).collect()
    assert isinstance(info.value.__cause__, ValueError)
    assert "_failing_row" in "".join(__import__("traceback").format_tb(info.value.__cause__.__traceback__))


def test_batch_on_error_ignore_nulls_the_whole_batch():
    @ketch.func.batch(return_dtype=int, batch_size=2, on_error="ignore")
    def picky(x):
        if 3 in x.to_pylist():
            raise RuntimeError("no threes")
        return x.to_pylist()

    out = ketch.from_pydict({"x": [1, 2, 3, 4, 5]}).with_column("y", picky(col("x"))).to_pydict()
    assert out["y"] == [1, 2, None, None, 5]


# -- class UDFs: thread and process mode ---------------------------------------------------------


def _count_lines(path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
@pytest.mark.parametrize("use_process", [False, True])
def test_class_init_runs_exactly_concurrency_times(tmp_path, use_process):
    log = tmp_path / "init.log"

    @ketch.cls(return_dtype=int, batch_size=10, concurrency=2, use_process=use_process)
    class SlowModel:
        def __init__(self, path: str, offset: int) -> None:
            import time

            time.sleep(0.3)  # slow: every batch would like its own instance
            with open(path, "a") as f:
                f.write(f"{os.getpid()}\n")
            self.offset = offset

        def __call__(self, x):
            assert len(x) <= 10  # the UDF still sees batch_size rows per call
            return [v + self.offset for v in x.to_pylist()]

    model = SlowModel(str(log), 100)
    n = 30_000  # several engine calls even in process mode (about 8,192 rows per round trip)
    out = ketch.from_pydict({"x": list(range(n))}).with_column("y", model(col("x"))).to_pydict()
    assert out["y"] == [x + 100 for x in range(n)]
    pids = log.read_text().split()
    assert len(pids) == 2
    assert (str(os.getpid()) not in pids) == use_process  # process mode: __init__ ran in workers


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
def test_class_defaults_to_process_mode_when_picklable():
    @ketch.cls(return_dtype=int)
    class WhereAmI:
        def __call__(self, x):
            return [os.getpid()] * len(x)

    df = ketch.from_pydict({"x": [1, 2]})
    pids = df.with_column("p", WhereAmI()(col("x"))).to_pydict()["p"]
    assert set(pids) != {os.getpid()}

    lock = threading.Lock()  # unpicklable state: stays on threads

    @ketch.cls(return_dtype=int)
    class Locked:
        def __call__(self, x):
            with lock:
                return [os.getpid()] * len(x)

    assert set(df.with_column("p", Locked()(col("x"))).to_pydict()["p"]) == {os.getpid()}


def test_unpicklable_udf_in_process_mode_fails_at_plan_time():
    lock = threading.Lock()

    @ketch.func(return_dtype=int, use_process=True)
    def holds_lock(x):
        with lock:
            return x

    with pytest.raises(TypeError, match="holds_lock.*cannot be pickled.*lock"):
        holds_lock(col("x"))


@pytest.mark.native_only  # about this engine process and its UDF worker processes
def test_segfault_in_worker_is_a_clear_error_and_the_parent_survives():
    @ketch.func.batch(return_dtype=int, use_process=True)
    def crash(x):
        os.kill(os.getpid(), signal.SIGSEGV)

    df = ketch.from_pydict({"x": [1, 2, 3]})
    with pytest.raises(UDFError, match="crash.*worker process.*killed by signal SIGSEGV"):
        df.with_column("y", crash(col("x"))).collect()
    # The parent is alive and a later query starts fresh workers.
    assert df.with_column("y", double(col("x"))).to_pydict()["y"] == [2, 4, 6]


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
def test_chatty_worker_does_not_block(capfd):
    @ketch.func.batch(return_dtype=int, use_process=True)
    def chatty(x):
        import sys

        sys.stdout.write("x" * (10 * 1024 * 1024))
        sys.stdout.flush()
        sys.stderr.write("done\n")
        return x.to_pylist()

    out = ketch.from_pydict({"x": [1, 2]}).with_column("y", chatty(col("x"))).to_pydict()
    assert out["y"] == [1, 2]
    captured = capfd.readouterr()
    assert captured.out.count("x") >= 10 * 1024 * 1024 and "done" in captured.err


def test_process_mode_exception_keeps_type_and_worker_traceback():
    @ketch.func(return_dtype=int, use_process=True)
    def boom(x):
        raise KeyError(f"missing {x}")

    with pytest.raises(UDFError) as info:
        ketch.from_pydict({"x": [7]}).with_column("y", boom(col("x"))).collect()
    cause = info.value.__cause__
    assert isinstance(cause, KeyError)
    assert any("UDF worker process" in note for note in getattr(cause, "__notes__", []))


# -- resources and explain -----------------------------------------------------------------------


# On Ray they are checked against the cluster (tests/distributed/test_ray_actor_pool.py).
@pytest.mark.native_only
def test_gpu_requests_are_accounted_against_the_machine(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # one GPU
    with pytest.raises(ValueError, match=r"1 GPU\(s\) x 2 instance\(s\) = 2 GPUs, but this machine has 1"):

        @ketch.cls(return_dtype=int, gpus=1, concurrency=2, use_process=False)
        class TwoGpus:
            def __call__(self, x):
                return x

    @ketch.cls(return_dtype=int, gpus=0.5, use_process=False)
    class HalfGpu:
        def __call__(self, x):
            return x

    assert HalfGpu.options.concurrency == 2  # two instances share the one GPU
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(ValueError, match="this machine has 0"):
        ketch.func(_failing_row, return_dtype=int, gpus=1)


def test_explain_shows_udf_properties_and_resources():
    @ketch.cls(return_dtype=int, batch_size=32, concurrency=3, cpus=0.5, use_process=False, max_retries=1)
    class Model:
        def __call__(self, x):
            return x

    df = ketch.from_pydict({"a": [1], "b": [2]}).with_column("m", Model()(col("a")))
    out = io.StringIO()
    with redirect_stdout(out):
        df.explain(show_all=True)
    text = out.getvalue()
    assert "Passthrough Columns = [a, b]" in text
    assert "Expr = Model(col(a)) as m" in text
    assert (
        "Properties = { batch_size = 32, concurrency = 3, async = false, use_process = false, "
        "max_retries = 1, on_error = raise }"
    ) in text
    assert "Resource request = { num_cpus = 0.5, num_gpus = 0, memory_bytes = None }" in text


# -- regressions from a hostile tester --------------------------------------------------------------


def test_generator_with_on_error_nulls_only_the_failing_row():
    @ketch.func(on_error="ignore")
    def gen(x: int) -> Iterator[int]:
        if x == 5:
            raise ValueError("five")
        yield x

    out = ketch.from_pydict({"x": list(range(8))}).with_column("y", gen(col("x"))).to_pydict()
    assert out["y"] == [0, 1, 2, 3, 4, None, 6, 7]  # the failing row: null, as a row yielding nothing


def test_row_retries_rerun_only_the_failing_row(tmp_path):
    calls = tmp_path / "calls"

    @ketch.func(max_retries=2)
    def once_bad(x: int) -> int:
        with open(calls, "a") as f:
            f.write(f"{x}\n")
        if x == 5 and calls.read_text().split().count("5") == 1:
            raise ConnectionError("transient")
        return x

    out = ketch.from_pydict({"x": list(range(8))}).with_column("y", once_bad(col("x"))).to_pydict()
    assert out["y"] == list(range(8))
    counts = calls.read_text().split()
    assert counts.count("5") == 2 and all(counts.count(str(v)) == 1 for v in range(8) if v != 5)


def test_python_objects_reach_process_mode_udfs_as_objects():
    df = ketch.from_pydict({"o": [{"k": 1}, None]})

    @ketch.func(use_process=True)
    def kind(o) -> str:
        return type(o).__name__

    assert df.with_column("t", kind(col("o"))).to_pydict()["t"] == ["dict", "NoneType"]


@pytest.mark.parametrize("use_process", [False, True])
def test_udfs_return_numpy_images_and_tensors(use_process):
    @ketch.func(return_dtype=ketch.DataType.image("RGB"), use_process=use_process)
    def paint(x: int):
        return np.full((2, 3, 3), x, np.uint8)

    @ketch.func(return_dtype=ketch.DataType.tensor(ketch.DataType.float32(), (2,)), use_process=use_process)
    def pair(x: int):
        return np.array([x, x + 1])

    out = ketch.from_pydict({"x": [1, 2]}).select(paint(col("x")).alias("img"), pair(col("x")).alias("t"))
    table = out.to_arrow()
    assert [np.asarray(i).tolist() for i in out.to_pydict()["img"]] == [
        np.full((2, 3, 3), v).tolist() for v in (1, 2)
    ]
    np.testing.assert_array_equal(ketch.Series(table.column("t")).to_numpy(), [[1, 2], [2, 3]])


def test_base_exceptions_in_udfs_are_udf_errors():
    @ketch.func(return_dtype=int, use_process=False)
    def interrupts(x):
        raise KeyboardInterrupt("from the UDF")

    with pytest.raises(UDFError, match="interrupts.*KeyboardInterrupt") as info:
        ketch.from_pydict({"x": [1]}).with_column("y", interrupts(col("x"))).collect()
    assert isinstance(info.value.__cause__, KeyboardInterrupt)


def test_cuda_visible_devices_parsing(monkeypatch):
    from ketch.udf.options import _available_gpus

    for value, expected in [("0,1", 2), ("1,-1,2", 1), ("0,,1", 1), ("", 0), ("-1", 0)]:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", value)
        assert _available_gpus() == expected, value


@pytest.mark.native_only  # about this engine process and its UDF worker processes
def test_workers_exit_when_the_engine_process_dies(tmp_path):
    """Workers outlive neither a killed engine nor its threads' exits: they watch the engine's end
    of their stdin pipe, so a SIGKILLed engine leaves no orphan, while a live engine keeps its
    workers across queries."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "engine.py"
    pids = tmp_path / "pids.txt"
    script.write_text(
        f"""
import os, time, ketch
from ketch import col

@ketch.cls(concurrency=2, use_process=True, return_dtype=ketch.DataType.int64())
class Pid:
    def __call__(self, x):
        return [os.getpid()] * len(x)

expr = Pid()(col("x"))  # holds the pool: its workers stay up between queries
first = set(ketch.from_pydict({{"x": list(range(4000))}}).with_column("p", expr).to_pydict()["p"])
second = set(ketch.from_pydict({{"x": list(range(3000))}}).with_column("p", expr).to_pydict()["p"])
assert second <= first, (first, second)  # the same workers serve the second query
open({str(pids)!r}, "w").write(" ".join(map(str, sorted(first))))
time.sleep(60)
"""
    )
    engine = subprocess.Popen([sys.executable, str(script)])
    deadline = time.monotonic() + 60
    while not pids.exists() or not pids.read_text():
        assert engine.poll() is None, "the engine script failed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    workers = [int(p) for p in pids.read_text().split()]
    engine.send_signal(signal.SIGKILL)
    engine.wait()
    deadline = time.monotonic() + 10
    alive = workers
    while alive and time.monotonic() < deadline:
        alive = [p for p in workers if _alive(p)]
        time.sleep(0.05)
    assert not alive, f"worker processes {alive} outlived the engine"
    prefix = f"ketch-{engine.pid}-"
    while [n for n in os.listdir("/dev/shm") if n.startswith(prefix)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [n for n in os.listdir("/dev/shm") if n.startswith(prefix)] == []  # reclaimed


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by init) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.native_only  # about this engine process and its UDF worker processes
def test_failed_process_udf_queries_leave_no_workers_behind(tmp_path):
    """Stashed exceptions of a failed query (also those never re-raised) must not keep the UDF's
    process pool, and so its worker processes, alive."""
    import subprocess
    import sys

    script = tmp_path / "failing.py"
    script.write_text(
        """
import gc, os, subprocess, ketch
from ketch import col

@ketch.cls(return_dtype=ketch.DataType.int64(), use_process=True, batch_size=50, concurrency=2)
class AlwaysFails:
    def __init__(self, tag):
        self.tag = tag
    def __call__(self, x):
        raise RuntimeError("always")

df = ketch.from_pydict({"id": list(range(2000))})
for i in range(3):
    try:
        df.with_column("y", AlwaysFails(i)(col("id"))).to_pydict()
    except ketch.errors.UDFError:
        pass
    gc.collect()
out = subprocess.run(["ps", "-e", "-o", "pid=,ppid=,stat=,args="], capture_output=True, text=True).stdout
rows = [line.split(None, 3) for line in out.splitlines()]
ours, grew = {os.getpid()}, True
while grew:  # descendants: workers are forked by the zygote, so they are grandchildren
    more = {int(r[0]) for r in rows if int(r[1]) in ours} - ours
    ours |= more
    grew = bool(more)
live = [r for r in rows if int(r[0]) in ours and "udf_worker" in r[3] and not r[2].startswith("Z")]
print("LIVE", len(live))
"""
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert "LIVE 0" in out.stdout, out.stdout + out.stderr


def _instances_cuda(directory, expected: int) -> list[str]:
    """CUDA_VISIBLE_DEVICES as each worker process's __init__ saw it (one file per process)."""
    import time

    deadline = time.monotonic() + 60  # every worker starts with the first batch; some finish later
    while len(list(directory.iterdir())) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return sorted(p.read_text() for p in directory.iterdir())


# On Ray, GPUs are Ray's to assign (tests/distributed/test_ray_actor_pool.py).
@pytest.mark.native_only
@pytest.mark.parametrize(
    ("gpus", "concurrency", "expected"), [(1, 2, ["3", "5"]), (0.5, 4, ["3", "3", "5", "5"])]
)
def test_process_mode_instances_with_gpus_each_see_their_own_slice(
    monkeypatch, tmp_path, gpus, concurrency, expected
):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")  # two GPUs (none needed: only the variable is read)
    seen = tmp_path / "seen"
    seen.mkdir()

    @ketch.cls(return_dtype=int, gpus=gpus, concurrency=concurrency, use_process=True, batch_size=1)
    class OnGpu:
        def __init__(self):
            (seen / str(os.getpid())).write_text(os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>"))

        def __call__(self, x):
            # The query must not end (and release its pool) before every instance started.
            _instances_cuda(seen, concurrency)
            return x.to_arrow()

    out = ketch.from_pydict({"x": list(range(8))}).with_column("y", OnGpu()(col("x"))).to_pydict()
    assert out["y"] == list(range(8))
    assert _instances_cuda(seen, concurrency) == expected


@pytest.mark.native_only
def test_gpu_slices_pack_fractional_instances_and_refuse_missing_gpus():
    from ketch.execution.gpu_slices import devices_for

    assert [devices_for(k, 2, ["a", "b", "c", "d"]) for k in range(2)] == [["a", "b"], ["c", "d"]]
    assert [devices_for(k, 0.25, ["a", "b"]) for k in range(8)] == [["a"]] * 4 + [["b"]] * 4
    assert devices_for(0, 0, ["a"]) == []
    with pytest.raises(ValueError, match="instance 2 needs GPU 1 but only 1 are visible"):
        devices_for(2, 0.5, ["a"])


@ketch.func
def _plus_one(x: int) -> int:
    return x + 1


@ketch.func
def _times_ten(x: int) -> int:
    return x * 10


def test_nested_udfs_without_an_alias_give_the_outer_result_under_the_inner_name():
    # The optimizer splits g(f(x)) into stages; the result keeps the name "x" (the first
    # argument's, as in Daft) and is g's output, not the input column of the same name.
    df = ketch.from_pydict({"x": [0, 1, 2, 3]})
    assert df.select(_times_ten(_plus_one(col("x")))).to_pydict() == {"x": [10, 20, 30, 40]}
    assert df.with_column("x", _times_ten(_plus_one(col("x")))).to_pydict() == {"x": [10, 20, 30, 40]}
    out = df.select(col("x").alias("orig"), _times_ten(_plus_one(col("x")))).to_pydict()
    assert out == {"orig": [0, 1, 2, 3], "x": [10, 20, 30, 40]}
