"""Process-mode UDF workers start fast and together: forked from a pre-imported zygote, all
``concurrency`` workers of a UDF start (and run ``__init__``) in parallel when its first batch
arrives, a batch goes to whichever worker is ready first, the pool stays warm across queries of the
same UDF, and failures (``__init__`` raising, a killed worker) are clear errors. Nothing (process
or shared-memory segment) outlives the pool.

Concurrency is proven by rendezvous, not by timing: a call or an ``__init__`` waits (with a
generous timeout that fails the test) for something only an overlapping start can provide."""

from __future__ import annotations

import gc
import os
import signal
import time
import uuid
from pathlib import Path

import pytest

import ketch
from ketch import col
from ketch.errors import UDFError
from process_helpers import descendants

RENDEZVOUS_TIMEOUT_S = 60.0


def _wait_until(predicate, what: str) -> None:
    deadline = time.monotonic() + RENDEZVOUS_TIMEOUT_S
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} never happened")
        time.sleep(0.01)


class InitLogger:
    """Each instance records its pid; the first call waits until ``expected`` instances exist (a
    rendezvous: with one batch, only workers started in parallel get there)."""

    def __init__(self, directory: str, expected: int) -> None:
        self.directory, self.expected = directory, expected
        self.pid = os.getpid()
        Path(directory, f"{self.pid}").write_text(f"{time.monotonic()!r}")

    def __call__(self, x):
        _wait_until(lambda: len(os.listdir(self.directory)) >= self.expected, "all workers starting")
        return [self.pid] * len(x)


def test_all_workers_start_before_the_first_batch_finishes(tmp_path):
    inits = tmp_path / "inits"
    inits.mkdir()
    model = ketch.cls(return_dtype=int, concurrency=3, use_process=True)(InitLogger)(str(inits), 3)
    # One row: one batch. Lazily started workers (one per batch that finds none idle) would never
    # reach three, and the call would time out.
    out = ketch.from_pydict({"x": [1]}).with_column("pid", model(col("x"))).to_pydict()
    pids = sorted(int(name) for name in os.listdir(inits))
    assert len(pids) == 3 and os.getpid() not in pids
    assert out["pid"][0] in pids


class FirstReadyServes:
    """The first instance to start is ready at once; the others hold their __init__ until a batch
    has been served. A batch sent to a worker still in __init__ would wait forever (and the
    __init__ time out): the batch must go to the ready worker."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        try:
            fd = os.open(os.path.join(directory, "first"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.close(fd)
            self.role = "first"
        except FileExistsError:
            self.role = "late"
            _wait_until(lambda: os.path.exists(os.path.join(directory, "served")), "a batch served")

    def __call__(self, x):
        Path(self.directory, "served").touch()
        return [1 if self.role == "first" else 2] * len(x)


def test_a_batch_goes_to_the_first_ready_worker(tmp_path):
    model = ketch.cls(return_dtype=int, concurrency=3, use_process=True)(FirstReadyServes)(str(tmp_path))
    out = ketch.from_pydict({"x": [1]}).with_column("role", model(col("x"))).to_pydict()
    assert out["role"] == [1]


class CountsInits:
    """Logs each __init__; every call waits until two calls have arrived (so the first query uses
    both workers, whatever the order in which they became ready)."""

    def __init__(self, path: str, calls: str) -> None:
        self.calls = calls
        with open(path, "a") as f:
            f.write(f"{os.getpid()}\n")

    def __call__(self, x):
        Path(self.calls, uuid.uuid4().hex).touch()
        _wait_until(lambda: len(os.listdir(self.calls)) >= 2, "two calls at once")
        return [os.getpid()] * len(x)


def test_pool_stays_warm_across_queries_of_the_same_udf(tmp_path):
    """The pool lives as long as the UDF expression (a collected DataFrame drops its plan, and the
    pool with it): queries that share the expression share the workers and their instances."""
    log, calls = tmp_path / "inits.log", tmp_path / "calls"
    calls.mkdir()
    udf = ketch.cls(return_dtype=int, batch_size=1, concurrency=2, use_process=True)(CountsInits)
    expr = udf(str(log), str(calls))(col("x"))
    first = set(ketch.from_pydict({"x": [1, 2]}).with_column("pid", expr).to_pydict()["pid"])
    second = set(ketch.from_pydict({"x": [3, 4, 5]}).with_column("pid", expr).to_pydict()["pid"])
    inits = [int(pid) for pid in log.read_text().split()]
    assert len(inits) == 2 and first == set(inits)  # both workers served the first query
    assert second <= first  # ... and the second, with no __init__ again


class FailsInInit:
    def __init__(self, path: str) -> None:
        raise FileNotFoundError(f"no model weights at {path}")

    def __call__(self, x):  # pragma: no cover - never reached
        return x


def test_init_failure_reports_the_users_exception():
    model = ketch.cls(return_dtype=int, concurrency=2, use_process=True)(FailsInInit)("/models/m.bin")
    df = ketch.from_pydict({"x": [1, 2, 3]}).with_column("y", model(col("x")))
    with pytest.raises(UDFError, match=r"FailsInInit.*no model weights at /models/m.bin") as info:
        df.collect()
    cause = info.value.__cause__
    assert isinstance(cause, FileNotFoundError)
    assert any("FailsInInit" in note or "__init__" in note for note in getattr(cause, "__notes__", []))


class DiesOnFive:
    def __call__(self, x):
        if 5 in x.to_pylist():
            os.kill(os.getpid(), signal.SIGKILL)
        return x.to_pylist()


def test_a_killed_worker_names_the_udf_the_signal_and_the_rows():
    model = ketch.cls(return_dtype=int, batch_size=2, concurrency=1, use_process=True)(DiesOnFive)()
    df = ketch.from_pydict({"x": list(range(8))})
    with pytest.raises(UDFError, match=r"DiesOnFive.*killed by signal SIGKILL.*source rows 4\.\.5"):
        df.with_column("y", model(col("x"))).collect()
    # The pool starts a fresh worker for the next query.
    out = ketch.from_pydict({"x": [1, 2]}).with_column("y", model(col("x"))).to_pydict()
    assert out["y"] == [1, 2]


class WhereAmI:
    def __call__(self, x):
        import sys

        return [f"{os.environ.get('KETCH_WORKER_TEST_VAR')}|{os.getcwd()}|{sys.path[0]}"] * len(x)


def test_workers_take_the_engines_environment_at_start_not_the_zygotes(tmp_path, monkeypatch):
    """The zygote starts when a process-mode UDF is declared; a worker forked later still sees the
    engine's environment, working directory and sys.path of that moment."""
    model = ketch.cls(return_dtype=str, use_process=True, concurrency=1)(WhereAmI)()
    monkeypatch.setenv("KETCH_WORKER_TEST_VAR", "set-after-declaring")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = ketch.from_pydict({"x": [1]}).with_column("w", model(col("x"))).to_pydict()
    assert out["w"] == [f"set-after-declaring|{tmp_path}|{tmp_path}"]


# -- nothing outlives the pool (in a fresh interpreter: other tests' pools stay out of the count) ----


def _segments(pid: int) -> list[str]:
    return [n for n in os.listdir("/dev/shm") if n.startswith(f"ketch-{pid}-")]


class Plus:
    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, x):
        return [v + self.n for v in x.to_pylist()]


def release_pool_and_count() -> dict:
    model = ketch.cls(return_dtype=int, batch_size=10, concurrency=3, use_process=True)(Plus)(1)
    expr = model(col("x"))
    out = ketch.from_pydict({"x": list(range(100))}).with_column("y", expr).to_pydict()
    assert out["y"] == list(range(1, 101))
    # The expression holds the pool: its workers wait, warm, for the next query.
    during = {"processes": len(descendants(os.getpid())), "segments": len(_segments(os.getpid()))}
    del expr, model
    gc.collect()
    # The engine's UDF threads may drop their last reference to the plan a moment after the query
    # returns: wait (with a deadline) for the pool's shutdown rather than race it.
    deadline = time.monotonic() + RENDEZVOUS_TIMEOUT_S
    while (descendants(os.getpid()) or _segments(os.getpid())) and time.monotonic() < deadline:
        time.sleep(0.02)
    after = {"processes": len(descendants(os.getpid())), "segments": len(_segments(os.getpid()))}
    return {"during": during, "after": after}


def test_no_process_or_segment_outlives_the_pool(run_isolated):
    counts = run_isolated(release_pool_and_count, timeout=120)
    assert counts["during"]["processes"] == 4  # three workers and the zygote they fork from
    assert counts["during"]["segments"] >= 1
    assert counts["after"] == {"processes": 0, "segments": 0}


class DrawsRandom:
    def __init__(self, calls: str) -> None:
        self.calls = calls

    def __call__(self, x):
        import numpy as np

        Path(self.calls, uuid.uuid4().hex).touch()
        _wait_until(lambda: len(os.listdir(self.calls)) >= 2, "two calls at once")  # two workers
        return [int(np.random.randint(0, 2**62)) for _ in range(len(x))]


def test_forked_workers_draw_different_random_numbers(tmp_path):
    """numpy's global generator is seeded in the zygote: each forked worker reseeds it."""
    udf = ketch.cls(return_dtype=int, batch_size=1, concurrency=2, use_process=True)(DrawsRandom)
    out = ketch.from_pydict({"x": [1, 2]}).with_column("r", udf(str(tmp_path))(col("x"))).to_pydict()
    assert out["r"][0] != out["r"][1]


class Pid:
    def __call__(self, x):
        return [os.getpid()] * len(x)


def _gone(pid: int) -> bool:
    """Dead: a zombie, or reaped. (A zombie group leader may still have a thread exiting, holding
    the worker's socket open: the batch sent then is never read, and goes to another worker.)"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_a_worker_killed_while_idle_is_replaced_for_the_next_query():
    expr = ketch.cls(return_dtype=int, concurrency=1, use_process=True)(Pid)()(col("x"))
    first = ketch.from_pydict({"x": [1]}).with_column("pid", expr).to_pydict()["pid"][0]
    os.kill(first, signal.SIGKILL)  # the OOM killer, say, between two queries
    _wait_until(lambda: _gone(first), "the worker's death")
    second = ketch.from_pydict({"x": [2]}).with_column("pid", expr).to_pydict()["pid"][0]
    assert second != first


class StageA:
    """Its first call waits until stage B's worker has run ``__init__``."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def __call__(self, x):
        _wait_until(lambda: Path(self.directory, "b-ready").exists(), "stage B's worker starting")
        return x


class StageB:
    def __init__(self, directory: str) -> None:
        Path(directory, "b-ready").write_text(str(os.getpid()))

    def __call__(self, x):
        return x


def test_chained_process_udfs_start_their_workers_when_the_query_starts(tmp_path):
    # With one row, stage B gets its first batch only after stage A's call returns: a B pool
    # started on its first batch would leave A waiting until the rendezvous times out.
    a = ketch.cls(return_dtype=int, concurrency=1, use_process=True)(StageA)(str(tmp_path))
    b = ketch.cls(return_dtype=int, concurrency=1, use_process=True)(StageB)(str(tmp_path))
    out = (
        ketch.from_pydict({"x": [7]}).with_column("y", a(col("x"))).with_column("z", b(col("y"))).to_pydict()
    )
    assert out == {"x": [7], "y": [7], "z": [7]}
    assert int(Path(tmp_path, "b-ready").read_text()) != os.getpid()


class ParentPid:
    def __call__(self, x):
        return [os.getppid()] * len(x)


def launcher_before_and_during_a_query() -> dict:
    import sys

    imported = {
        "descendants": len(descendants(os.getpid())),
        "pool_module_loaded": "ketch.execution.process_pool" in sys.modules,
    }
    udf = ketch.cls(return_dtype=int, concurrency=1, use_process=True)(ParentPid)
    from ketch.execution import process_pool

    zygote = process_pool._zygote
    assert zygote is not None
    declared = {"descendants": descendants(os.getpid()), "zygote": zygote.proc.pid}
    # It gets ready on its own, before any query asks it for a worker.
    _wait_until(lambda: zygote._ready, "the zygote's imports")
    parents = ketch.from_pydict({"x": [1, 2]}).with_column("p", udf()(col("x"))).to_pydict()["p"]
    return {"imported": imported, "declared": declared, "parents": parents}


def test_the_launcher_starts_when_a_process_udf_is_declared_and_serves_its_first_query(run_isolated):
    """``import ketch`` starts no process; declaring a process-mode UDF starts the zygote in the
    background (ready before any query runs), and the first query's workers fork from that very
    process rather than a launcher started by the query."""
    out = run_isolated(launcher_before_and_during_a_query, timeout=120)
    assert out["imported"] == {"descendants": 0, "pool_module_loaded": False}
    assert out["declared"]["descendants"] == [out["declared"]["zygote"]]
    assert out["parents"] == [out["declared"]["zygote"]] * 2
