"""Distributed: Ketch-on-Ray vs Daft-on-Ray (Flotilla) vs Ray Data on one local 3-node Ray cluster.

Queries (``<engine>_q<N>``, engines ``ketch``, ``daft``, ``raydata``):

- q1, image pipeline: decode 2,000 JPEGs (bench_image_pipeline's photos, 12 Parquet files) to RGB,
  resize to 224x224 (bilinear), collect on the driver; check: the mean pixel.
- q2, groupby with a shuffle: 10M fact rows (relational_data's distributions, 1M zipf keys, 12
  files) -> sum(qty), mean(value), count per key; check: the digest of the whole result.
- q3, join: the 10M-row fact table inner-joined with a 1M-row dimension table (3 files; too big to
  broadcast: both sides are hash-shuffled), collected on the driver; check: the digest of the
  joined rows (``checks.digest``, computed after the timed region).
- q4 and q5 (Ketch only), a latency-bound UDF: a class UDF (thread mode, concurrency 1) sleeping
  ``UDF_SLEEP_S`` per batch of ``UDF_BATCH`` rows (a remote model call: no CPU), over 12 files of
  4 batches each, run with the engine workers of 1, 2 and 3 nodes; reports rows/s per node count
  and the speedup. q4 with the default scan tasks (the planner's choice), q5 with one task per
  file (12 tasks: 4 per node).

The cluster (``session``): one ``ray.cluster_utils.Cluster`` started by the harness before the
first case and stopped after the last, a head and two more nodes, ``CPUS_PER_NODE`` logical CPUs
and ``OBJECT_STORE_MB`` of object store each. All three "nodes" are processes on this one machine
and share its cores (2 on the dev box): the numbers compare the engines' distributed execution
(planning, shuffles through Ray's object store, scheduling), not the scaling of real hardware;
q4 scales because it waits instead of computing. The driver and cluster Pythons must be the same
minor version: Ketch's venv starts the cluster (its workers run ``.venv/bin/python``), the peers'
drivers (Daft, Ray Data) ask for their own interpreter with ``runtime_env={"py_executable": ...}``.

Measured per case: seconds (best of ``--repeat``, engines warmed up in ``setup``: Ray joined and
the engine's per-node workers started, untimed); bytes shuffled (Ketch: the sum over the query's
stages of ``bytes_shuffled``, from ``get_runner().last_stages``; Daft: the bytes its repartition
operators emitted, from ``DataFrame.metrics`` when it reports them, else absent; Ray Data: not
exposed, absent); peak memory per node: the harness samples each node's raylet and its
descendants (the node's workers, Ray's agents; the head's GCS separately) like the case's own
tree (``trees`` in the JSON; the object store's shared memory counted once per node via Pss).

Sizes: ``KETCH_BENCH_ROWS`` (fact rows, 10M), ``KETCH_BENCH_DIM_ROWS`` (1M),
``KETCH_BENCH_IMAGES`` (2,000); ``KETCH_BENCH_RAY_CPUS_PER_NODE`` (1). Shuffles use
``SHUFFLE_PARTITIONS`` buckets in Daft's aggregations and Ray Data (Ketch: its default). Run:
``PYTHONPATH=$PWD/python .venv/bin/python benchmarks/run.py ray --repeat 1 --case-timeout 300``
(about 2 minutes of setup per case on a loaded 2-core box; smoke: ``KETCH_BENCH_ROWS=200000
KETCH_BENCH_DIM_ROWS=20000 KETCH_BENCH_IMAGES=240 ... --cases ketch``; a subset that still writes
its JSON: ``--cases REGEX --json benchmarks/results/ray.json``).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))
from relational_data import write_dim_files, write_fact_files  # noqa: E402

ROWS = int(os.environ.get("KETCH_BENCH_ROWS", 10_000_000))
DIM_ROWS = int(os.environ.get("KETCH_BENCH_DIM_ROWS", 1_000_000))
IMAGES = int(os.environ.get("KETCH_BENCH_IMAGES", 2000))
NODES = 3
CPUS_PER_NODE = int(os.environ.get("KETCH_BENCH_RAY_CPUS_PER_NODE", 1))
OBJECT_STORE_MB = 1024
FILES = 12  # fact, image and UDF input files: 4 scan tasks per node
DIM_FILES = 3
SHUFFLE_PARTITIONS = 8  # Ketch's default for 3 CPUs (max(8, 2 x CPUs)); set in Daft and Ray Data
SIZE = 224
UDF_SLEEP_S = 0.2
UDF_BATCH = 1000
UDF_BATCHES_PER_FILE = 4
ADDRESS_VAR = "KETCH_RAY_BENCH_ADDRESS"
DATA_NAME = f"ray_{ROWS}_{DIM_ROWS}_{IMAGES}"


# -- data ------------------------------------------------------------------------------------------
def _dir(data_dir: str, name: str) -> str:
    return os.path.join(data_dir, name)


def prepare(data_dir: str) -> None:
    import tempfile

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import bench_image_pipeline

    write_fact_files(_dir(data_dir, "fact"), ROWS, DIM_ROWS, FILES)
    write_dim_files(_dir(data_dir, "dim"), DIM_ROWS, DIM_FILES)
    with tempfile.TemporaryDirectory() as tmp:
        bench_image_pipeline.prepare(tmp)
        photos = pq.read_table(os.path.join(tmp, "images.parquet"))
    rows = np.arange(IMAGES) % photos.num_rows  # more images than the 2,000 photos: repeats
    images = pa.table({"id": pa.array(np.arange(IMAGES)), "bytes": photos.column("bytes").take(rows)})
    udf_rows = UDF_BATCH * UDF_BATCHES_PER_FILE
    os.makedirs(_dir(data_dir, "images"))
    os.makedirs(_dir(data_dir, "udf"))
    bounds = np.linspace(0, IMAGES, FILES + 1).astype(int)
    for i in range(FILES):
        name = f"part-{i:03d}.parquet"
        pq.write_table(
            images.slice(bounds[i], bounds[i + 1] - bounds[i]), _dir(_dir(data_dir, "images"), name)
        )
        x = pa.array(np.arange(i * udf_rows, (i + 1) * udf_rows))
        pq.write_table(pa.table({"x": x}), _dir(_dir(data_dir, "udf"), name))


# -- the cluster -----------------------------------------------------------------------------------
@contextlib.contextmanager
def session(data_dir: str) -> Iterator[dict[str, Any]]:
    """Starts the 3-node cluster in the harness (stopped on exit); yields its address for the cases
    and the root pids of each node's process tree for the memory sampler."""
    with local_cluster(NODES, CPUS_PER_NODE, OBJECT_STORE_MB) as context:
        yield context


@contextlib.contextmanager
def local_cluster(nodes: int, cpus_per_node: float, object_store_mb: int) -> Iterator[dict[str, Any]]:
    """A ``ray.cluster_utils.Cluster`` of ``nodes`` nodes (the head included) with ``cpus_per_node``
    logical CPUs and ``object_store_mb`` MB of object store each, stopped on exit. Yields the
    harness's session dict: ``env`` (the address in ``ADDRESS_VAR``), ``trees`` (``node<i>``: the
    raylet pid of node i, the root of that node's workers and actors; ``head_gcs``) and ``info``."""
    from ray._private import ray_constants
    from ray.cluster_utils import Cluster

    store = object_store_mb << 20
    started = time.perf_counter()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": cpus_per_node, "include_dashboard": False, "object_store_memory": store},
    )
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=cpus_per_node, object_store_memory=store)
        cluster.wait_for_nodes()
        members = [cluster.head_node, *sorted(cluster.worker_nodes, key=lambda n: n.unique_id)]

        def pid(node: Any, kind: str) -> int:
            return node.all_processes[kind][0].process.pid

        trees = {f"node{i}": pid(node, ray_constants.PROCESS_TYPE_RAYLET) for i, node in enumerate(members)}
        trees["head_gcs"] = pid(cluster.head_node, ray_constants.PROCESS_TYPE_GCS_SERVER)
        info = {
            "nodes": nodes,
            "cpus_per_node": cpus_per_node,
            "object_store_mb_per_node": object_store_mb,
            "node_ids": {f"node{i}": node.node_id for i, node in enumerate(members)},
            "machine_cores": os.cpu_count(),
            "cluster_start_s": time.perf_counter() - started,
            "note": (
                f"ray.cluster_utils.Cluster: the {nodes} nodes are processes on one machine sharing its "
                f"{os.cpu_count()} cores; Ketch's venv started it, the peers' drivers run their own "
                "Python on it via runtime_env py_executable (same Python minor version)"
            ),
        }
        yield {"env": {ADDRESS_VAR: cluster.address}, "trees": trees, "info": info}
    finally:
        cluster.shutdown()


def _address() -> str:
    return os.environ[ADDRESS_VAR]


def setup(engine: str) -> None:
    """Joins the cluster and starts the engine's workers on every node (untimed)."""
    if engine.startswith("ketch"):
        import ketch
        from ketch import col
        from ketch.runners import get_runner

        ketch.set_runner_ray(address=_address())
        get_runner().workers()
        ketch.from_pydict({"a": list(range(10))}).where(col("a") > 3).to_arrow()
        return
    import ray

    ray.init(address=_address(), runtime_env={"py_executable": sys.executable}, log_to_driver=False)
    if engine.startswith("daft"):
        import daft

        daft.set_runner_ray(address=_address(), noop_if_initialized=True)
        daft.from_pydict({"a": list(range(4 * NODES))}).into_partitions(2 * NODES).collect()
    else:
        import ray.data

        ray.data.range(4 * NODES, override_num_blocks=2 * NODES).map_batches(lambda b: b).materialize()


# -- helpers ---------------------------------------------------------------------------------------
def _ketch_stats(out: dict) -> dict:
    from ketch.runners import get_runner

    runner = get_runner()
    stages = runner.last_stages
    shuffled = sum(s.bytes_shuffled for s in stages)
    out["bytes_shuffled"] = shuffled
    out["tasks_per_node"] = dict(runner.last_tasks_per_node)
    out["stages"] = runner.stage_report().splitlines()
    out["metric"] = f"shuffled {shuffled / 1e6:.1f} MB"
    return out


def _daft_stats(df: Any, out: dict) -> dict:
    """Adds Daft's per-operator metrics (``DataFrame.metrics`` after ``collect``: rows, bytes,
    tasks per operator) and, as bytes shuffled, the bytes into its Repartition operators."""
    metrics = df.metrics
    if metrics is None:
        return out
    operators = [
        {"name": r["name"], "type": r["type"], **{k: v["value"] for k, v in (r["stats"] or [])}}
        for r in metrics.to_pylist()
    ]
    shuffled = sum(int(op.get("bytes.in", 0)) for op in operators if op["type"] == "Repartition")
    out["daft_operators"] = operators
    out["bytes_shuffled"] = shuffled
    out["metric"] = f"shuffled {shuffled / 1e6:.1f} MB"
    return out


# -- q1: image pipeline ----------------------------------------------------------------------------
def run_ketch_q1(d: str) -> dict:
    import ketch
    from ketch import DataType, col

    # The cast to Arrow's canonical fixed_shape_tensor is a workaround: a table with Ketch's image
    # type fails to unpickle on the driver ("No type alias for fixedshapeimage[rgb; 224 x 224]").
    tensor = DataType.tensor(DataType.uint8(), (SIZE, SIZE, 3))
    df = ketch.read_parquet(_dir(d, "images"))
    df = df.select(col("bytes").image.decode(mode="RGB").image.resize(SIZE, SIZE).cast(tensor).alias("img"))
    pixels = df.to_arrow().column("img").combine_chunks().to_numpy_ndarray()
    return _ketch_stats({"rows": len(pixels), "check": float(pixels.mean())})


def run_daft_q1(d: str) -> dict:
    import daft
    import numpy as np
    from daft import col

    df = daft.read_parquet(_dir(d, "images"))
    df = df.select(col("bytes").decode_image(mode="RGB").resize(SIZE, SIZE).alias("img")).collect()
    # One vectorised conversion from Arrow (FixedShapeImage storage: a fixed-size list), as Ketch's.
    column = df.to_arrow().column("img").combine_chunks()
    pixels = np.asarray(column.storage.flatten()).reshape(len(column), SIZE, SIZE, 3)
    out = {"rows": len(pixels), "check": float(pixels.mean())}
    return _daft_stats(df, out)


def _decode_resize(batch: dict) -> dict:
    import numpy as np
    from PIL import Image

    images = [
        np.asarray(Image.open(io.BytesIO(b)).convert("RGB").resize((SIZE, SIZE), Image.BILINEAR))
        for b in batch["bytes"]
    ]
    return {"id": batch["id"], "img": np.stack(images)}


def run_raydata_q1(d: str) -> dict:
    import numpy as np
    import ray.data

    ds = ray.data.read_parquet(_dir(d, "images")).map_batches(_decode_resize, batch_format="numpy")
    rows, total = 0, 0.0
    for batch in ds.iter_batches(batch_format="numpy", batch_size=None):
        rows += len(batch["img"])
        total += float(batch["img"].sum(dtype=np.float64))
    return {"rows": rows, "check": total / max(1, rows * SIZE * SIZE * 3)}


# -- q2: groupby -----------------------------------------------------------------------------------
def run_ketch_q2(d: str) -> dict:
    import ketch
    from ketch import col

    t = (
        ketch.read_parquet(_dir(d, "fact"))
        .groupby("key")
        .agg(
            col("qty").sum().alias("qty"), col("value").mean().alias("mean"), col("value").count().alias("n")
        )
        .to_arrow()
    )
    return _ketch_stats({"rows": t.num_rows, "result": t})


def run_daft_q2(d: str) -> dict:
    import daft
    from daft import col

    daft.set_execution_config(shuffle_aggregation_default_partitions=SHUFFLE_PARTITIONS)
    df = (
        daft.read_parquet(_dir(d, "fact"))
        .groupby("key")
        .agg(
            col("qty").sum().alias("qty"), col("value").mean().alias("mean"), col("value").count().alias("n")
        )
        .collect()
    )
    t = df.to_arrow()
    return _daft_stats(df, {"rows": t.num_rows, "result": t})


def run_raydata_q2(d: str) -> dict:
    import pyarrow as pa
    import ray
    import ray.data
    from ray.data.aggregate import Count, Mean, Sum

    ds = (
        ray.data.read_parquet(_dir(d, "fact"))
        .groupby("key", num_partitions=SHUFFLE_PARTITIONS)
        .aggregate(Sum("qty"), Mean("value"), Count())
    )
    t = pa.concat_tables(ray.get(ds.to_arrow_refs()))
    return {"rows": t.num_rows, "result": t.select(["key", "sum(qty)", "mean(value)", "count()"])}


# -- q3: join --------------------------------------------------------------------------------------
JOIN_COLUMNS = ["key", "value", "qty", "name", "weight"]


def _join_check(t: Any) -> dict:
    """The joined rows, digested after the timed region (``checks.digest``; engines order the
    columns differently)."""
    return {"result": t, "result_columns": JOIN_COLUMNS}


def run_ketch_q3(d: str) -> dict:
    import ketch

    t = ketch.read_parquet(_dir(d, "fact")).join(ketch.read_parquet(_dir(d, "dim")), on="key").to_arrow()
    return _ketch_stats({"rows": t.num_rows, **_join_check(t)})


def run_daft_q3(d: str) -> dict:
    import daft

    daft.set_execution_config(shuffle_aggregation_default_partitions=SHUFFLE_PARTITIONS)
    df = daft.read_parquet(_dir(d, "fact")).join(daft.read_parquet(_dir(d, "dim")), on="key").collect()
    t = df.to_arrow()
    return _daft_stats(df, {"rows": t.num_rows, **_join_check(t)})


def run_raydata_q3(d: str) -> dict:
    import pyarrow as pa
    import ray
    import ray.data

    fact = ray.data.read_parquet(_dir(d, "fact"))
    dim = ray.data.read_parquet(_dir(d, "dim"))
    ds = fact.join(dim, join_type="inner", num_partitions=SHUFFLE_PARTITIONS, on=("key",))
    t = pa.concat_tables(ray.get(ds.to_arrow_refs()))
    return {"rows": t.num_rows, **_join_check(t)}


# -- q4: latency-bound UDF, 1 -> 3 nodes -----------------------------------------------------------
def _udf_scaling(d: str, **config: int) -> dict:
    """The UDF query with the engine workers of the first k nodes (k = 1, 2, 3; ``config``: Ketch
    execution config fields): the runner keeps its workers in ``_workers`` (one per node), cut
    to k here; the cluster stays the same."""
    import ketch
    from ketch import col
    from ketch.runners import get_runner

    @ketch.cls(return_dtype=ketch.DataType.int64(), batch_size=UDF_BATCH, concurrency=1, use_process=False)
    class RemoteModel:
        def __call__(self, x: Any) -> Any:
            time.sleep(UDF_SLEEP_S)  # the remote call: waiting, no CPU
            return x.to_arrow()

    runner = get_runner()
    slots = list(runner.workers())
    scaling: dict[str, dict] = {}
    rows = check = 0
    try:
        with ketch.execution_config_ctx(**config):
            for k in range(1, NODES + 1):
                runner._workers = slots[:k]
                started = time.perf_counter()
                t = ketch.read_parquet(_dir(d, "udf")).select(RemoteModel()(col("x")).alias("y")).to_arrow()
                seconds = time.perf_counter() - started
                rows, check = t.num_rows, float(t.column("y").to_numpy().sum())
                scaling[str(k)] = {
                    "seconds": seconds,
                    "rows_per_s": rows / seconds,
                    "tasks": sum(runner.last_tasks_per_node.values()),
                    "tasks_per_node": dict(runner.last_tasks_per_node),
                }
    finally:
        runner._workers = slots
    speedup = scaling["1"]["seconds"] / scaling[str(NODES)]["seconds"]
    return {
        "rows": rows,
        "check": check,
        "scaling": scaling,
        "ideal_seconds_1_node": FILES * UDF_BATCHES_PER_FILE * UDF_SLEEP_S,
        "speedup_3_vs_1": speedup,
        "metric": "rows/s by nodes: "
        + ", ".join(f"{k}: {v['rows_per_s']:.0f} ({v['tasks']} tasks)" for k, v in scaling.items())
        + f"; 3 vs 1: {speedup:.2f}x",
    }


def run_ketch_q4(d: str) -> dict:
    """Default scan tasks: the planner cuts the input for the expensive UDF into 2 tasks per
    compute thread of the driver's machine."""
    return _udf_scaling(d)


def run_ketch_q5(d: str) -> dict:
    """One scan task per file (``max_sources_per_scan_task=1``): 12 tasks, 4 per node."""
    return _udf_scaling(d, max_sources_per_scan_task=1)


def check_rtol(engine: str) -> float:
    """q1's check is the mean pixel: Daft decodes JPEG with the Rust image crate (about 0.09 %
    above libjpeg-turbo, see ``bench_image_pipeline.check_rtol``): 2e-3; Ray Data's Pillow and
    Ketch agree within 1e-6. The other queries: ``checks.FLOAT_RTOL``."""
    if engine == "daft_q1":
        return 2e-3
    return 1e-6 if engine.endswith("_q1") else 1e-9
