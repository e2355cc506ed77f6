"""Lance datasets: Ketch vs Daft vs pylance, writes, reads and top-10 vector search.

Data (``prepare``): ``ROWS`` rows of ``id`` (int64) and ``emb`` (384-dim float32, standard normal,
seeded) in ``input.parquet`` (the writers' input); the same rows written once by pylance to
``plain.lance`` (no index) and ``indexed.lance`` (an IVF_PQ cosine index: ``PARTITIONS`` lists,
48 sub-vectors); ``QUERIES`` query vectors and their exact top-10 (numpy float64 cosine) in
``queries.npz``.

Queries (``<engine>_q<N>``; engines ``ketch``, ``daft`` (0.7.26 with daft-lance), ``pylance``
(14.0.2, run in Ketch's venv: the same wheel as the peers')):

- q1, write: ``input.parquet`` → a new Lance dataset (Ketch: ``read_parquet(...).write_lance``; Daft:
  ``read_parquet(...).write_lance``; pylance: ``pq.read_table`` → ``lance.write_dataset``). Check:
  the rows the written dataset holds.
- q2, read: every row of ``plain.lance`` into Arrow (``read_lance(...).to_arrow()``; pylance
  ``to_table()``). Check: the digest of the whole result (every id and vector element).
- q3, indexed top-10: for each query, ``read_lance(indexed).with_column("d",
  col("emb").embedding.cosine_distance(q)).sort("d").limit(10)`` (Ketch's optimizer pushes it into
  Lance's index: nprobes 20, refine factor 10); pylance ``to_table(nearest={... nprobes 20,
  refine_factor 10})``. Check: mean recall against the exact top-10.
- q4, brute-force top-10: the same over ``plain.lance`` (no index: Ketch and Daft compute the
  distance on every row, sort, limit; pylance ``nearest`` with ``use_index=False``). Check: recall.

Sizes (``--size``, ``KETCH_BENCH_SIZE``): ``tiny`` (2,000 rows: a smoke run of every case in a few
seconds), ``small`` (50,000 rows), ``medium`` (the default: 1,000,000 rows, the issue's size; about
1.5 GB of vectors: do not run on a loaded 2-core box). Run: ``PYTHONPATH=$PWD/python
.venv/bin/python benchmarks/run.py lance --repeat 1 --size tiny``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

SIZES = {
    "tiny": {"rows": 2_000, "partitions": 4},
    "small": {"rows": 50_000, "partitions": 64},
    "medium": {"rows": 1_000_000, "partitions": 256},
}
SIZE_NAME = os.environ.get("KETCH_BENCH_SIZE", "medium")
if SIZE_NAME not in SIZES:
    raise ValueError(f"KETCH_BENCH_SIZE={SIZE_NAME!r}: want one of {sorted(SIZES)}")
ROWS = SIZES[SIZE_NAME]["rows"]
PARTITIONS = SIZES[SIZE_NAME]["partitions"]
DIM = 384
SUB_VECTORS = 48
QUERIES = 5
K = 10
NPROBES = 20
REFINE_FACTOR = 10
DATA_NAME = f"lance_{SIZE_NAME}"
KETCH_VENV_ENGINES = ("pylance",)


def setup(engine: str) -> None:
    """Imports (untimed): the engine's module and pylance."""
    import lance  # noqa: F401
    import numpy  # noqa: F401

    if engine.startswith("ketch"):
        import ketch  # noqa: F401
    elif engine.startswith("daft"):
        import daft  # noqa: F401


def _path(data_dir: str, name: str) -> str:
    return os.path.join(data_dir, name)


def prepare(data_dir: str) -> None:
    import lance
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    chunks = []
    for start in range(0, ROWS, 100_000):
        n = min(100_000, ROWS - start)
        vectors = rng.normal(size=(n, DIM)).astype(np.float32)
        chunks.append(
            pa.record_batch(
                {
                    "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
                    "emb": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), DIM),
                }
            )
        )
    table = pa.Table.from_batches(chunks)
    pq.write_table(table, _path(data_dir, "input.parquet"), row_group_size=64_000)
    lance.write_dataset(table, _path(data_dir, "plain.lance"))
    indexed = lance.write_dataset(table, _path(data_dir, "indexed.lance"))
    indexed.create_index(
        "emb", index_type="IVF_PQ", metric="cosine", num_partitions=PARTITIONS, num_sub_vectors=SUB_VECTORS
    )
    queries = rng.normal(size=(QUERIES, DIM))
    norms = np.zeros(ROWS)
    truths = np.zeros((QUERIES, K), dtype=np.int64)
    dots = np.zeros((QUERIES, ROWS))
    offset = 0
    for batch in chunks:
        v = np.asarray(batch.column("emb").values).reshape(-1, DIM).astype(np.float64)
        norms[offset : offset + len(v)] = np.linalg.norm(v, axis=1)
        dots[:, offset : offset + len(v)] = queries @ v.T
        offset += len(v)
    distances = 1 - dots / (norms[None, :] * np.linalg.norm(queries, axis=1)[:, None])
    for i in range(QUERIES):
        truths[i] = np.argsort(distances[i], kind="stable")[:K]
    np.savez(_path(data_dir, "queries.npz"), queries=queries, truths=truths)


def _queries(data_dir: str) -> tuple[Any, Any]:
    import numpy as np

    with np.load(_path(data_dir, "queries.npz")) as f:
        return f["queries"], f["truths"]


def _recall(found: list[list[int]], truths: Any) -> float:
    hits = [len(set(ids) & set(truth.tolist())) / K for ids, truth in zip(found, truths, strict=True)]
    return sum(hits) / len(hits)


def _fresh(data_dir: str) -> str:
    out = tempfile.mkdtemp(prefix="written-", dir=data_dir)
    shutil.rmtree(out)
    return out + ".lance"


def _written(uri: str) -> dict:
    """The rows of the written dataset, and its whole content read back for the digest (after the
    timed region), then removed."""
    import lance

    def content() -> Any:
        table = lance.dataset(uri).to_table()
        shutil.rmtree(uri, ignore_errors=True)
        return table

    return {"rows": lance.dataset(uri).count_rows(), "result": content, "result_columns": ["id", "emb"]}


# -- q1: write ---------------------------------------------------------------------------------------
def run_ketch_q1(data_dir: str) -> dict:
    import ketch

    uri = _fresh(data_dir)
    ketch.read_parquet(_path(data_dir, "input.parquet")).write_lance(uri)
    return _written(uri)


def run_daft_q1(data_dir: str) -> dict:
    import daft

    uri = _fresh(data_dir)
    daft.read_parquet(_path(data_dir, "input.parquet")).write_lance(uri)
    return _written(uri)


def run_pylance_q1(data_dir: str) -> dict:
    import lance
    import pyarrow.parquet as pq

    uri = _fresh(data_dir)
    lance.write_dataset(pq.read_table(_path(data_dir, "input.parquet")), uri)
    return _written(uri)


# -- q2: read ----------------------------------------------------------------------------------------
def _read_check(table: Any) -> dict:
    return {"rows": table.num_rows, "result": table, "result_columns": ["id", "emb"]}


def run_ketch_q2(data_dir: str) -> dict:
    import ketch

    return _read_check(ketch.read_lance(_path(data_dir, "plain.lance")).to_arrow())


def run_daft_q2(data_dir: str) -> dict:
    import daft

    return _read_check(daft.read_lance(_path(data_dir, "plain.lance")).to_arrow())


def run_pylance_q2(data_dir: str) -> dict:
    import lance

    return _read_check(lance.dataset(_path(data_dir, "plain.lance")).to_table())


# -- q3 / q4: top-10 -----------------------------------------------------------------------------------
def _ketch_top(uri: str, data_dir: str) -> dict:
    import ketch
    from ketch import col

    queries, truths = _queries(data_dir)
    found = []
    for q in queries:
        df = (
            ketch.read_lance(uri).with_column("d", col("emb").embedding.cosine_distance(q)).sort("d").limit(K)
        )
        found.append(df.select("id").to_pydict()["id"])
    return {"rows": sum(len(f) for f in found), "check": _recall(found, truths)}


def _daft_top(uri: str, data_dir: str) -> dict:
    import daft
    from daft import col

    queries, truths = _queries(data_dir)
    found = []
    for q in queries:
        query = daft.lit(q.astype("float32").tolist()).cast(
            daft.DataType.embedding(daft.DataType.float32(), DIM)
        )
        df = daft.read_lance(uri).with_column("d", col("emb").cosine_distance(query)).sort("d").limit(K)
        found.append(df.select("id").to_pydict()["id"])
    return {"rows": sum(len(f) for f in found), "check": _recall(found, truths)}


def _pylance_top(uri: str, data_dir: str, use_index: bool) -> dict:
    import lance

    queries, truths = _queries(data_dir)
    dataset = lance.dataset(uri)
    found = []
    for q in queries:
        nearest = {
            "column": "emb",
            "q": q.astype("float32"),
            "k": K,
            "metric": "cosine",
            "use_index": use_index,
        }
        if use_index:
            nearest.update(nprobes=NPROBES, refine_factor=REFINE_FACTOR)
        found.append(dataset.to_table(columns=["id"], nearest=nearest)["id"].to_pylist())
    return {"rows": sum(len(f) for f in found), "check": _recall(found, truths)}


def run_ketch_q3(data_dir: str) -> dict:
    return _ketch_top(_path(data_dir, "indexed.lance"), data_dir)


def run_pylance_q3(data_dir: str) -> dict:
    return _pylance_top(_path(data_dir, "indexed.lance"), data_dir, use_index=True)


def run_ketch_q4(data_dir: str) -> dict:
    return _ketch_top(_path(data_dir, "plain.lance"), data_dir)


def run_daft_q4(data_dir: str) -> dict:
    return _daft_top(_path(data_dir, "plain.lance"), data_dir)


def run_pylance_q4(data_dir: str) -> dict:
    return _pylance_top(_path(data_dir, "plain.lance"), data_dir, use_index=False)
