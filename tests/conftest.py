"""Shared fixtures for the Ketch test suite."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import ketch


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
    moto_server = pytest.importorskip("moto.server")
    import boto3

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
    ray = pytest.importorskip("ray")
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


@pytest.fixture
def on_ray(ray_cluster: Any) -> Iterator[Any]:
    """Runs the test's queries on the Ray runner over the session's cluster; native again after."""
    import ketch
    from ketch.runners import get_runner

    ketch.set_runner_ray(address=ray_cluster.address)
    try:
        yield get_runner()
    finally:
        ketch.set_runner_native()


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


@pytest.fixture(scope="session")
def session_ray_runner(ray_cluster: Any) -> Any:
    """One Ray runner for the session's ``runner``-parametrized tests: its engine workers (one actor
    per node) start once, not per test."""
    from ketch.runners.ray.runner import RayRunner

    return RayRunner(address=ray_cluster.address)


@pytest.fixture(params=RUNNERS)
def runner(request: pytest.FixtureRequest) -> Iterator[str]:
    """The runner this test's queries run on: "native", or "ray" (the session's 3-node cluster,
    through ``session_ray_runner``); native again after."""
    import ketch.runners

    if request.param == "ray":
        import cloudpickle

        # The engine workers cannot import test modules (pytest puts their folders on sys.path
        # here only): UDFs and classes defined in the test module travel by value.
        if request.module.__name__ not in cloudpickle.list_registry_pickle_by_value():
            cloudpickle.register_pickle_by_value(request.module)
        ketch.runners._runner = request.getfixturevalue("session_ray_runner")
    else:
        ketch.set_runner_native()
    try:
        yield request.param
    finally:
        ketch.set_runner_native()
