"""Hostile users of the UDF worker zygote forked from the engine (ketch.execution.zygote_fork): a
Ctrl-C while it forks, a closed or replaced ``sys.stdout``, and the engine forking itself
(``os.fork()``, multiprocessing's "fork") after it declared and ran a process-mode UDF.

Each case runs in a fresh interpreter (``run_isolated`` or a subprocess): pytest's own process has
threads, so it takes the fresh-interpreter path instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import ketch
from ketch import col

DEADLINE_S = 30.0


def _children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``, from /proc."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat_file:
                stat = stat_file.read()
        except OSError:
            continue
        state, ppid = stat[stat.rindex(")") + 2 :].split()[:2]
        if int(ppid) == pid and state != "Z":
            out.append(int(name))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat_file:
            stat = stat_file.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _open_fds() -> set[int]:
    fds = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            os.readlink(f"/proc/self/fd/{name}")  # (the listing's own descriptor is gone by now)
        except OSError:
            continue
        fds.add(int(name))
    return fds


class AddOne:
    def __call__(self, x):
        return [v + 1 for v in x.to_pylist()]


class WorkerPid:
    def __call__(self, x):
        return [os.getpid()] * len(x)


def ctrl_c_while_forking_case() -> dict:
    import signal

    from ketch.execution import process_pool, zygote_fork

    # Ctrl-C raises KeyboardInterrupt, as in a terminal: a shell's background job (CI) starts
    # Python with SIGINT ignored, and an ignored Ctrl-C rightly interrupts nothing.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    fds_before = _open_fds()
    real_fork = os.fork
    can_fork = zygote_fork.engine_can_fork()
    forks: list[int] = []

    def fork_after_ctrl_c() -> int:  # SIGINT arrives while the zygote is being forked
        forks.append(1)
        os.kill(os.getpid(), signal.SIGINT)
        return real_fork()

    os.fork = fork_after_ctrl_c
    interrupted = False
    try:
        ketch.cls(return_dtype=int, concurrency=1, use_process=True)(AddOne)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        os.fork = real_fork
    left = {
        "can_fork": can_fork,
        "fork_called": bool(forks),
        "interrupted": interrupted,
        "children": _children(os.getpid()),
        "new_fds": sorted(_open_fds() - fds_before),
        "zygote": process_pool._zygote is not None,
    }
    # The engine is still fine: the next declaration forks a zygote that serves.
    udf = ketch.cls(return_dtype=int, concurrency=1, use_process=True)(AddOne)
    left["kind"] = type(process_pool._zygote.proc).__name__
    left["y"] = ketch.from_pydict({"x": [1, 2, 3]}).with_column("y", udf()(col("x"))).to_pydict()["y"]
    return left


def test_a_ctrl_c_while_the_zygote_forks_leaves_no_process_nor_descriptor_behind(run_isolated):
    out = run_isolated(ctrl_c_while_forking_case, timeout=120)
    assert out["can_fork"] is True, out
    assert out["fork_called"] is True, out
    assert out["interrupted"] is True, out
    assert out["children"] == []
    assert out["new_fds"] == []
    assert out["zygote"] is False
    assert out["kind"] == "ForkedProcess"
    assert out["y"] == [x + 1 for x in [1, 2, 3]]


class Printer:
    def __call__(self, x):
        print(f"worker-says-{x.to_pylist()[0]}", flush=True)
        return [v + 1 for v in x.to_pylist()]


def replaced_stdout_case(stdout_path: str, how: str) -> dict:
    import io

    from ketch.execution import process_pool

    out = os.open(stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(out, 1)
    os.close(out)
    if how == "stringio":
        sys.stdout = io.StringIO()
    else:
        sys.stdout.close()
    udf = ketch.cls(return_dtype=int, concurrency=1, use_process=True)(Printer)
    kind = type(process_pool._zygote.proc).__name__
    y = ketch.from_pydict({"x": [41]}).with_column("y", udf()(col("x"))).to_pydict()["y"]
    deadline = time.monotonic() + DEADLINE_S  # the worker's output is drained asynchronously
    while "worker-says-41" not in open(stdout_path).read() and time.monotonic() < deadline:
        time.sleep(0.01)
    return {"kind": kind, "y": y, "printed": open(stdout_path).read()}


def test_worker_output_reaches_the_engines_stdout_when_sys_stdout_is_replaced(run_isolated, tmp_path):
    out = run_isolated(replaced_stdout_case, str(tmp_path / "out.txt"), "stringio", timeout=120)
    assert out["kind"] == "ForkedProcess"
    assert out["y"] == [42]
    assert "worker-says-41" in out["printed"]  # as with a fresh interpreter, not into the StringIO


def test_a_closed_sys_stdout_does_not_break_the_forked_zygote(run_isolated, tmp_path):
    out = run_isolated(replaced_stdout_case, str(tmp_path / "out.txt"), "closed", timeout=120)
    assert out["kind"] == "ForkedProcess"
    assert out["y"] == [42]
    assert "worker-says-41" in out["printed"]


def forked_engine_case() -> dict:
    import atexit

    from ketch.execution import process_pool

    udf = ketch.cls(return_dtype=int, concurrency=1, use_process=True)(WorkerPid)
    expression = udf()(col("x"))

    def worker_pids() -> list[int]:
        return ketch.from_pydict({"x": [1, 2]}).with_column("w", expression).to_pydict()["w"]

    parent_workers = worker_pids()
    parent_zygote = process_pool._zygote.proc.pid
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the user's child runs the same query, then exits as Python does (atexit)
        try:
            os.close(reader)
            workers = worker_pids()
            zygote = process_pool._zygote.proc.pid
            report = {"workers": workers, "zygote": zygote, "zygote_parent": os.getpid()}
            report["worker_parents"] = [
                int(open(f"/proc/{w}/stat").read().split(")")[1].split()[1]) for w in workers
            ]
            os.write(writer, json.dumps(report).encode())
            atexit._run_exitfuncs()
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        child_report = json.loads(pipe.read())
    os.waitpid(child, 0)
    return {
        "parent_workers": parent_workers,
        "parent_zygote": parent_zygote,
        "child": child,
        "child_report": child_report,
        "parent_workers_after": worker_pids(),
    }


def test_a_child_made_by_os_fork_runs_its_own_workers_and_leaves_the_parents_alone(run_isolated):
    out = run_isolated(forked_engine_case, timeout=180)
    child = out["child_report"]
    assert out["child"] != child["zygote"] != out["parent_zygote"]
    assert child["zygote_parent"] == out["child"]  # the child's zygote is the child's own
    assert set(child["workers"]).isdisjoint(out["parent_workers"])
    assert child["worker_parents"] == [child["zygote"]] * len(child["workers"])
    # The child's exit did not stop the parent's worker: it serves the parent's next query.
    assert out["parent_workers_after"] == out["parent_workers"]


_PARENT_DIES = """
import json, os, sys
sys.path[:0] = {path!r}
import ketch
from ketch import col
from ketch.execution import process_pool

class WorkerPid:
    def __call__(self, x):
        return [os.getpid()] * len(x)

udf = ketch.cls(return_dtype=int, concurrency=1, use_process=True)(WorkerPid)
expression = udf()(col("x"))  # (its pool, and so the zygote, live as long as it does)
workers = ketch.from_pydict({{"x": [1]}}).with_column("w", expression).to_pydict()["w"]
zygote = process_pool._zygote
child = os.fork()
if child == 0:  # lives on (until its stdin closes) after the parent is gone
    os.close(1)
    sys.stdin.buffer.read()
    os._exit(0)
print(json.dumps({{"kind": type(zygote.proc).__name__, "zygote": zygote.proc.pid, "workers": workers,
                  "child": child}}), flush=True)
os._exit(0)
"""


def test_the_parents_zygote_and_workers_stop_when_it_dies_though_its_forked_child_lives():
    path = [os.path.join(os.path.dirname(__file__), "..", "..", "python")] + [p for p in sys.path if p]
    script = textwrap.dedent(_PARENT_DIES.format(path=path))
    engine = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        report = json.loads(engine.stdout.readline())
        engine.wait(timeout=DEADLINE_S)
        assert report["kind"] == "ForkedProcess"
        assert _alive(report["child"])
        deadline = time.monotonic() + DEADLINE_S
        left = [report["zygote"], *report["workers"]]
        while left and time.monotonic() < deadline:
            left = [pid for pid in left if _alive(pid)]
            time.sleep(0.02)
        assert left == []  # the parent's zygote and worker did not wait for the child
    finally:
        engine.stdin.close()  # the child's stdin: it exits
        engine.stdout.close()


def _is_zombie_child(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat_file:
            stat = stat_file.read()
    except OSError:
        return False  # reaped
    return stat[stat.rindex(")") + 2] == "Z"


def killed_zygote_case() -> dict:
    import signal

    from ketch.execution import process_pool

    udf = ketch.cls(return_dtype=int, concurrency=1, use_process=True)(AddOne)
    expression = udf()(col("x"))

    def query() -> list[int]:
        return ketch.from_pydict({"x": [1, 2, 3]}).with_column("y", expression).to_pydict()["y"]

    first = query()
    zygote = process_pool._zygote.proc.pid
    os.kill(zygote, signal.SIGKILL)  # between queries
    deadline = time.monotonic() + DEADLINE_S
    while (_alive(zygote) or _is_zombie_child(zygote)) and time.monotonic() < deadline:
        time.sleep(0.01)
    reaped = not _alive(zygote) and not _is_zombie_child(zygote)
    return {"first": first, "reaped": reaped, "second": query(), "third": query()}


def test_a_killed_zygote_is_reaped_at_once_and_the_next_queries_work(run_isolated):
    out = run_isolated(killed_zygote_case, timeout=120)
    expected = [x + 1 for x in [1, 2, 3]]
    assert out["reaped"] is True  # no zombie until the next query notices
    assert out["first"] == out["second"] == out["third"] == expected
