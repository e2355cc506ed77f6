"""The image-classification job of ``image_classification.py``, on Ray.

The same data (scikit-learn's 1,797 digits as 32x32 PNGs in one Parquet file), the same model (an
SVM on 16x16 grey pixels) and the same pipeline: read_parquet → image.decode(mode="RGB") →
image.resize(16, 16) → the stateful classifier (@ketch.cls, batched) → write_parquet. Here the
query runs on Ketch's Ray runner: one engine worker per Ray node runs the map stage's tasks (the
scan's tasks, cut for the expensive pipeline), each on the native executor, with the classifier's
instances inside the worker. The job prints the per-stage stats (tasks, rows, MB, tasks per node)
and checks the held-out accuracy (at least 0.90) and that every node ran tasks.

Run: ``.venv/bin/python examples/image_classification_ray.py`` starts a local 3-node Ray cluster
(``ray.cluster_utils.Cluster``, 1 CPU per node) for the job and shuts it down after;
``--address HOST:PORT`` joins an existing cluster instead (``ray start --head`` prints the address).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cloudpickle
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import image_classification as job  # noqa: E402  (the native job: data, model, classifier)
import ketch  # noqa: E402
from ketch import col  # noqa: E402

# The engine workers on the nodes cannot import this folder's modules: ship the classifier by value.
cloudpickle.register_pickle_by_value(job)


@contextmanager
def local_cluster(num_nodes: int) -> Iterator[str]:
    """A Ray cluster of ``num_nodes`` nodes on this machine (1 CPU each); yields its address."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": 256 << 20},
    )
    try:
        for _ in range(num_nodes - 1):
            cluster.add_node(num_cpus=1, object_store_memory=256 << 20)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        import ray

        ray.shutdown()
        cluster.shutdown()


def run(address: str, expect_nodes: int | None) -> int:
    import ray

    data = job.CACHE / "digits.parquet"
    model_path = job.CACHE / "digits_svm.pkl"
    if not data.exists():
        print(f"preparing {data} from scikit-learn's bundled digits ...")
        job.prepare_dataset(data)
    if not model_path.exists():
        print(f"training the classifier on the training split -> {model_path} ...")
        job.train_model(data, model_path)

    ray.init(address=address, log_to_driver=False)
    ketch.set_runner_ray(address=address)
    nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
    print(f"Ray cluster at {address}: {len(nodes)} nodes, {int(ray.cluster_resources().get('CPU', 0))} CPUs")

    df = ketch.read_parquet(str(data))
    df = df.with_column("image", col("bytes").image.decode(mode="RGB"))
    df = df.with_column("model_input", col("image").image.resize(job.MODEL_SIZE, job.MODEL_SIZE))
    df = df.with_column("prediction", job.DigitClassifier(str(model_path))(col("model_input")))
    df = df.exclude("bytes", "image", "model_input")

    print("\n=== Plan ===")
    df.explain(show_all=True)

    out_dir = job.CACHE / "predictions_ray"
    start = time.perf_counter()
    written = df.write_parquet(str(out_dir), write_mode="overwrite")
    elapsed = time.perf_counter() - start
    runner = ketch.runners.get_runner()
    print("\n=== Stages (write_parquet) ===")
    print(runner.stage_report())
    tasks_per_node: dict[str, int] = {}
    for stage in runner.last_stages:
        for node, n in stage.tasks_per_node.items():
            tasks_per_node[node] = tasks_per_node.get(node, 0) + n

    results = ketch.read_parquet(str(out_dir))
    total_rows = results.count_rows()
    held_out = results.where(col("split") == "test").select("label", "prediction").to_pydict()
    labels = np.array(held_out["label"])
    predictions = np.array(held_out["prediction"])
    accuracy = float((labels == predictions).mean())

    print("\n=== Result ===")
    print(f"wrote {written.to_pydict()['path']}")
    print(f"rows: {total_rows}, time: {elapsed:.3f} s, throughput: {total_rows / elapsed:,.0f} rows/s")
    print(f"held-out accuracy: {accuracy:.4f} on {len(labels)} test images")
    print(f"tasks per node: {len(tasks_per_node)} nodes ran tasks: " + str(sorted(tasks_per_node.values())))
    failed = False
    if total_rows != 1797:
        print(f"FAILED: {total_rows} rows written, want 1797", file=sys.stderr)
        failed = True
    if accuracy < 0.90:
        print("FAILED: accuracy below 0.90", file=sys.stderr)
        failed = True
    if expect_nodes is not None and len(tasks_per_node) != expect_nodes:
        print(f"FAILED: tasks ran on {len(tasks_per_node)} nodes, want all {expect_nodes}", file=sys.stderr)
        failed = True
    ketch.set_runner_native()
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--address", help="join this Ray cluster (host:port) instead of starting a local one")
    parser.add_argument("--nodes", type=int, default=3, help="nodes of the local cluster (default 3)")
    args = parser.parse_args()
    if args.address:
        return run(args.address, expect_nodes=None)
    with local_cluster(args.nodes) as address:
        return run(address, expect_nodes=args.nodes)


if __name__ == "__main__":
    sys.exit(main())
