"""The UDF worker zygote is forked from the engine when that is safe (no thread started since
``import ketch``, small resident memory, not disabled), and started as a fresh interpreter
otherwise. A forked zygote holds none of the engine's descriptors open, drains its workers' output
into the engine's stdout, and serves queries like the other kind.

Each case runs in a fresh interpreter (``run_isolated``): pytest's own process has threads."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

import ketch
from ketch import col
from process_helpers import descendants

DEADLINE_S = 60.0


class ParentAndPrint:
    def __call__(self, x):
        print(f"printed-by-worker-{os.getpid()}", flush=True)
        return [os.getppid()] * len(x)


def _zygote_kind_and_parents(rows: int = 3) -> tuple[str, int, list[int], ketch.Expression]:
    """The zygote's kind and pid, the parents of the workers that served a query, and the UDF
    expression (its pool, and so the zygote, live as long as it does)."""
    udf = ketch.cls(return_dtype=int, concurrency=1, use_process=True)(ParentAndPrint)
    from ketch.execution import process_pool

    zygote = process_pool._zygote
    assert zygote is not None
    kind = type(zygote.proc).__name__
    expression = udf()(col("x"))
    parents = ketch.from_pydict({"x": list(range(rows))}).with_column("p", expression).to_pydict()["p"]
    return kind, zygote.proc.pid, parents, expression


def forked_zygote_case(stdout_path: str) -> dict:
    engine_end, peer_end = socket.socketpair()  # the engine's: a fork must not keep it open
    out = os.open(stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(out, 1)
    os.close(out)
    kind, zygote_pid, parents, expression = _zygote_kind_and_parents()
    from ketch.execution import process_pool

    engine_end.close()
    peer_end.settimeout(DEADLINE_S)
    try:
        peer_sees_eof = peer_end.recv(1) == b""
    except TimeoutError:  # a copy of the engine's end is still open somewhere
        peer_sees_eof = False
    zygote_still_up = process_pool._zygote is not None and process_pool._zygote.proc.poll() is None
    with open(f"/proc/{zygote_pid}/comm") as comm:
        zygote_name = comm.read().strip()
    del expression
    deadline = time.monotonic() + DEADLINE_S
    while "printed-by-worker-" not in open(stdout_path).read() and time.monotonic() < deadline:
        time.sleep(0.01)
    return {
        "kind": kind,
        "zygote": zygote_pid,
        "zygote_name": zygote_name,
        "parents": parents,
        "peer_sees_eof": peer_sees_eof,
        "zygote_still_up": zygote_still_up,
        "printed": open(stdout_path).read(),
    }


def test_a_zygote_forked_from_the_engine_serves_and_holds_none_of_its_descriptors(run_isolated, tmp_path):
    out = run_isolated(forked_zygote_case, str(tmp_path / "stdout.txt"), timeout=120)
    assert out["kind"] == "ForkedProcess"
    assert out["zygote_name"] == "ketch-zygote"  # what ps shows (its command line is the engine's)
    assert out["parents"] == [out["zygote"]] * 3  # the workers are the forked zygote's children
    assert out["zygote_still_up"] is True  # (else its exit would have closed the copies too)
    assert out["peer_sees_eof"] is True
    assert "printed-by-worker-" in out["printed"]  # a worker's print reaches the engine's stdout


def exec_zygote_case(reason: str) -> dict:
    stop = threading.Event()
    helper = None
    if reason == "python thread":
        helper = threading.Thread(target=stop.wait, daemon=True)
        helper.start()
    elif reason == "setting":
        os.environ["KETCH_UDF_ZYGOTE"] = "exec"
    elif reason == "memory":
        from ketch.execution import zygote_fork

        zygote_fork._MAX_RSS_BYTES = 1 << 20
    elif reason == "engine threads":  # a query ran before: the engine's thread pool exists
        ketch.from_pydict({"x": list(range(10_000))}).select((col("x") * 2).alias("y")).sum("y").to_pydict()
    from ketch.execution import zygote_fork

    can_fork = zygote_fork.engine_can_fork()
    kind, zygote_pid, parents, _ = _zygote_kind_and_parents()
    stop.set()
    return {"can_fork": can_fork, "kind": kind, "zygote": zygote_pid, "parents": parents}


@pytest.mark.parametrize("reason", ["python thread", "setting", "memory", "engine threads"])
def test_the_zygote_is_a_fresh_interpreter_when_a_fork_would_not_be_safe(run_isolated, reason):
    out = run_isolated(exec_zygote_case, reason, timeout=120)
    assert out["can_fork"] is False
    assert out["kind"] == "Popen"
    assert out["parents"] == [out["zygote"]] * 3


UDF_MODULE = """
import os

import ketch


@ketch.cls(return_dtype=int, concurrency=2, use_process=True)
class Model:
    def __call__(self, x):
        return [helper(v) * 1000 + os.getpid() % 1000 for v in x]


def helper(v):  # defined below the declaration: not there yet when the zygote forks
    return v * 10 + 1
"""


def udf_declared_while_its_module_imports_case(package_root: str, zygote_setting: str) -> dict:
    import importlib
    import sys

    os.environ["KETCH_UDF_ZYGOTE"] = zygote_setting
    sys.path.insert(0, package_root)
    model = importlib.import_module("mypipeline.udfs").Model  # the package __init__ imports it too
    from ketch.execution import process_pool

    kind = type(process_pool._zygote.proc).__name__
    expression = model()(col("x"))
    out = ketch.from_pydict({"x": list(range(6))}).select(expression.alias("y")).to_pydict()["y"]
    processes = len(descendants(os.getpid()))
    del expression
    return {"kind": kind, "values": [v // 1000 for v in out], "processes": processes}


@pytest.mark.parametrize(("setting", "kind"), [("", "ForkedProcess"), ("exec", "Popen")])
def test_a_udf_declared_while_its_module_is_imported_loads_whole_in_its_workers(
    run_isolated, tmp_path, setting, kind
):
    """The fork copies ``mypipeline.udfs`` half-imported (``helper`` is defined below the class):
    workers must import it whole from its file, and importing it there (which declares the UDF
    again) starts no zygote inside a worker."""
    package = tmp_path / "mypipeline"
    package.mkdir()
    (package / "__init__.py").write_text("from mypipeline import udfs  # noqa: F401\n")
    (package / "udfs.py").write_text(UDF_MODULE)
    out = run_isolated(udf_declared_while_its_module_imports_case, str(tmp_path), setting, timeout=120)
    assert out["kind"] == kind
    assert out["values"] == [v * 10 + 1 for v in range(6)]
    assert out["processes"] == 3  # the zygote and the UDF's two workers, nothing started inside them


def forked_zygote_dies_case() -> dict:
    from ketch.execution import process_pool, zygote_fork

    def die() -> None:  # runs in the forked copy, before it reports ready
        os._exit(3)

    zygote_fork._forget_modules_being_imported = die
    kind, zygote_pid, parents, _ = _zygote_kind_and_parents()
    return {
        "first_kind": kind,
        "kind_now": type(process_pool._zygote.proc).__name__,
        "can_fork": zygote_fork.engine_can_fork(),
        "parents": parents,
        "zygote_now": process_pool._zygote.proc.pid,
    }


def test_a_forked_zygote_that_dies_before_it_is_ready_gives_way_to_a_fresh_interpreter(run_isolated):
    out = run_isolated(forked_zygote_dies_case, timeout=120)
    assert out["first_kind"] == "ForkedProcess"
    assert out["kind_now"] == "Popen"
    assert out["can_fork"] is False  # for the rest of this process
    assert out["parents"] == [out["zygote_now"]] * 3
