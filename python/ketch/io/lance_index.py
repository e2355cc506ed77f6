"""Vector (ANN) indexes on Lance datasets, built by pylance.

Daft exposes no vector-index builder (only ``daft.io.lance.create_scalar_index``), so Ketch offers a
thin wrapper over pylance's ``LanceDataset.create_index``, which does all the work: it trains the
IVF centroids and PQ/SQ codebooks and commits a new dataset version that carries the index. Ketch's
optimizer then answers ``read_lance(uri).with_column("d", col(c).embedding.cosine_distance(q))
.sort("d").limit(k)`` (or ``euclidean_distance`` with an ``"l2"`` index) with Lance's indexed
nearest-neighbour search instead of a full scan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from ketch.io.config import IOConfig

VECTOR_INDEX_TYPES = ("IVF_FLAT", "IVF_PQ", "IVF_SQ", "IVF_HNSW_FLAT", "IVF_HNSW_PQ", "IVF_HNSW_SQ")
# Our names → Lance's. "l2" is what Lance calls the (squared) Euclidean metric.
_METRICS = {"cosine": "cosine", "l2": "l2", "euclidean": "l2", "dot": "dot"}


def _open(uri: str, io_config: IOConfig | None) -> Any:
    from ketch.io.lance import normalize_uri, open_dataset, storage_options

    return open_dataset(normalize_uri(uri), None, None, storage_options(io_config), "create_index")


def create_index(
    uri: str,
    column: str,
    index_type: str = "IVF_PQ",
    metric: str = "cosine",
    *,
    name: str | None = None,
    num_partitions: int | None = None,
    num_sub_vectors: int | None = None,
    replace: bool = True,
    io_config: IOConfig | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Builds an ANN index on the embedding column ``column`` of the Lance dataset at ``uri`` and
    commits it as a new version (pylance ``LanceDataset.create_index``; extra keyword arguments go
    there unchanged, e.g. ``num_bits``, ``m``, ``ef_construction``, ``sample_rate``).

    - ``column``: a fixed-size list of float16/float32/float64 (Ketch's ``Embedding``) of dimension D.
    - ``index_type``: one of ``IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_FLAT, IVF_HNSW_PQ, IVF_HNSW_SQ``.
    - ``metric``: ``"cosine"`` (matches ``embedding.cosine_distance``), ``"l2"``/``"euclidean"``
      (matches ``embedding.euclidean_distance``) or ``"dot"`` (no Ketch expression uses it).
    - ``num_partitions``: IVF lists (when None: about sqrt(rows), ``default_num_partitions``;
      pylance 14 itself requires it); ``num_sub_vectors``: PQ sub-vectors, must divide D (when
      None: D/16, else D/8, ``default_num_sub_vectors``).

    Returns ``{"name", "index_type", "column", "metric", "num_rows_indexed", "version"}``: the
    index as Lance describes it after the commit, and the dataset version that holds it.

    Raises ``ValueError`` for an unknown ``index_type`` or ``metric``, a missing column or one that is
    not a fixed-size list of floats; ``OSError`` (from pylance) when the dataset cannot be opened.
    """
    kind = index_type.upper()
    if kind not in VECTOR_INDEX_TYPES:
        raise ValueError(
            f"create_index: index_type must be one of {', '.join(VECTOR_INDEX_TYPES)}, got {index_type!r}"
        )
    lance_metric = _METRICS.get(metric.lower())
    if lance_metric is None:
        raise ValueError(f"create_index: metric must be one of {', '.join(_METRICS)}, got {metric!r}")
    dataset = _open(uri, io_config)
    schema = dataset.schema
    if column not in schema.names:
        raise ValueError(f"create_index: {uri}: no column {column!r} (columns: {', '.join(schema.names)})")
    field_type = schema.field(column).type
    if isinstance(field_type, pa.ExtensionType):
        field_type = field_type.storage_type
    if not pa.types.is_fixed_size_list(field_type) or not pa.types.is_floating(field_type.value_type):
        raise ValueError(
            f"create_index: {uri}: column {column!r} has type {schema.field(column).type}, "
            "not a fixed-size list of floats (an Embedding)"
        )
    options: dict[str, Any] = dict(kwargs)
    if num_partitions is None and kind.startswith("IVF"):
        num_partitions = default_num_partitions(dataset.count_rows())
    if num_partitions is not None:
        options["num_partitions"] = num_partitions
    if num_sub_vectors is None and kind.endswith("PQ"):
        num_sub_vectors = default_num_sub_vectors(field_type.list_size)
    if num_sub_vectors is not None:
        options["num_sub_vectors"] = num_sub_vectors
    dataset = dataset.create_index(
        column, index_type=kind, name=name, metric=lance_metric, replace=replace, **options
    )
    made = [
        ix
        for ix in vector_indexes(dataset)
        if ix["column"] == column and (name is None or ix["name"] == name)
    ]
    if not made:
        raise RuntimeError(f"create_index: {uri}: pylance committed no index on {column!r}")
    return {**made[-1], "version": dataset.version}


def default_num_partitions(rows: int) -> int:
    """IVF lists when the caller gives none: about sqrt(rows) (Lance's and FAISS' rule of thumb),
    but no more than rows / 256 (Lance trains each list's centroid on at least 256 vectors and
    warns otherwise), at least 1 and at most 4,096."""
    return max(1, min(4096, round(rows**0.5), rows // 256))


def default_num_sub_vectors(dim: int) -> int:
    """PQ sub-vectors when the caller gives none: ``dim / 16`` when 16 divides ``dim`` (Lance's
    recommended 16-dimension sub-vectors), else ``dim / 8``, else the largest divisor of ``dim``
    that leaves sub-vectors of at least 4 dimensions (1 for a tiny ``dim``)."""
    for width in (16, 8):
        if dim % width == 0:
            return dim // width
    for count in range(dim // 4, 0, -1):
        if dim % count == 0:
            return count
    return 1


def vector_indexes(dataset: Any) -> list[dict[str, Any]]:
    """The vector indexes of an open ``lance.LanceDataset``: a list of ``{"name", "index_type",
    "column", "metric", "num_rows_indexed"}`` (metric lower case: ``cosine``, ``l2``, ``dot``).
    Scalar indexes are left out. What ``read_lance`` hands to the optimizer's nearest-neighbour rule."""
    out: list[dict[str, Any]] = []
    for description in dataset.describe_indices():
        details = description.details if isinstance(description.details, dict) else {}
        metric = details.get("metric_type")
        if metric is None or len(description.field_names) != 1:
            continue  # not a vector index (or a multi-column one: never matched by the rule)
        out.append(
            {
                "name": description.name,
                "index_type": description.index_type,
                "column": description.field_names[0],
                "metric": _METRICS.get(str(metric).lower(), str(metric).lower()),
                "num_rows_indexed": int(description.num_rows_indexed),
            }
        )
    return out


def nearest_reader(
    dataset: Any,
    columns: list[str],
    filter: str | None,
    nearest: dict[str, Any],
    on_bytes_read: Any,
) -> pa.RecordBatchReader:
    """Lance's ``k`` nearest rows of ``dataset`` (a whole version) to ``nearest["q"]``, with only
    ``columns`` (Lance's ``_distance`` is left out: Ketch recomputes its own distance above the
    scan) and ``filter`` (Lance SQL) applied before the search (``prefilter=True``, so the k rows are
    the nearest of the rows that pass it). ``nearest``: column, q (list of floats), k, metric,
    nprobes, refine_factor."""
    import numpy as np

    search = {
        "column": nearest["column"],
        "q": np.asarray(nearest["q"], dtype=np.float32),
        "k": int(nearest["k"]),
        "metric": nearest["metric"],
        "nprobes": int(nearest["nprobes"]),
        "refine_factor": int(nearest["refine_factor"]),
        "use_index": True,
    }
    scanner = dataset.scanner(
        columns=list(columns),
        filter=filter,
        prefilter=True,
        nearest=search,
        disable_scoring_autoprojection=True,
        scan_stats_callback=lambda stats: on_bytes_read(int(stats.bytes_read)),
    )
    reader = scanner.to_reader()
    if "_distance" not in reader.schema.names:
        return reader
    keep = [name for name in reader.schema.names if name != "_distance"]
    schema = pa.schema([reader.schema.field(name) for name in keep])
    batches = (batch.select(keep) for batch in reader)
    return pa.RecordBatchReader.from_batches(schema, batches)
