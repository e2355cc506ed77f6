"""Atomic distributed writes: every task writes its files into one hidden staging directory under
the destination, the coordinator commits them only when every task succeeded.

- ``Staging(root)`` makes ``root/.ketch-staging-<random>/``; each write task runs the engine's
  WriteParquet sink there (its own files are complete before they get their names, see
  cpp/ketch/exec/sinks/sinks.h) and returns the paths it wrote.
- ``commit(paths_per_task)`` renames the files the successful tasks reported, in task order, to
  ``root/<random>-<k>.parquet`` (k = 0, 1, ... over the whole query, as the native runner names
  one query's files). Files left by an attempt whose worker died are never in that list, so a
  retried task never doubles rows. A rename that fails undoes the renames before it. Empty files
  (a task with no rows) are dropped, except one when the whole result is empty, so the schema is
  kept as the native runner keeps it.
- ``close()`` removes the staging directory whatever happened: a failed query leaves no file.

The destination must be a filesystem every node sees at the same path (a local path on a
one-machine cluster, or a shared mount)."""

from __future__ import annotations

import os
import secrets
import shutil

import pyarrow.parquet as pq


class Staging:
    def __init__(self, root: str) -> None:
        self.root = root
        os.makedirs(root, exist_ok=True)
        self.dir = os.path.join(root, f".ketch-staging-{secrets.token_hex(8)}")
        os.makedirs(self.dir)

    def commit(self, paths_per_task: list[list[str]]) -> list[str]:
        """The final paths, in task order. OSError (naming the file) when a rename fails; the
        files renamed before it are removed again."""
        staged = [p for paths in paths_per_task for p in paths]
        rows = {p: pq.read_metadata(p).num_rows for p in staged}
        keep = [p for p in staged if rows[p] > 0] or staged[:1]
        prefix = secrets.token_hex(8)
        done: list[str] = []
        try:
            for k, path in enumerate(keep):
                target = os.path.join(self.root, f"{prefix}-{k}.parquet")
                os.rename(path, target)
                done.append(target)
        except OSError as error:
            for target in done:
                try:
                    os.remove(target)
                except OSError:
                    pass
            raise OSError(
                error.errno, f"write_parquet could not commit its files into {self.root!r}: {error.strerror}"
            ) from None
        return done

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
