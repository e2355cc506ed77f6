"""Recovery of a query on Ray when an engine worker dies (``Recovery``, part of ``QueryStages``):
inputs held by the dead worker are relocated to live ones, and the map outputs of a Flight
shuffle lost with its worker are recomputed from their lineage (lineage.py) before the stage is
retried."""

from __future__ import annotations

from typing import Any

from ketch.runners.ray.coordinator import StageTasks
from ketch.runners.ray.flight_shuffle import (
    FlightFetchError,
    FlightPiece,
)
from ketch.runners.ray.shuffle_flight import _pieces


class Recovery:
    """The recovery methods of ``QueryStages`` (stages.py)."""

    def relocate(self, inputs: list[Any] | None) -> list[Any] | None:
        """A task's inputs (None: it reads its own source) with the flight pieces made again
        (after their worker was lost) pointing at their new place."""
        if inputs is None or not self._relocated:
            return inputs
        return [
            [self._relocated.get(p.ticket, p) if isinstance(p, FlightPiece) else p for p in leaf]
            if isinstance(leaf, list)
            else leaf  # None (its own source) or a split row group's SourcePartitions
            for leaf in inputs
        ]

    def recover_hook(self) -> Any:
        """``StageTasks.recover`` for a stage of this query: None until a flight shuffle ran."""
        return self._recover_flight if self._flight_shuffles else None

    def _recover_flight(self, error: BaseException) -> bool:
        """After a task failed to fetch a flight piece (``FlightFetchError``): runs again, on the
        workers alive, every map task of every flight shuffle of the query whose outputs were at
        that address (as a "shuffle map (recompute)" stage each) and points the pieces at the
        new outputs; True when the failed task may run again. Other errors: False."""
        address = getattr(error, "address", None)
        if not isinstance(error, FlightFetchError) or address is None:
            return False
        if address in self._lost_addresses:
            return True  # already made again: the task reads the relocated pieces
        self._lost_addresses.add(address)
        found = False
        for shuffle in self._flight_shuffles:  # in the order they ran: later ones read earlier ones
            lost = [
                m
                for m, pieces in enumerate(shuffle.pieces)
                if any(self._relocated.get(p.ticket, p).address == address for p in pieces)
            ]
            if not lost:
                continue
            found = True
            stat, tasks = self._stage_tasks(
                shuffle.pending, shuffle.buckets, shuffle.keys, "shuffle map (recompute)", None, flight=True
            )
            stat.name += f" [map tasks {lost} lost with {address}]"

            def submit(handle: Any, k: int, run: Any = tasks.submit, lost: list[int] = lost) -> Any:
                return run(handle, lost[k])

            again = StageTasks(stat.name, len(lost), submit, recover=tasks.recover)
            for k, (_, meta) in enumerate(self.coordinator.run(again)):
                self._record(stat, meta, shuffle.buckets)
                for first, new in zip(shuffle.pieces[lost[k]], _pieces(meta, lost[k]), strict=True):
                    self._relocated[first.ticket] = new
        return found
