"""Staging and committing the files of a write (write_parquet, write_csv, write_json), so that a
failed query leaves no file of it behind and readers never see half a dataset.

- ``Staging(root, caller, s3)`` names ``root/.ketch-staging-<random>`` (a hidden local directory,
  made here, or an S3 prefix). The engine's write sink writes every file there, in the final
  layout (``key=value/`` directories under it).
- ``commit(table)`` moves the files the write reported (its result: ``path``, the partition
  columns, ``num_rows``) to the same place under ``root`` (local: a rename; S3: a server-side copy
  then a delete) and returns the result with the final paths. Empty files (a distributed task with
  no rows) are dropped, except one when the whole unpartitioned write is empty, so the schema is
  kept. A move that fails undoes the moves before it (the files are removed again).
- ``close()`` removes the staging location whatever happened.

The native runner's local writes need no staging: the sink itself writes hidden temporaries and
renames them only once every file is complete (cpp/ketch/exec/sinks/write_sink.h). S3 has no
rename and an object is visible once uploaded, and the Ray runner's tasks finish at different
times, so those writes are staged here. Files of a worker that died are never in the result, so a
retried task never doubles rows.

``replace_others`` then carries out ``write_mode="overwrite"`` (every other file under ``root``)
and ``"overwrite-partitions"`` (the other files in the partition directories written), only
after the commit: a failed write never loses the old dataset."""

from __future__ import annotations

import os
import secrets
import shutil
from typing import Any

import pyarrow as pa

from ketch.errors import KetchIOError
from ketch.io.config import S3Config
from ketch.io.redact import redact

STAGING_PREFIX = ".ketch-staging-"


class Staging:
    def __init__(self, root: str, caller: str, s3: S3Config | None = None) -> None:
        self.root = root.rstrip("/")
        self.caller = caller
        self.remote = root.startswith("s3://")
        self.dir = f"{self.root}/{STAGING_PREFIX}{secrets.token_hex(8)}"
        self._secrets = s3.secrets() if s3 is not None else []
        self._fs: Any = (s3 or S3Config()).to_filesystem() if self.remote else None
        if not self.remote:
            try:
                os.makedirs(self.root, exist_ok=True)
                os.mkdir(self.dir)
            except OSError as error:
                raise KetchIOError(
                    f"{caller}: cannot write into '{self.root}': {error.strerror or error}"
                ) from None

    def unstaged(self, message: str) -> str:
        """``message`` naming the destination instead of the staging location (its URL or path,
        and for S3 also the bare object key that the SDK's messages quote)."""
        message = message.replace(self.dir + "/", self.root + "/")
        if self.remote:
            staged_key = self.dir.split("/", 3)[3] + "/"
            root_key = self.root.split("/", 3)[3] + "/" if self.root.count("/") >= 3 else ""
            message = message.replace(staged_key, root_key)
        return message

    def _error(self, what: str, path: str, error: OSError) -> KetchIOError:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return KetchIOError(f"{self.caller}: {what} '{redact(path)}': {redact(reason, self._secrets)}")

    def commit(self, table: pa.Table) -> pa.Table:
        """``table`` (the write's result over staged paths) with the committed paths, empty files
        dropped. KetchIOError naming the file when a move fails (the moved ones are removed)."""
        rows = table.column("num_rows").to_pylist()
        partitioned = table.num_columns > 2
        keep = [i for i, n in enumerate(rows) if n > 0]
        if not keep and rows and not partitioned:
            keep = [0]
        table = table.take(pa.array(keep, pa.int64()))
        staged = table.column("path").to_pylist()
        targets = [self.root + p[len(self.dir) :] for p in staged]
        done: list[str] = []
        try:
            for source, target in zip(staged, targets, strict=True):
                self._move(source, target)
                done.append(target)
        except OSError as error:
            for target in done:
                self._remove(target)
            raise self._error("could not commit its file", target, error) from None
        return table.set_column(0, "path", pa.array(targets, pa.string()))

    def _move(self, source: str, target: str) -> None:
        if self.remote:
            self._fs.move(source[len("s3://") :], target[len("s3://") :])
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.rename(source, target)

    def _remove(self, path: str) -> None:
        try:
            if self.remote:
                self._fs.delete_file(path[len("s3://") :])
            else:
                os.remove(path)
        except OSError:
            pass

    def close(self) -> None:
        if self.remote:
            try:
                self._fs.delete_dir(self.dir[len("s3://") :])
            except OSError:
                pass  # nothing was staged
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def _list_local(root: str, directories: set[str] | None) -> list[str]:
    """Files under ``root`` (every level; only directly in ``directories`` when given), skipping
    other writes' staging directories, keeping stale temporaries (``.<name>.tmp``)."""
    out: list[str] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith(STAGING_PREFIX)]
        if directories is not None and directory not in directories:
            continue
        out.extend(os.path.join(directory, f) for f in files)
    return out


def _remove_empty_dirs(root: str) -> None:
    for directory, _, _ in sorted(os.walk(root), key=lambda entry: -len(entry[0])):
        if directory != root and STAGING_PREFIX not in directory and not os.listdir(directory):
            os.rmdir(directory)


def replace_others(root: str, written: list[str], mode: str, caller: str, s3: S3Config | None) -> None:
    """After a committed write with ``mode`` "overwrite" or "overwrite-partitions": removes the
    files the write did not write, under ``root`` or in the partition directories it wrote."""
    import pyarrow.fs as pafs

    keep = set(written)
    root = root.rstrip("/")
    try:
        if root.startswith("s3://"):
            fs = (s3 or S3Config()).to_filesystem()
            base = root[len("s3://") :]
            infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
            dirs = {p.rsplit("/", 1)[0] for p in written}
            for info in infos:
                path = "s3://" + info.path
                inside = path[len(root) + 1 :]
                if info.type != pafs.FileType.File or path in keep:
                    continue
                if any(part.startswith(STAGING_PREFIX) for part in inside.split("/")):
                    continue
                if mode == "overwrite-partitions" and path.rsplit("/", 1)[0] not in dirs:
                    continue
                fs.delete_file(info.path)
            return
        dirs_local = {os.path.dirname(p) for p in written} if mode == "overwrite-partitions" else None
        for path in _list_local(root, dirs_local):
            if path not in keep:
                os.remove(path)
        _remove_empty_dirs(root)
    except OSError as error:
        reason = error.strerror or str(error)
        where = getattr(error, "filename", None) or root
        secrets_ = s3.secrets() if s3 is not None else []
        raise KetchIOError(
            f"{caller}: wrote its files but could not remove the old ones in '{redact(str(where))}': "
            f"{redact(reason, secrets_)}"
        ) from None


def drop_bookkeeping(table: pa.Table) -> pa.Table:
    """The user's result: ``path`` and the partition columns (``num_rows`` is internal)."""
    return table.drop_columns(["num_rows"])
