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
# use and shared by every Ray test (tests/distributed).
RAY_NUM_NODES = 3


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": 256 << 20},
    )
    for _ in range(RAY_NUM_NODES - 1):
        cluster.add_node(num_cpus=1, object_store_memory=256 << 20)
    cluster.wait_for_nodes()
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
