"""The coordinator: runs one stage's tasks over the engine workers, on the driver.

Each worker gets at most ``max_task_backlog`` tasks at a time, the least loaded first, so tasks
spread over the nodes and a slow node never queues more than its backlog. Results come back in
task order (a task that finishes early waits in a buffer), so partitions keep their order. A
worker that dies (its process killed, its node lost) has its tasks run again on the others, up to
``max_attempts`` times per task; a replacement worker is started on the node when the node is
still alive. A task that raises fails the query with the original exception type, its message
naming the stage and the partition."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class WorkerSlot:
    handle: Any
    node_id: str
    alive: bool = True
    in_flight: int = 0


@dataclass
class StageTasks:
    """One stage's tasks. ``submit(worker_handle, index)`` starts task ``index`` on that engine
    worker and returns (ref of its small metadata, what the task yields: e.g. the refs of its
    output tables, which stay in the object store); the task is done when the metadata is."""

    name: str  # e.g. "stage 1 (map: Scan -> Project)"
    num_tasks: int
    submit: Callable[[Any, int], tuple[Any, Any]]
    attempts: list[int] = field(default_factory=list)


class StageFailed(RuntimeError):
    pass


def _with_context(error: BaseException, where: str) -> BaseException:
    """The same exception type with ``where`` added to its message (when the type allows)."""
    try:
        wrapped = type(error)(f"{error} [{where}]")
    except Exception:  # noqa: BLE001 - an exception type with another constructor
        return StageFailed(f"{type(error).__name__}: {error} [{where}]")
    return wrapped


class Coordinator:
    def __init__(
        self,
        workers: list[WorkerSlot],
        max_task_backlog: int,
        restart_worker: Callable[[str], Any | None],
        max_attempts: int = 4,
    ) -> None:
        self.workers = workers
        self.max_task_backlog = max(1, max_task_backlog)
        self.restart_worker = restart_worker
        self.max_attempts = max_attempts
        self.tasks_per_node: dict[str, int] = {}

    def run(self, stage: StageTasks) -> Iterator[tuple[Any, Any]]:
        """Yields each task's (output, metadata) in task order as soon as it and all before it are
        done."""
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        n = stage.num_tasks
        stage.attempts = [0] * n
        pending: deque[int] = deque(range(n))
        in_flight: dict[Any, tuple[int, WorkerSlot, Any]] = {}
        done: dict[int, Any] = {}
        next_out = 0
        try:
            while next_out < n:
                self._submit(stage, pending, in_flight)
                if not in_flight:
                    raise StageFailed(f"{stage.name}: no engine worker is alive to run the remaining tasks")
                ready, _ = ray.wait(list(in_flight), num_returns=1)
                ref = ready[0]
                index, slot, output = in_flight.pop(ref)
                slot.in_flight -= 1
                try:
                    done[index] = (output, ray.get(ref))
                    self.tasks_per_node[slot.node_id] = self.tasks_per_node.get(slot.node_id, 0) + 1
                except RayTaskError as error:
                    cause = error.cause if error.cause is not None else error
                    original = getattr(cause, "udf_cause", None)  # a UDF's own exception (worker.py)
                    raise _with_context(cause, f"{stage.name}, partition {index} of {n}") from (
                        original if original is not None else cause
                    )
                except RayActorError:
                    # The worker died with this task (and maybe others) in flight: run it again elsewhere.
                    self._lost(slot)
                    stage.attempts[index] += 1
                    if stage.attempts[index] >= self.max_attempts:
                        raise StageFailed(
                            f"{stage.name}, partition {index} of {n}: its engine worker died "
                            f"{stage.attempts[index]} times"
                        ) from None
                    pending.appendleft(index)
                while next_out in done:
                    yield done.pop(next_out)
                    next_out += 1
        finally:
            for ref in in_flight:
                ray.cancel(ref, force=False)

    def _submit(
        self, stage: StageTasks, pending: deque[int], in_flight: dict[Any, tuple[int, WorkerSlot, Any]]
    ) -> None:
        while pending:
            alive = [w for w in self.workers if w.alive and w.in_flight < self.max_task_backlog]
            if not alive:
                return
            slot = min(alive, key=lambda w: w.in_flight)
            index = pending.popleft()
            ref, output = stage.submit(slot.handle, index)
            slot.in_flight += 1
            in_flight[ref] = (index, slot, output)

    def _lost(self, slot: WorkerSlot) -> None:
        if not slot.alive:
            return
        slot.alive = False
        replacement = self.restart_worker(slot.node_id)
        if replacement is not None:
            self.workers.append(WorkerSlot(replacement, slot.node_id))
