"""Actor-pool UDFs: Ketch-on-Ray vs Daft-on-Ray (Flotilla) vs Ray Data on one local 3-node Ray cluster.

Queries (``<engine>_q<N>``, engines ``ketch``, ``daft``, ``raydata``):

- q1, image_classify_actors: the seeds' image-classification job (``examples/image_classification.py``:
  scikit-learn's 1,797 digits as 32x32 PNGs, repeated to ``IMAGES`` rows, ``FILES`` Parquet files)
  → decode (RGB) → resize to 16x16 (bilinear) → classify with a class UDF run as a pool of
  ``ACTORS`` Ray actors (``cpus=ACTOR_CPUS`` each, ``IMAGE_BATCH`` rows a batch) → the predicted
  labels, collected on the driver. Ketch: ``@ketch.cls(concurrency=4, cpus=0.5)`` (its actor pool);
  Daft: ``@daft.cls(max_concurrency=4, cpus=0.5)`` with a ``@daft.method.batch`` (Flotilla's
  UDF actors); Ray Data: ``map_batches`` of a Pillow decode+resize function (tasks) then
  ``map_batches(Classifier, concurrency=4, num_cpus=0.5)`` (an actor pool). The model, the same
  numpy code on every engine (``_Model``): grey 16x16 pixels → a fixed random ReLU layer of
  ``HIDDEN`` units → a linear read-out trained by ridge regression on the training split in
  ``prepare`` (weights in ``model.npz``). Check: the accuracy against the true labels (every engine
  must give the same predictions; about 0.97).
- q2, slow_chain: ``CHAIN_BATCHES`` batches of ``CHAIN_BATCH`` rows through a fast UDF (1 actor:
  ``x + 1``) then a slow one (``ACTORS`` actors, ``CHAIN_SLEEP_S`` of sleep per batch: a remote
  model, no CPU), same resources per actor. Ideal: ``CHAIN_BATCHES * CHAIN_SLEEP_S / ACTORS``
  seconds (the slow work spread over all its actors). The slow UDF returns, per row, its actor id
  and the batch's start and end times: the case reports the distinct slow actors that did work
  (``slow_actors``: must be 4), the batches per actor, the most batches running at once
  (``peak_busy``: 4 when the stage keeps every actor busy), ``slow_busy_fraction`` (the slow
  actors' busy seconds / (4 x the span from the first slow batch's start to the last one's end):
  1.0 when all 4 sleep all the time), ``before_first_slow_batch_s`` (from submitting the query
  to the first slow batch: mostly starting the actors) and ``efficiency`` (ideal / seconds).
  Check: the sum of ``x + 1`` over the rows.

- q3, second_query: q1's classification run twice in one session, as a notebook does (the same
  UDF class and arguments); ``second_query_s`` is the second run's seconds. Ketch keeps the
  first query's actor pool warm (``actor_udf_idle_timeout``) and the second query takes it over
  without starting actors or running ``__init__``; Daft and Ray Data start their pools again per
  query. Check: the second run's accuracy (equal to q1's).

The cluster (``session``): ``bench_ray.local_cluster``, 3 nodes of ``CPUS_PER_NODE`` (2) logical
CPUs and ``OBJECT_STORE_MB`` each: 6 CPUs, so the 4 actors of 0.5 CPU (and q2's fast actor) fit
next to each engine's per-node workers and tasks; the same cluster, resources and actor sizes for
every engine. Ketch's and Daft's engine workers reserve no CPUs (``num_cpus=0`` actors); Ray
Data's decode tasks take 1 CPU each. All times include starting the query's actors (each engine
starts its pools per query); ``setup`` (untimed) joins Ray and starts the engine's workers.
Ray Data runs in Ketch's venv (``KETCH_VENV_ENGINES``: Ray and Ray Data 2.60.0, as in the peers'
venv; pyarrow 26 there, 25 in the peers'): from the peers' venv its driver must ask for its own
Python (``runtime_env={"py_executable": ...}``, as bench_ray does) and on this loaded box the
raylets then started its workers so slowly ("Starting too many worker processes for a single
type of task ... throttled", 16 idle workers per node) that the actors waited 100-275 s and q1
hit the case timeout. Daft must keep that path (Ketch's venv has no Daft): its actors wait for
fresh worker processes of the peers' Python (``before_first_slow_batch_s`` shows it in q2).
Ray Data's Parquet reader (ReadFilesParquetV2) merges the 12 small files into one block, and one
block feeds one actor at a time (``override_num_blocks`` is not honoured there): its queries
``repartition`` the input to one block per batch first (a cheap all-to-all over a few MB).

Memory: as in bench_ray, the harness samples each node's raylet and its descendants (that node's
engine workers, UDF actors and Ray Data tasks: the Pss sum, shared object-store pages counted once)
every 0.1 s: ``trees.node<i>.peak_mb`` in the JSON is a node's peak, ``peak_above_start_mb`` that
less its value after ``setup``; the driver's own tree is ``peak_rss_mb``. All three nodes are
processes on this one machine sharing its cores: the numbers compare the engines' scheduling of
actor pools, not real hardware.

Sizes (``KETCH_BENCH_SIZE``, the harness's ``--size``): ``small`` (1,797 images, 40 chain batches:
about 2 minutes for all 6 cases on a loaded 2-core box) and ``medium`` (the default: 17,970 images,
80 chain batches). Run: ``PYTHONPATH=$PWD/python .venv/bin/python benchmarks/run.py ray_actors
--repeat 1 --case-timeout 300 [--size small]`` (JSON: ``benchmarks/results/ray_actors_<size>.json``
with ``--size``, else ``ray_actors.json``).
"""

from __future__ import annotations

import io
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))
import bench_ray  # noqa: E402

SIZES = {
    "small": {"images": 1797, "chain_batches": 40},
    "medium": {"images": 17970, "chain_batches": 80},
}
SIZE_NAME = os.environ.get("KETCH_BENCH_SIZE", "medium")
if SIZE_NAME not in SIZES:
    raise ValueError(f"KETCH_BENCH_SIZE={SIZE_NAME!r}: want one of {sorted(SIZES)}")
IMAGES = SIZES[SIZE_NAME]["images"]
CHAIN_BATCHES = SIZES[SIZE_NAME]["chain_batches"]
NODES = 3
CPUS_PER_NODE = 2
OBJECT_STORE_MB = 512
FILES = 12  # image and chain input files: 4 scan tasks per node
ACTORS = 4
ACTOR_CPUS = 0.5
MODEL_SIZE = 16  # the classifier's input: 16x16 pixels (the seeds' job)
HIDDEN = 2048
IMAGE_BATCH = 128
CHAIN_BATCH = 25
CHAIN_SLEEP_S = 0.2
DATA_NAME = f"ray_actors_{SIZE_NAME}"
# Ray Data runs in Ketch's venv (the same Ray 2.60.0 as the peers' venv): see the module doc.
KETCH_VENV_ENGINES = ("raydata",)


def setup(engine: str) -> None:
    """Joins the cluster and starts the engine's workers (untimed): bench_ray.setup, except for
    Ray Data, which runs on the cluster's own Python (no ``py_executable`` runtime env)."""
    if not engine.startswith("raydata"):
        bench_ray.setup(engine)
        return
    import ray
    import ray.data

    ray.init(address=os.environ[bench_ray.ADDRESS_VAR], log_to_driver=False)
    ray.data.range(4 * NODES, override_num_blocks=2 * NODES).map_batches(lambda b: b).materialize()


def _dir(data_dir: str, name: str) -> str:
    return os.path.join(data_dir, name)


# -- data and model --------------------------------------------------------------------------------
def prepare(data_dir: str) -> None:
    """Writes ``images/`` (id, label, bytes: the digits' PNGs repeated to ``IMAGES`` rows),
    ``chain/`` (x: 0 .. CHAIN_BATCHES * CHAIN_BATCH - 1) and ``model.npz`` (the trained weights)."""
    import tempfile

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
    import image_classification as job  # the seeds' job: its dataset

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "digits.parquet")
        job.prepare_dataset(job.Path(path))
        digits = pq.read_table(path)
    train = np.array(digits.column("split").to_pylist()) == "train"
    features = np.stack([job.pillow_features(b) for b in digits.column("bytes").to_pylist()])
    _train_model(features[train], digits.column("label").to_numpy()[train], _dir(data_dir, "model.npz"))

    rows = np.arange(IMAGES) % digits.num_rows
    images = pa.table(
        {
            "id": pa.array(np.arange(IMAGES)),
            "label": digits.column("label").take(rows),
            "bytes": digits.column("bytes").take(rows),
        }
    )
    chain_rows = CHAIN_BATCHES * CHAIN_BATCH
    chain = pa.table({"x": pa.array(np.arange(chain_rows, dtype=np.int64))})
    os.makedirs(_dir(data_dir, "images"))
    os.makedirs(_dir(data_dir, "chain"))
    image_bounds = np.linspace(0, IMAGES, FILES + 1).astype(int)
    chain_bounds = np.linspace(0, CHAIN_BATCHES, FILES + 1).astype(int) * CHAIN_BATCH  # whole batches
    for i in range(FILES):
        name = f"part-{i:03d}.parquet"
        lo, hi = image_bounds[i], image_bounds[i + 1]
        pq.write_table(images.slice(lo, hi - lo), _dir(_dir(data_dir, "images"), name))
        lo, hi = chain_bounds[i], chain_bounds[i + 1]
        pq.write_table(chain.slice(lo, hi - lo), _dir(_dir(data_dir, "chain"), name))


def _hidden(features: Any, w1: Any, b1: Any) -> Any:
    import numpy as np

    return np.maximum(features @ w1 + b1, 0.0)


def _train_model(features: Any, labels: Any, path: str) -> None:
    """A fixed random ReLU layer (seeded) and a ridge-regression read-out to one-hot labels."""
    import numpy as np

    rng = np.random.default_rng(0)
    w1 = rng.normal(0.0, 1.0 / np.sqrt(features.shape[1]), (features.shape[1], HIDDEN)).astype(np.float32)
    b1 = rng.normal(0.0, 0.5, HIDDEN).astype(np.float32)
    h = _hidden(features.astype(np.float32), w1, b1).astype(np.float64)
    targets = np.eye(10)[labels]
    w2 = np.linalg.solve(h.T @ h + 1e-1 * np.eye(HIDDEN), h.T @ targets).astype(np.float32)
    np.savez(path, w1=w1, b1=b1, w2=w2)


class _Model:
    """The classifier every engine runs: ``predict(pixels)`` with pixels (N, 16, 16, 3) uint8 RGB →
    (N,) int64 digit labels (grey as Pillow's RGB → L, scaled to [0, 1], then the two layers)."""

    def __init__(self, path: str) -> None:
        import numpy as np

        with np.load(path) as weights:
            self.w1, self.b1, self.w2 = weights["w1"], weights["b1"], weights["w2"]

    def predict(self, pixels: Any) -> Any:
        import numpy as np

        rgb = pixels.astype(np.int64)
        grey = (rgb[..., 0] * 19595 + rgb[..., 1] * 38470 + rgb[..., 2] * 7471 + 0x8000) >> 16
        features = (grey.reshape(len(pixels), -1) / 255.0).astype(np.float32)
        return (_hidden(features, self.w1, self.b1) @ self.w2).argmax(axis=1).astype(np.int64)


def _accuracy(labels: Any, predictions: Any) -> dict:
    import numpy as np

    labels, predictions = np.asarray(labels), np.asarray(predictions)
    return {"rows": len(predictions), "check": float((labels == predictions).mean())}


# -- q2's bookkeeping ------------------------------------------------------------------------------
def _slow_work(values: list[int]) -> list[str]:
    """The slow stage's body: sleeps ``CHAIN_SLEEP_S``, returns per row "actor-id start end x"."""
    import ray

    start = time.time()
    time.sleep(CHAIN_SLEEP_S)
    actor = ray.get_runtime_context().get_actor_id() or f"pid-{os.getpid()}"
    return [f"{actor} {start:.6f} {time.time():.6f} {v}" for v in values]


def _chain_stats(tags: list[str]) -> dict:
    """The slow stage's report from its output rows: distinct actors, batches per actor, the most
    batches running at once, seconds vs the ideal."""
    batches: dict[tuple[str, str], tuple[float, float]] = {}
    total = 0
    for tag in tags:
        actor, start, end, x = tag.split()
        batches[(actor, start)] = (float(start), float(end))
        total += int(x)
    per_actor: dict[str, int] = {}
    for actor, _ in batches:
        per_actor[actor] = per_actor.get(actor, 0) + 1
    events = sorted([(s, 1) for s, _ in batches.values()] + [(e, -1) for _, e in batches.values()])
    busy = peak = 0
    for _, step in events:  # an end sorts before a start at the same instant
        busy += step
        peak = max(peak, busy)
    ideal = CHAIN_BATCHES * CHAIN_SLEEP_S / ACTORS
    first = min(s for s, _ in batches.values())
    span = max(e for _, e in batches.values()) - first
    busy_s = sum(e - s for s, e in batches.values())
    return {
        "first_slow_start": first,
        "slow_span_s": span,
        "slow_busy_fraction": busy_s / (ACTORS * span),
        "rows": len(tags),
        "check": float(total),
        "slow_batches": len(batches),
        "slow_actors": len(per_actor),
        "batches_per_actor": sorted(per_actor.values(), reverse=True),
        "peak_busy": peak,
        "ideal_seconds": ideal,
        "metric": (
            f"{len(per_actor)} slow actors did work, batches per actor "
            f"{sorted(per_actor.values(), reverse=True)}, at most {peak} busy at once, "
            f"{busy_s / (ACTORS * span):.0%} busy from the first slow batch to the last ({span:.1f} s); "
            f"ideal {ideal:.1f} s"
        ),
    }


def _finish_chain(out: dict, started: float) -> dict:
    """Adds the efficiency (ideal / seconds of the query) and the seconds before the first slow
    batch started (``started``: ``time.time()`` when the query was submitted; mostly starting the
    actors) to the metric."""
    seconds = time.time() - started
    out["efficiency"] = out["ideal_seconds"] / seconds
    out["before_first_slow_batch_s"] = out.pop("first_slow_start") - started
    first = out["before_first_slow_batch_s"]
    out["metric"] += f", efficiency {out['efficiency']:.2f}; first slow batch after {first:.1f} s"
    return out


# -- Ketch -----------------------------------------------------------------------------------------
def _ketch_stats(out: dict) -> dict:
    from ketch.runners import get_runner

    runner = get_runner()
    out["tasks_per_node"] = dict(runner.last_tasks_per_node)
    out["stages"] = runner.stage_report().splitlines()
    return out


def _ketch_classify(d: str) -> Any:
    """q1's query as a function of no arguments (one UDF class for every call of it)."""
    import ketch
    from ketch import col

    @ketch.cls(
        return_dtype=ketch.DataType.int64(), batch_size=IMAGE_BATCH, concurrency=ACTORS, cpus=ACTOR_CPUS
    )
    class Classifier:
        def __init__(self, path: str) -> None:
            self.model = _Model(path)

        def __call__(self, images: Any) -> Any:
            return self.model.predict(images.to_numpy())

    def query() -> dict:
        df = ketch.read_parquet(_dir(d, "images"))
        pixels = col("bytes").image.decode(mode="RGB").image.resize(MODEL_SIZE, MODEL_SIZE)
        df = df.select("label", Classifier(_dir(d, "model.npz"))(pixels).alias("prediction"))
        t = df.to_arrow()
        return _accuracy(t.column("label").to_numpy(), t.column("prediction").to_numpy())

    return query


def _second_query(query: Any) -> dict:
    """``query()`` twice; the second run's result with its seconds (``second_query_s``)."""
    query()
    start = time.perf_counter()
    out = query()
    out["second_query_s"] = time.perf_counter() - start
    out["metric"] = f"second query {out['second_query_s']:.2f} s"
    return out


def run_ketch_q1(d: str) -> dict:
    return _ketch_stats(_ketch_classify(d)())


def run_ketch_q3(d: str) -> dict:
    return _ketch_stats(_second_query(_ketch_classify(d)))


def run_ketch_q2(d: str) -> dict:
    import ketch
    from ketch import col

    @ketch.cls(return_dtype=ketch.DataType.int64(), batch_size=CHAIN_BATCH, concurrency=1, cpus=ACTOR_CPUS)
    class Fast:
        def __call__(self, x: Any) -> Any:
            return x.to_numpy() + 1

    @ketch.cls(
        return_dtype=ketch.DataType.string(), batch_size=CHAIN_BATCH, concurrency=ACTORS, cpus=ACTOR_CPUS
    )
    class Slow:
        def __call__(self, x: Any) -> Any:
            return _slow_work(x.to_pylist())

    started = time.time()
    df = ketch.read_parquet(_dir(d, "chain")).select(Slow()(Fast()(col("x"))).alias("tag"))
    tags = df.to_arrow().column("tag").to_pylist()
    return _ketch_stats(_finish_chain(_chain_stats(tags), started))


# -- Daft ------------------------------------------------------------------------------------------
def _daft_classify(d: str) -> Any:
    import daft
    import numpy as np
    from daft import DataType, col

    @daft.cls(max_concurrency=ACTORS, cpus=ACTOR_CPUS)
    class Classifier:
        def __init__(self, path: str) -> None:
            self.model = _Model(path)

        @daft.method.batch(return_dtype=DataType.int64(), batch_size=IMAGE_BATCH)
        def __call__(self, images: Any) -> Any:
            return self.model.predict(np.stack(images.to_pylist()))

    def query() -> dict:
        df = daft.read_parquet(_dir(d, "images"))
        pixels = col("bytes").decode_image(mode="RGB").resize(MODEL_SIZE, MODEL_SIZE)
        df = df.select("label", Classifier(_dir(d, "model.npz"))(pixels).alias("prediction")).collect()
        out = df.to_pydict()
        return _accuracy(out["label"], out["prediction"])

    return query


def run_daft_q1(d: str) -> dict:
    return _daft_classify(d)()


def run_daft_q3(d: str) -> dict:
    return _second_query(_daft_classify(d))


def run_daft_q2(d: str) -> dict:
    import daft
    from daft import DataType, col

    @daft.cls(max_concurrency=1, cpus=ACTOR_CPUS)
    class Fast:
        @daft.method.batch(return_dtype=DataType.int64(), batch_size=CHAIN_BATCH)
        def __call__(self, x: Any) -> Any:
            return x.to_arrow().to_numpy(zero_copy_only=False) + 1

    @daft.cls(max_concurrency=ACTORS, cpus=ACTOR_CPUS)
    class Slow:
        @daft.method.batch(return_dtype=DataType.string(), batch_size=CHAIN_BATCH)
        def __call__(self, x: Any) -> Any:
            return _slow_work(x.to_pylist())

    started = time.time()
    df = daft.read_parquet(_dir(d, "chain")).select(Slow()(Fast()(col("x"))).alias("tag")).collect()
    return _finish_chain(_chain_stats(df.to_pydict()["tag"]), started)


# -- Ray Data --------------------------------------------------------------------------------------
def _decode_resize(batch: dict) -> dict:
    import numpy as np
    from PIL import Image

    images = [
        np.asarray(Image.open(io.BytesIO(b)).convert("RGB").resize((MODEL_SIZE, MODEL_SIZE), Image.BILINEAR))
        for b in batch["bytes"]
    ]
    return {"label": batch["label"], "pixels": np.stack(images)}


class _RayClassifier:
    def __init__(self, path: str) -> None:
        self.model = _Model(path)

    def __call__(self, batch: dict) -> dict:
        return {"label": batch["label"], "prediction": self.model.predict(batch["pixels"])}


class _RayFast:
    def __call__(self, batch: dict) -> dict:
        return {"x": batch["x"] + 1}


class _RaySlow:
    def __call__(self, batch: dict) -> dict:
        import numpy as np

        return {"tag": np.array(_slow_work([int(v) for v in batch["x"]]), dtype=object)}


def _raydata_classify(d: str) -> dict:
    import numpy as np
    import ray.data

    ds = (
        ray.data.read_parquet(_dir(d, "images"))
        .repartition(-(-IMAGES // IMAGE_BATCH))  # one block a batch: see the module doc
        .map_batches(_decode_resize, batch_format="numpy")
        .map_batches(
            _RayClassifier,
            fn_constructor_args=(_dir(d, "model.npz"),),
            compute=ray.data.ActorPoolStrategy(size=ACTORS),
            num_cpus=ACTOR_CPUS,
            batch_size=IMAGE_BATCH,
            batch_format="numpy",
        )
    )
    labels, predictions = [], []
    for batch in ds.iter_batches(batch_format="numpy", batch_size=None):
        labels.append(batch["label"])
        predictions.append(batch["prediction"])
    return _accuracy(np.concatenate(labels), np.concatenate(predictions))


def run_raydata_q1(d: str) -> dict:
    return _raydata_classify(d)


def run_raydata_q3(d: str) -> dict:
    return _second_query(lambda: _raydata_classify(d))


def run_raydata_q2(d: str) -> dict:
    import ray.data

    started = time.time()
    ds = (
        ray.data.read_parquet(_dir(d, "chain"))
        .repartition(CHAIN_BATCHES)  # one block a batch: see the module doc
        .map_batches(
            _RayFast,
            compute=ray.data.ActorPoolStrategy(size=1),
            num_cpus=ACTOR_CPUS,
            batch_size=CHAIN_BATCH,
            batch_format="numpy",
        )
        .map_batches(
            _RaySlow,
            compute=ray.data.ActorPoolStrategy(size=ACTORS),
            num_cpus=ACTOR_CPUS,
            batch_size=CHAIN_BATCH,
            batch_format="numpy",
        )
    )
    tags = [str(t) for batch in ds.iter_batches(batch_format="numpy", batch_size=None) for t in batch["tag"]]
    return _finish_chain(_chain_stats(tags), started)


# -- the cluster -----------------------------------------------------------------------------------
def session(data_dir: str) -> Any:
    """The 3-node cluster of ``CPUS_PER_NODE`` CPUs per node (see bench_ray.local_cluster)."""
    return bench_ray.local_cluster(NODES, CPUS_PER_NODE, OBJECT_STORE_MB)
