"""Ctrl-C during a UDF that sleeps or blocks raises KeyboardInterrupt in the caller within about a
second in every mode, and leaves no worker process or shared-memory segment behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

_UDFS = {
    "thread_func": """
        @ketch.func
        def blocked(x: int) -> int:
            started()
            time.sleep(600)
            return x
        expr = blocked(col("x"))
    """,
    "thread_cls": """
        @ketch.cls(return_dtype=int, use_process=False)
        class Blocked:
            def __call__(self, x):
                started()
                threading.Event().wait()  # blocks forever
                return x
        expr = Blocked()(col("x"))
    """,
    "process_cls": """
        @ketch.cls(return_dtype=int, use_process=True, concurrency=2)
        class Blocked:
            def __call__(self, x):
                started()
                time.sleep(600)
                return x
        expr = Blocked()(col("x"))
    """,
    "process_cls_init": """
        @ketch.cls(return_dtype=int, use_process=True, concurrency=3)
        class SlowInit:
            def __init__(self):
                started()  # workers start (and run __init__) together, before any batch
                time.sleep(600)
            def __call__(self, x):
                return x
        expr = SlowInit()(col("x"))
    """,
    "process_func": """
        @ketch.func(use_process=True)
        def blocked(x: int) -> int:
            started()
            time.sleep(600)
            return x
        expr = blocked(col("x"))
    """,
    "async": """
        @ketch.func
        async def blocked(x: int) -> int:
            started()
            await asyncio.sleep(600)
            return x
        expr = blocked(col("x"))
    """,
}


@pytest.mark.parametrize("mode", sorted(_UDFS))
def test_ctrl_c_interrupts_a_blocked_udf(tmp_path, mode):
    marker = tmp_path / "started"
    script = (
        textwrap.dedent(f"""
        import asyncio, os, signal, threading, time
        # A runner started in the background may pass SIGINT on as ignored: act as a terminal would.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        import ketch
        from ketch import col

        def started():
            open({str(marker)!r}, "a").close()
    """)
        + textwrap.dedent(_UDFS[mode])
        + textwrap.dedent("""
        df = ketch.from_pydict({"x": list(range(4))}).with_column("y", expr)
        try:
            df.collect()
            print("COMPLETED", flush=True)
        except KeyboardInterrupt:
            print(f"INTERRUPTED {time.time()!r}", flush=True)
        def ppid(pid):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    return int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                return None
        # Every descendant: workers are forked by the zygote, so they are grandchildren.
        parents = {int(p): ppid(p) for p in os.listdir("/proc") if p.isdigit()}
        children, frontier = [], [os.getpid()]
        while frontier:
            parent = frontier.pop()
            found = [p for p, pp in parents.items() if pp == parent]
            children += found
            frontier += found
        segments = [n for n in os.listdir("/dev/shm") if n.startswith(f"ketch-{os.getpid()}-")]
        print(f"CHILDREN {len(children)} SEGMENTS {len(segments)}", flush=True)
    """)
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the UDF never started"
            time.sleep(0.02)
        sent = time.time()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = stdout.splitlines()
    interrupted = [line for line in lines if line.startswith("INTERRUPTED")]
    assert interrupted, stdout + stderr
    assert float(interrupted[0].split()[1]) - sent < 3.0  # about a second, not the UDF's 600 s
    assert "CHILDREN 0 SEGMENTS 0" in lines, stdout + stderr
    leftover = [n for n in os.listdir("/dev/shm") if n.startswith(f"ketch-{proc.pid}-")]
    assert leftover == []
