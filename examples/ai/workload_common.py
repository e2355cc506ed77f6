"""What the four AI workload examples share: their command line (``--size small|medium``,
``--ray``, ``--data``, ``--out``), the runner (native, or a local 3-node Ray cluster started for
the run), and the report (rows, checksum, seconds)."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CACHE = HERE.parents[1] / ".cache" / "ai_workloads"
WORKLOADS = ("image_classification", "audio_transcription", "document_embedding", "video_object_detection")


def arguments(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--size", choices=["small", "medium"], default="small")
    parser.add_argument("--small", action="store_const", const="small", dest="size", help="= --size small")
    parser.add_argument("--ray", action="store_true", help="run on a local 3-node Ray cluster")
    parser.add_argument("--data", default=str(CACHE), help="where inputs and the tiny models are kept")
    parser.add_argument("--out", default=None, help="output folder (default: a fresh one under --data)")
    return parser.parse_args()


@contextmanager
def runner(on_ray: bool, nodes: int = 3) -> Iterator[None]:
    """Native, or Ray on a local cluster of `nodes` nodes (1 CPU each) for the duration."""
    import ketch

    if not on_ray:
        ketch.set_runner_native()
        yield
        return
    import cloudpickle
    import ray
    from ray.cluster_utils import Cluster

    # The engine workers cannot import the examples' folder: their UDF classes travel by value.
    for name in (*WORKLOADS, "workload_models"):
        if name in sys.modules:
            cloudpickle.register_pickle_by_value(sys.modules[name])
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": 256 << 20},
    )
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1, object_store_memory=256 << 20)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        ketch.set_runner_ray(address=cluster.address)
        yield
    finally:
        ketch.set_runner_native()
        ray.shutdown()
        cluster.shutdown()


def main(
    name: str, prepare: Callable[[Path, str], dict[str, Any]], run: Callable[..., dict[str, Any]]
) -> None:
    """Prepares the inputs (cached), runs the workload on the chosen runner, prints the report."""
    args = arguments(f"The {name} workload")
    data = Path(args.data)
    inputs = prepare(data, args.size)
    out = Path(args.out) if args.out else data / "out" / f"{name}_{args.size}{'_ray' if args.ray else ''}"
    if out.exists():
        shutil.rmtree(out)
    with runner(args.ray):
        start = time.perf_counter()
        result = run(**inputs, out=str(out))
        seconds = time.perf_counter() - start
    print(f"{name} ({args.size}, {'ray' if args.ray else 'native'}): {result['rows']} rows, "
          f"check {result['check']:.6g}, {seconds:.2f} s -> {out}")  # fmt: skip
