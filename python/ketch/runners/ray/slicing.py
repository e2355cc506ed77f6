"""Row-range cuts of a stage's ordered outputs, for the operators that keep order and need no
shuffle on Ray: into_partitions, into_batches and the coordinator's half of a two-phase limit.

Each function takes the row counts of the input partitions (the tasks' outputs, in order) and
returns, per output partition, its pieces as (input partition, offset, length) in rows. The
engine workers read such a piece as ``table.slice(offset, length)`` of the object it names
(worker.py), so no data passes through the driver. The cuts are the native executor's own
(cpp/ketch/exec/blocking/into_partitions.h and the into_batches re-chunk), so both runners give
the same partitions."""

from __future__ import annotations

Piece = tuple[int, int, int]  # (input partition, offset, length), rows


def into_partitions(rows: list[int], num: int) -> list[list[Piece]]:
    """``into_partitions(num)`` over inputs of ``rows`` rows each: with num >= m inputs, input i
    becomes num // m pieces (one more for the first num % m inputs) whose sizes differ by at most
    one row; with num < m, output j gathers m // num adjacent inputs (one more for the first
    m % num outputs). Always ``num`` outputs (some may be empty). ValueError if num < 1."""
    if num < 1:
        raise ValueError(f"into_partitions needs num >= 1, got {num}")
    m = max(1, len(rows))
    rows = rows or [0]
    out: list[list[Piece]] = []
    if num >= m:
        for i, r in enumerate(rows):
            pieces = num // m + (1 if i < num % m else 0)
            offset = 0
            for j in range(pieces):
                length = r // pieces + (1 if j < r % pieces else 0)
                out.append([(i, offset, length)] if length else [])
                offset += length
    else:
        start = 0
        for j in range(num):
            count = m // num + (1 if j < m % num else 0)
            out.append([(i, 0, rows[i]) for i in range(start, start + count) if rows[i]])
            start += count
    return out


def into_batches(rows: list[int], batch_size: int) -> list[list[Piece]]:
    """``into_batches(batch_size)``: the concatenated inputs cut into partitions of exactly
    ``batch_size`` rows, the last one shorter (none when there are no rows). ValueError if
    batch_size < 1."""
    if batch_size < 1:
        raise ValueError(f"into_batches needs batch_size >= 1, got {batch_size}")
    out: list[list[Piece]] = []
    current: list[Piece] = []
    room = batch_size
    for i, r in enumerate(rows):
        offset = 0
        while offset < r:
            take = min(room, r - offset)
            current.append((i, offset, take))
            offset += take
            room -= take
            if room == 0:
                out.append(current)
                current, room = [], batch_size
    if current:
        out.append(current)
    return out


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
