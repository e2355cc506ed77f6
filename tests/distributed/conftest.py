"""One real local Ray cluster per test session (``ray.cluster_utils.Cluster``: a head and two more
nodes on this machine, 1 CPU each), started on first use and shared by every Ray test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

NUM_NODES = 3


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": 256 << 20},
    )
    for _ in range(NUM_NODES - 1):
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
