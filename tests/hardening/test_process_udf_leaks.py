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


def settles(expected_fds: int, timeout: float = 10.0) -> tuple[int, list[str]]:
    """Waits (polling) until the zygote's drain threads have seen it exit."""
    deadline = time.monotonic() + timeout
    while True:
        state = (descriptors(), children())
        if (state[0] <= expected_fds and not state[1]) or time.monotonic() > deadline:
            return state
        time.sleep(0.05)


def test_process_queries_leave_nothing_open():
    df = ketch.from_pydict({"a": [1, 2, 3]})

    @ketch.func(return_dtype=ketch.DataType.int64(), use_process=True)
    def plus(x):
        return x + 1

    df.select(plus(col("a"))).collect()  # first: imports, thread pools
    base_fds, base_children = settles(10**6)
    for _ in range(5):
        assert df.select(plus(col("a")).alias("b")).to_pydict() == {"b": [2, 3, 4]}
    assert settles(base_fds) == (base_fds, base_children)


def test_unpicklable_process_udf_stops_the_zygote_it_prestarted():
    df = ketch.from_pydict({"a": [1, 2, 3]})
    base_fds, _ = settles(10**6)
    lock = threading.Lock()

    @ketch.func(return_dtype=ketch.DataType.int64(), use_process=True)
    def holds_a_lock(x):
        with lock:
            return x

    with pytest.raises(TypeError, match="cannot be pickled"):
        df.select(holds_a_lock(col("a"))).collect()
    fds, kids = settles(base_fds)
    assert kids == [] and fds <= base_fds
