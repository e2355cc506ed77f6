"""Process-mode UDFs leave no process or descriptor behind: the zygote stops when no pool needs
it (also when a declared UDF turns out not to pickle), and its pipes close when it exits."""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

import ketch
from ketch import col


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def children() -> list[str]:
    out = subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True, text=True).stdout
    return out.split()


def settles(expected_fds: int, expected_children: set[str], timeout: float = 10.0) -> tuple[int, set[str]]:
    """Waits (polling) until the zygote's drain threads have seen it exit: at most
    ``expected_fds`` descriptors and no child beyond ``expected_children`` (other tests' processes,
    such as a shared Ray cluster, stay)."""
    deadline = time.monotonic() + timeout
    while True:
        fds, kids = descriptors(), set(children())
        if (fds <= expected_fds and kids <= expected_children) or time.monotonic() > deadline:
            return fds, kids - expected_children
        time.sleep(0.05)


def zygote_gone() -> None:
    from ketch.execution import process_pool

    with process_pool._zygote_lock:
        if process_pool._zygote is not None:
            process_pool._zygote.stop()
            process_pool._zygote = None


def test_process_queries_leave_nothing_open():
    df = ketch.from_pydict({"a": [1, 2, 3]})

    @ketch.func(return_dtype=ketch.DataType.int64(), use_process=True)
    def plus(x):
        return x + 1

    df.select(plus(col("a"))).collect()  # first: imports, thread pools
    zygote_gone()
    base_fds, base_children = descriptors(), set(children())
    for _ in range(5):
        assert df.select(plus(col("a")).alias("b")).to_pydict() == {"b": [2, 3, 4]}
    fds, extra = settles(base_fds, base_children)
    assert fds <= base_fds and extra == set()


def test_unpicklable_process_udf_stops_the_zygote_it_prestarted():
    df = ketch.from_pydict({"a": [1, 2, 3]})
    zygote_gone()
    base_fds, base_children = descriptors(), set(children())
    lock = threading.Lock()

    @ketch.func(return_dtype=ketch.DataType.int64(), use_process=True)
    def holds_a_lock(x):
        with lock:
            return x

    with pytest.raises(TypeError, match="cannot be pickled"):
        df.select(holds_a_lock(col("a"))).collect()
    fds, extra = settles(base_fds, base_children)
    assert extra == set() and fds <= base_fds


BURST = r"""
import sys
import ketch
from ketch import col
assert "pandas" not in sys.modules  # the zygote forks from this process: it must not have it
stages = []
for _ in range(12):
    @ketch.cls(use_process=True, max_concurrency=2)
    class Stage:
        @ketch.method.batch(return_dtype=ketch.DataType.int64())
        def __call__(self, x):
            from ketch.execution import udf_worker
            return [int(udf_worker.imported_deferred_itself)] * len(x)
    stages.append(Stage)
df = ketch.from_pydict({"a": list(range(48))}).into_batches(2)
for i, stage in enumerate(stages):
    df = df.with_column(f"f{i}", stage()(col("a")))
out = df.to_pydict()
assert out["a"] == list(range(48))
print(sum(max(out[f"f{i}"]) for i in range(12)))
"""


def test_a_burst_of_process_workers_shares_the_zygotes_deferred_imports():
    """Twelve chained process-mode stages start 24 workers at once: only the first ones may import
    pandas themselves; the zygote imports it before forking the rest (every worker used to import
    it: 7 CPU-seconds before the first batch came out)."""
    import sys

    out = subprocess.run([sys.executable, "-c", BURST], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    stages_whose_workers_imported_pandas = int(out.stdout.strip().splitlines()[-1])
    assert stages_whose_workers_imported_pandas <= 4  # the first four forks do not wait for it
