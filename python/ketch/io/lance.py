"""read_lance: a lazy scan of a Lance dataset (pylance reads the format).

The dataset's fragments become scan tasks (small ones merged, large ones split by row range below
expensive pipelines); projection, filter and limit pushdown reach ``LanceDataset.scanner``. The
native scan calls :func:`_open_reader` (registered with the core at import) from its executor
threads to open each fragment's reader, then pulls the Arrow stream without the GIL.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pyarrow as pa

from ketch import _core
from ketch.errors import KetchFileNotFoundError, KetchValueError
from ketch.io.config import IOConfig

if TYPE_CHECKING:
    import lance

    from ketch.dataframe import DataFrame


def _import_lance() -> Any:
    from ketch._optional import require

    return require("lance", "Lance (read_lance, write_lance)")


def normalize_uri(uri: str | os.PathLike[str]) -> str:
    """A local path as an absolute path; object-store URLs unchanged."""
    text = os.fspath(uri)
    if not isinstance(text, str):
        raise TypeError(f"a Lance dataset URI must be a str or path, got {type(uri).__name__}")
    if "://" in text and not text.startswith("file://"):
        return text
    if text.startswith("file://"):
        text = text[len("file://") :]
    return os.path.abspath(text)


def storage_options(io_config: IOConfig | None) -> dict[str, str]:
    """pylance's ``storage_options`` (object_store's keys) for an IOConfig's S3 settings."""
    if io_config is None:
        return {}
    if not isinstance(io_config, IOConfig):
        raise TypeError(f"io_config must be a ketch.io.IOConfig, got {type(io_config).__name__}")
    s3 = io_config.s3
    out: dict[str, str] = {}
    if s3.region_name:
        out["aws_region"] = s3.region_name
    if s3.endpoint_url:
        out["aws_endpoint"] = s3.endpoint_url
        if urlparse(s3.endpoint_url).scheme == "http":
            out["allow_http"] = "true"
    if s3.key_id:
        out["aws_access_key_id"] = s3.key_id
        out["aws_secret_access_key"] = s3.access_key or ""
    if s3.session_token:
        out["aws_session_token"] = s3.session_token
    if s3.anonymous:
        out["aws_skip_signature"] = "true"
    return out


_datasets: dict[tuple, Any] = {}
_datasets_lock = threading.Lock()


def _dataset(uri: str, version: int, options: dict[str, str]) -> lance.LanceDataset:
    """The dataset at one version, opened once per process (a worker opens it for its first task)."""
    key = (uri, version, tuple(sorted(options.items())))
    with _datasets_lock:
        ds = _datasets.get(key)
    if ds is None:
        ds = _import_lance().dataset(uri, version=version, storage_options=options or None)
        with _datasets_lock:
            if len(_datasets) > 64:
                _datasets.clear()
            _datasets[key] = ds
    return ds


def _open_reader(
    uri: str,
    version: int,
    fragment_ids: list[int],
    columns: list[str],
    filter: str | None,
    limit: int | None,
    offset: int,
    options: dict[str, str],
    on_bytes_read: Callable[[int], None],
    nearest: dict[str, Any] | None = None,
) -> pa.RecordBatchReader:
    """A reader over some fragments of one version, in the order given, with what was pushed down
    (``filter`` is Lance SQL; ``limit``/``offset`` count rows after it). Called by the native scan.
    With ``nearest`` (the optimizer's PushDownNearest): Lance's ``k`` nearest rows of the whole
    version instead (see :func:`ketch.io.lance_index.nearest_reader`)."""
    ds = _dataset(uri, version, options)
    if nearest is not None:
        from ketch.io.lance_index import nearest_reader

        return nearest_reader(ds, columns, filter, nearest, on_bytes_read)
    fragments = []
    for fid in fragment_ids:
        fragment = ds.get_fragment(fid)
        if fragment is None:
            raise KetchFileNotFoundError(f"read_lance: fragment {fid} is not in version {version} of {uri}")
        fragments.append(fragment)
    scanner = ds.scanner(
        columns=columns,
        filter=filter,
        limit=limit,
        offset=offset or None,
        fragments=fragments,
        scan_in_order=True,
        scan_stats_callback=lambda stats: on_bytes_read(int(stats.bytes_read)),
    )
    return scanner.to_reader()


_core.set_lance_reader(_open_reader)


def _fragment_bytes(fragment: Any) -> int:
    total = 0
    for data_file in fragment.data_files():
        size = getattr(data_file, "file_size_bytes", None)
        if size is None:
            return -1
        total += int(size)
    return total


def open_dataset(
    uri: str, version: int | str | None, asof: Any, options: dict[str, str], caller: str
) -> lance.LanceDataset:
    """``lance.dataset`` with Ketch's errors: KetchFileNotFoundError when nothing is at ``uri``,
    KetchValueError for a version or timestamp the dataset does not have."""
    lance_mod = _import_lance()
    if isinstance(version, bool) or (isinstance(version, int) and not 0 <= version < 2**64):
        raise KetchValueError(
            f"{caller}: version must be a non-negative version number or a tag name, got {version!r}"
        )
    try:
        return lance_mod.dataset(uri, version=version, asof=asof, storage_options=options or None)
    except (ValueError, OSError, RuntimeError, OverflowError, TypeError) as exc:
        text = str(exc)
        missing = "not found" in text.lower() or "does not exist" in text.lower()
        if version is None and asof is None and missing:
            raise KetchFileNotFoundError(f"{caller}: no Lance dataset at '{uri}': {text}") from None
        what = f"version {version!r}" if version is not None else f"asof {asof!r}"
        raise KetchValueError(f"{caller}: cannot open {what} of the Lance dataset '{uri}': {text}") from None


def read_lance(
    uri: str | os.PathLike[str],
    io_config: IOConfig | None = None,
    version: int | str | None = None,
    asof: Any = None,
) -> DataFrame:
    """A lazy DataFrame over a Lance dataset (``uri``: a local directory or an ``s3://`` URL).

    One row per live row of the dataset, with the dataset's columns and types: Arrow types as
    stored, and Ketch's Image, FixedShapeImage, Embedding (fixed-size list) and Tensor types as
    written by :meth:`DataFrame.write_lance`. ``version`` (a version number or tag) or ``asof``
    (a ``datetime`` or ISO string: the latest version at or before it) selects an older version;
    the version read is pinned when ``read_lance`` is called, so later commits do not change the
    result. Parameters in Daft's order (``uri, io_config, version, asof``); ``io_config``'s S3
    settings become pylance's ``storage_options``. Fragments become scan tasks; ``select``,
    ``where``/``filter`` and ``limit`` are pushed into Lance's scanner (``explain()`` shows the
    Lance filter and what Ketch still filters).

    Raises KetchFileNotFoundError when no dataset is at ``uri``, KetchValueError for a version or
    timestamp the dataset lacks, TypeError for a bad ``io_config``.
    """
    from ketch.dataframe import DataFrame
    from ketch.io.memory import from_arrow

    if version is not None and asof is not None:
        raise ValueError("read_lance: give version= or asof=, not both")
    options = storage_options(io_config)
    path = normalize_uri(uri)
    ds = open_dataset(path, version, asof, options, "read_lance")
    schema = ds.schema
    fragments = ds.get_fragments()
    if not fragments:
        return from_arrow(schema.empty_table())
    ids = [f.fragment_id for f in fragments]
    rows = [f.count_rows() for f in fragments]
    sizes = [_fragment_bytes(f) for f in fragments]
    from ketch.io.lance_index import vector_indexes

    indexes = [(ix["name"], ix["index_type"], ix["column"], ix["metric"]) for ix in vector_indexes(ds)]
    plan = _core.PyPlan.scan_lance(path, int(ds.version), ids, rows, sizes, schema, options, indexes)
    return DataFrame(plan)


# Vector indexes (pylance's create_index); defined beside, exported here as ketch.io.lance.create_index.
from ketch.io.lance_index import create_index  # noqa: E402

__all__ = ["create_index", "read_lance"]
