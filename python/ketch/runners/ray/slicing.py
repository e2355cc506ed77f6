"""Row-range cuts of a stage's ordered outputs, for the operators that keep order and need no
shuffle on Ray: into_partitions, into_batches and the coordinator's half of a two-phase limit.

The cutters take the row counts of the input partitions (the tasks' outputs) one by one in
order and return, per output partition, its pieces as (input partition, offset, length) in rows,
as soon as they are complete. The
engine workers read such a piece as ``table.slice(offset, length)`` of the object it names
(worker.py), so no data passes through the driver. The cuts are the native executor's own
(cpp/ketch/exec/blocking/into_partitions.h and the into_batches re-chunk), so both runners give
the same partitions."""

from __future__ import annotations

Piece = tuple[int, int, int]  # (input partition, offset, length), rows


class Cutter:
    """Cuts computed as the inputs' row counts arrive in order, so the stage reading the cuts can
    start before the stage making the inputs is done (pipelining): ``add(rows)`` for input
    0, 1, ... returns the cuts that are now complete; ``finish()`` the rest."""

    def add(self, rows: int) -> list[list[Piece]]:
        raise NotImplementedError

    def finish(self) -> list[list[Piece]]:
        raise NotImplementedError


class PartitionCutter(Cutter):
    """``into_partitions(num)`` over ``m`` inputs: with num >= m, input i becomes num // m pieces
    (one more for the first num % m inputs) whose sizes differ by at most one row; with num < m,
    output j gathers m // num adjacent inputs (one more for the first m % num outputs). Always
    ``num`` outputs (some may be empty). ValueError if num < 1."""

    def __init__(self, num: int, m: int) -> None:
        if num < 1:
            raise ValueError(f"into_partitions needs num >= 1, got {num}")
        self.num, self.m = num, max(1, m)
        self.index = 0  # next input
        self.group: list[Piece] = []  # num < m: the output being gathered
        self.output = 0
        self.left = self._group_size(0)

    def _group_size(self, j: int) -> int:
        return self.m // self.num + (1 if j < self.m % self.num else 0)

    def add(self, rows: int) -> list[list[Piece]]:
        i, self.index = self.index, self.index + 1
        out: list[list[Piece]] = []
        if self.num >= self.m:
            pieces = self.num // self.m + (1 if i < self.num % self.m else 0)
            offset = 0
            for j in range(pieces):
                length = rows // pieces + (1 if j < rows % pieces else 0)
                out.append([(i, offset, length)] if length else [])
                offset += length
            return out
        if rows:
            self.group.append((i, 0, rows))
        self.left -= 1
        if self.left == 0:
            out.append(self.group)
            self.group, self.output = [], self.output + 1
            self.left = self._group_size(self.output) if self.output < self.num else -1
        return out

    def finish(self) -> list[list[Piece]]:
        out: list[list[Piece]] = []
        while self.index < self.m:  # fewer inputs than announced (an empty input stage)
            out.extend(self.add(0))
        return out


class BatchCutter(Cutter):
    """``into_batches(batch_size)``: the concatenated inputs cut into partitions of exactly
    ``batch_size`` rows, the last one shorter (none when there are no rows). ValueError if
    batch_size < 1."""

    def __init__(self, batch_size: int) -> None:
        if batch_size < 1:
            raise ValueError(f"into_batches needs batch_size >= 1, got {batch_size}")
        self.batch_size = batch_size
        self.index = 0
        self.current: list[Piece] = []
        self.room = batch_size

    def add(self, rows: int) -> list[list[Piece]]:
        i, self.index = self.index, self.index + 1
        out: list[list[Piece]] = []
        offset = 0
        while offset < rows:
            take = min(self.room, rows - offset)
            self.current.append((i, offset, take))
            offset += take
            self.room -= take
            if self.room == 0:
                out.append(self.current)
                self.current, self.room = [], self.batch_size
        return out

    def finish(self) -> list[list[Piece]]:
        out = [self.current] if self.current else []
        self.current = []
        return out


def _all(cutter: Cutter, rows: list[int]) -> list[list[Piece]]:
    out = [cut for r in rows for cut in cutter.add(r)]
    return out + cutter.finish()


def into_partitions(rows: list[int], num: int) -> list[list[Piece]]:
    """All cuts of ``PartitionCutter(num, len(rows))`` at once."""
    return _all(PartitionCutter(num, len(rows)), rows)


def into_batches(rows: list[int], batch_size: int) -> list[list[Piece]]:
    """All cuts of ``BatchCutter(batch_size)`` at once."""
    return _all(BatchCutter(batch_size), rows)


def first_rows(rows: list[int], n: int) -> list[Piece]:
    """The pieces that hold the first ``n`` rows of the concatenated inputs (a limit)."""
    pieces: list[Piece] = []
    for i, r in enumerate(rows):
        if n <= 0:
            break
        take = min(r, n)
        if take:
            pieces.append((i, 0, take))
        n -= take
    return pieces


def row_range(rows: list[int], offset: int, n: int) -> list[Piece]:
    """The pieces that hold rows [offset, offset + n) of the concatenated inputs (a limit with an
    offset; ``first_rows`` is offset 0)."""
    pieces: list[Piece] = []
    for i, r in enumerate(rows):
        if n <= 0:
            break
        skip = min(r, offset)
        offset -= skip
        take = min(r - skip, n)
        if take:
            pieces.append((i, skip, take))
        n -= take
    return pieces
