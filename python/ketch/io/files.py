"""Listing files as a DataFrame: ``from_glob_path`` (path, size, num_rows) and ``from_files`` (a
File column of lazy references)."""

from __future__ import annotations

import fnmatch
import os
from typing import TYPE_CHECKING

import pyarrow as pa

from ketch import _core
from ketch.errors import KetchFileNotFoundError, KetchIOError
from ketch.io.config import IOConfig
from ketch.io.paths import expand_paths
from ketch.io.redact import redact

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

_GLOB_CHARS = set("*?[")


def _list_s3(pattern: str, io_config: IOConfig | None) -> list[tuple[str, int]]:
    """(s3://bucket/key, size) of the objects matching a glob (or under a prefix), sorted."""
    import pyarrow.fs as pafs

    s3 = (io_config or IOConfig()).s3
    fs = s3.to_filesystem()
    path = pattern[len("s3://") :]
    cut = min((path.index(c) for c in _GLOB_CHARS if c in path), default=len(path))
    base = path[:cut].rsplit("/", 1)[0] if cut < len(path) else path.rstrip("/")
    try:
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
        if cut == len(path):
            single = fs.get_file_info(base)
            if single.type == pafs.FileType.File:
                infos = [single]
    except OSError as exc:
        # pyarrow's message may name the endpoint (with its user-info) or echo a key.
        raise KetchIOError(f"listing '{redact(pattern)}': {redact(str(exc), s3.secrets())}") from None
    matched = [
        (f"s3://{info.path}", info.size)
        for info in infos
        if info.type == pafs.FileType.File and (cut == len(path) or fnmatch.fnmatchcase(info.path, path))
    ]
    if not matched:
        raise KetchFileNotFoundError(f"'{redact(pattern)}' matched no files")
    return sorted(matched)


def _list(path: str | list[str], io_config: IOConfig | None) -> tuple[list[str], list[int]]:
    entries = path if isinstance(path, list) else [path]
    if not entries:
        raise ValueError("from_glob_path needs at least one path, got an empty list")
    files: list[str] = []
    sizes: list[int] = []
    for entry in entries:
        entry = os.fspath(entry)
        if entry.startswith("s3://"):
            for p, size in _list_s3(entry, io_config):
                files.append(p)
                sizes.append(size)
            continue
        for f in expand_paths(entry, suffix="", caller="from_glob_path"):
            if os.path.isfile(f):
                files.append(f)
                sizes.append(os.stat(f).st_size)
    return files, sizes


def from_glob_path(path: str | list[str], io_config: IOConfig | None = None) -> DataFrame:
    """One row per file matched by ``path`` (a glob such as ``images/**/*.jpg``, a directory, which
    lists every file under it, a file, ``file://`` URLs, ``s3://bucket/prefix/*.png`` with
    ``io_config``, or a list of those), each file once even when several entries match it, in the
    order of the entries (each entry's files sorted): ``path`` (string: ``file://`` and the
    absolute path for local files, as Daft gives them, or the s3:// URL), ``size`` (int64, bytes)
    and ``num_rows`` (int64, null: files are not opened). Pair with ``col("path").url.download()``
    (which reads ``file://`` URLs) to read them.

    Errors: ``KetchFileNotFoundError`` when an entry matches nothing."""
    from ketch.io.memory import from_arrow

    files, sizes = _list(path, io_config)
    seen: set[str] = set()
    unique = [(f, s) for f, s in zip(files, sizes, strict=True) if not (f in seen or seen.add(f))]
    files = [f if f.startswith("s3://") else "file://" + f for f, _ in unique]
    sizes = [s for _, s in unique]
    return from_arrow(
        pa.table(
            {
                "path": pa.array(files, pa.large_string()),
                "size": pa.array(sizes, pa.int64()),
                "num_rows": pa.nulls(len(files), pa.int64()),
            }
        )
    )


def file_array(paths: list[str | None], sizes: list[int | None] | None = None) -> pa.ExtensionArray:
    """A File column (ketch.file extension array) referencing ``paths`` (sizes in bytes, or None
    where unknown)."""
    storage = pa.StructArray.from_arrays(
        [pa.array(paths, pa.large_string()), pa.array(sizes or [None] * len(paths), pa.int64())],
        names=["path", "size"],
        mask=pa.array([p is None for p in paths]),
    )
    return pa.ExtensionArray.from_storage(_core.file_type(), storage)


def from_files(path: str | list[str], io_config: IOConfig | None = None) -> DataFrame:
    """A DataFrame with one ``file`` column of type File: lazy references to the files matched by
    ``path`` (as ``from_glob_path`` matches them). Nothing is read until a kernel needs it:
    ``.file.path()``, ``.file.size()`` (recorded when listing), ``.file.guess_mime_type()`` (the
    first 64 bytes, one ranged read) and ``.file.read()`` (the whole object).

    Errors: ``KetchFileNotFoundError`` when an entry matches nothing."""
    from ketch.io.memory import from_arrow

    files, sizes = _list(path, io_config)
    return from_arrow(pa.table({"file": file_array(files, sizes)}))
