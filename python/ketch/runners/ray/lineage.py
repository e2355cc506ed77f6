"""Stage-level lineage of one query on Ray: which task made each output, so a lost one is made again.

A task's outputs (its tables, or a shuffle map task's buckets) stay in Ray's object store on the
node that ran it, read later by the tasks of the next stage (or by the driver). A killed engine
worker process loses none of them (the node's object store keeps them), but a node that leaves
the cluster loses every object stored there (small objects, which Ray keeps in the driver's
memory, survive). The engine workers are actors with ``max_restarts=0``, so Ray cannot rebuild
those objects itself (``ObjectReconstructionFailedError``); the coordinator does it from this
record instead: for each output (by object id) the stage and task that produced it and the node
it ran on. A lost output's task runs again (on an alive worker, with its own inputs, themselves
made again when lost too), and the refs of its new outputs replace the old ones wherever a task
is submitted later (``resolve``), so each consumer reads every row exactly once.

Only object ids are kept, never the refs themselves, so the record does not keep outputs alive in
the object store after their consumers are done; only the replacement refs are held (few).
A stage whose tasks give different outputs when run again (a random ``repartition(n)``) is not
replayable: losing its outputs raises ``OutputsLost`` (the runner then runs the query again)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.runners.ray.coordinator import StageTasks


class OutputsLost(RuntimeError):
    """An output needed by the query was lost and cannot be made again (no record of its task,
    or its stage is not replayable). The message names the object and the stage."""


@dataclass
class Producer:
    """The task that made some outputs: ``stage``'s task ``index``, run last on ``node_id``;
    ``outputs``: the object ids (hex) of its current outputs, in the task's output order."""

    stage: StageTasks
    index: int
    node_id: str
    outputs: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.stage.name}, partition {self.index}"


def output_refs(output: Any) -> list[Any]:
    """The object refs of one task's output: a list/tuple of refs, or a single ref."""
    if isinstance(output, (list, tuple)):
        return list(output)
    return [output]


class Lineage:
    """The producers of one query's task outputs, and the refs that replace lost ones."""

    def __init__(self) -> None:
        self._by_output: dict[str, Producer] = {}  # object id -> its producer
        self._producers: dict[tuple[int, int], Producer] = {}  # (id(stage), index) -> producer
        self._replaced: dict[str, Any] = {}  # lost object id -> the ref made again in its place
        self.reruns: list[str] = []  # "stage ..., partition i (lost on node n)" per task run again

    def record(self, stage: StageTasks, index: int, output: Any, node_id: str) -> None:
        """Task ``index`` of ``stage`` finished on ``node_id`` with ``output`` (its refs). A task
        run again records its new outputs; the old ids then resolve to the new refs."""
        refs = output_refs(output)
        key = (id(stage), index)
        producer = self._producers.get(key)
        if producer is not None and producer.outputs:
            for old, new in zip(producer.outputs, refs, strict=True):
                if old != new.hex():
                    self._replaced[old] = new
        producer = Producer(stage, index, node_id, [ref.hex() for ref in refs])
        self._producers[key] = producer
        for ref in refs:
            self._by_output[ref.hex()] = producer

    def producer_of(self, object_hex: str) -> Producer | None:
        """The task whose (current or former) output ``object_hex`` is, or None."""
        return self._by_output.get(object_hex)

    def replaced(self, object_hex: str) -> bool:
        """Whether ``object_hex`` was lost and made again (its new ref is what ``resolve`` gives)."""
        return object_hex in self._replaced

    def lost_with(self, producer: Producer, dead_nodes: set[str]) -> list[Producer]:
        """``producer`` and, when its node is gone, every other task of its stage that ran there
        (their outputs are gone too, and the consumer of one usually reads them all: a reduce
        task reads a bucket of every map task)."""
        found = [producer]
        if producer.node_id in dead_nodes:
            for other in self._producers.values():
                same_stage = other.stage is producer.stage and other is not producer
                if same_stage and other.node_id == producer.node_id:
                    found.append(other)
        return sorted(found, key=lambda p: p.index)

    def resolve(self, value: Any) -> Any:
        """``value`` (a task's inputs: refs, (ref, offset, length) slices, nested lists, None)
        with every lost ref replaced by the ref made again in its place; ``value`` itself when
        nothing was ever replaced."""
        if not self._replaced:
            return value
        return self._resolve(value)

    def _resolve(self, value: Any) -> Any:
        from ray import ObjectRef

        if isinstance(value, list):
            return [self._resolve(item) for item in value]
        if isinstance(value, tuple):
            return tuple(self._resolve(item) for item in value)
        if not isinstance(value, ObjectRef):
            return value
        for _ in range(len(self._replaced)):  # a chain: made again, then lost and made again
            replacement = self._replaced.get(value.hex())
            if replacement is None:
                break
            value = replacement
        return value
