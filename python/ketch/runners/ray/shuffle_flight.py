"""The hash and random shuffles through Arrow Flight (``FlightShuffling``, part of
``QueryStages``; ``shuffle_algorithm="flight_shuffle"``): map tasks keep their buckets on local
disk, served by each engine worker's Flight server (flight_shuffle.py); reduce tasks fetch
``FlightPiece``s. The query's shuffle files are dropped when it ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ketch.runners.ray.flight_shuffle import (
    DEFAULT_DIR,
    FlightPiece,
)
from ketch.runners.ray.stage_tasks import Pending


@dataclass
class FlightShuffle:
    """One flight shuffle of the query, kept to make lost map outputs again: its map stage
    (``pending``, ``buckets``, ``keys``) and ``pieces[m][j]``, bucket j of map task m as first
    made (``QueryStages._relocated`` maps its ticket to where it was made again)."""

    pending: Pending
    buckets: int
    keys: list[str]
    pieces: list[list[FlightPiece]] = field(default_factory=list)


def _pieces(meta: dict[str, Any], task: int) -> list[FlightPiece]:
    """The flight pieces of flight shuffle map task ``task`` from its metadata, one per bucket."""
    return [
        FlightPiece(meta["flight"], f"{meta['shuffle_id']}/{task}/{j}", rows, meta["num_columns"])
        for j, rows in enumerate(meta["rows"])
    ]


class FlightShuffling:
    """The Flight shuffle methods of ``QueryStages`` (stages.py)."""

    def _drop_flight_files(self) -> None:
        """Deletes this query's flight shuffle files on every node (each worker deletes them on
        its node after the tasks it was already given; a worker that died is skipped, its node's
        files are deleted by the others on a shared disk, or by its replacement)."""
        import ray

        if not self._flight_dirs:
            return
        dirs, self._flight_dirs = self._flight_dirs, []
        calls = [w.handle.drop_query.remote(self.query_id, dirs) for w in self.coordinator.workers if w.alive]
        if not calls:
            return
        ready, _ = ray.wait(calls, num_returns=len(calls), timeout=60)
        for ref in ready:
            try:
                ray.get(ref)
            except Exception:  # noqa: BLE001 - a worker gone meanwhile: nothing left to delete there
                pass

    def _flight_shuffle(self, pending: Pending, keys: list[str], buckets: int) -> list[list[Any]]:
        """The map side of the flight shuffle: each task of ``pending`` writes its ``buckets``
        buckets to its node's disk (flight_shuffle.py); per task, one ``FlightPiece`` per bucket
        (the worker's Flight address, the ticket, the rows), read by the reduce tasks."""
        dirs = getattr(self.config, "flight_shuffle_dirs", None) or [DEFAULT_DIR]
        for d in dirs:
            if d not in self._flight_dirs:
                self._flight_dirs.append(d)
        shuffle = FlightShuffle(pending, buckets, keys)
        self._flight_shuffles.append(shuffle)
        for _, meta in self._stage_with_meta(pending, buckets, keys, "shuffle map", flight=True):
            shuffle.pieces.append(_pieces(meta, len(shuffle.pieces)))
        return [list(pieces) for pieces in shuffle.pieces]
