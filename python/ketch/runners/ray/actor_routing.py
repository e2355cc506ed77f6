"""Sends an actor-pool UDF's batches from an engine worker to the pool's Ray actors.

The client travels inside the UDF's runner in every task's plan fragment (Ray actor handles are
picklable between connected processes). Each batch goes to an idle actor on this node first; when
every local actor is busy, to the actor with the fewest batches in flight from this engine worker
(ties: local first, then the one used longest ago). Daft instead binds each execution state to a
local actor picked round-robin from a random start, blind to load, so a few slow batches can queue
behind one actor while others idle; counting in-flight batches keeps every actor busy, e.g. a
7-row input at batch_size 1 through a 4-actor slow stage uses all 4.

In-flight counts are per engine-worker process (shared by every task and fragment copy there),
not cluster-wide. A call is polled so a cancelled query stops waiting at once (a queued call is
cancelled; one already running finishes in its actor, which stays usable)."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

_POLL_S = 0.1

_in_flight: dict[tuple[str, int], int] = {}  # (pool id, actor index) -> batches in flight here
_last_used: dict[tuple[str, int], int] = {}
_clock = itertools.count()
_lock = threading.Lock()
_node_id: str | None = None


def _current_node() -> str:
    global _node_id
    if _node_id is None:
        import ray

        _node_id = ray.get_runtime_context().get_node_id()
    return _node_id


class UDFActorDied(RuntimeError):
    """A UDF actor died (killed, out of memory, crashed) more times than Ray restarts it."""


@dataclass
class ActorPoolClient:
    """``handles[i]`` runs on node ``node_ids[i]``. ``pool_id`` names the pool (one per UDF per
    query). Picklable; counts live in this module (per process)."""

    pool_id: str
    udf_name: str
    handles: list[Any]
    node_ids: list[str]
    pids: list[int] = field(default_factory=list)

    def pick(self) -> int:
        """The actor the next batch goes to (its in-flight count is raised by one)."""
        here = _current_node()
        with _lock:

            def key(i: int) -> tuple[int, int, int]:
                slot = (self.pool_id, i)
                return (_in_flight.get(slot, 0), self.node_ids[i] != here, _last_used.get(slot, -1))

            chosen = min(range(len(self.handles)), key=key)
            slot = (self.pool_id, chosen)
            _in_flight[slot] = _in_flight.get(slot, 0) + 1
            _last_used[slot] = next(_clock)
        return chosen

    def _done(self, index: int) -> None:
        with _lock:
            slot = (self.pool_id, index)
            _in_flight[slot] = max(0, _in_flight.get(slot, 0) - 1)

    def call(self, args: list[pa.Array], num_rows: int, cancelled: Any = None) -> pa.Array:
        """One batch through an actor: its output array (``num_rows`` long). Raises the UDF's
        own exception (a note names the actor's node), UDFActorDied when its actor is gone for
        good, CallCancelled when ``cancelled()`` turns true while waiting."""
        import ray
        from ray.exceptions import RayActorError, RayError, RayTaskError

        from ketch.execution.call_threads import CallCancelled

        index = self.pick()
        try:
            ref = self.handles[index].eval.remote(args, num_rows)
            while True:
                ready, _ = ray.wait([ref], timeout=_POLL_S)
                if ready:
                    break
                if cancelled is not None and cancelled():
                    ray.cancel(ref)  # a queued call is dropped; a running one finishes there
                    raise CallCancelled()
            failure: BaseException | None = None
            try:
                result = ray.get(ref)
            except RayTaskError as error:
                cause = error.cause if error.cause is not None else error
                if isinstance(cause, RayActorError):
                    failure = self._died(index, cause)
                else:
                    self._note(cause, index)
                    failure = cause
            except RayError as error:  # the actor died (killed, out of memory, its node lost)
                failure = self._died(index, error)
            if failure is not None:
                raise failure  # outside the except: Ray's wrapper is not its __context__
        finally:
            self._done(index)
        if len(result) != num_rows:
            raise RuntimeError(
                f"UDF '{self.udf_name}' returned {len(result)} rows for a batch of {num_rows} "
                f"(actor {index} on node {self.node_ids[index][:8]})"
            )
        return result

    def _note(self, error: BaseException, index: int) -> None:
        try:
            error.add_note(f"UDF actor {index} of {len(self.handles)} ran on node {self.node_ids[index]}")
        except Exception:  # noqa: BLE001
            pass

    def _died(self, index: int, error: BaseException) -> UDFActorDied:
        text = str(error).strip().splitlines()
        reason = next((line for line in text if "died" in line.lower() or "memory" in line.lower()), None)
        reason = reason or (text[0] if text else type(error).__name__)
        return UDFActorDied(
            f"UDF '{self.udf_name}': its actor {index} on node {self.node_ids[index]} "
            f"(pid {self.pids[index] if index < len(self.pids) else '?'}) died and was not "
            f"brought back by Ray's restarts: {type(error).__name__}: {reason}"
        )
