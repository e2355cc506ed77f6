"""The coordinator: runs one stage's tasks over the engine workers, on the driver.

Each worker gets at most ``max_task_backlog`` tasks at a time, the least loaded first (or the
worker of the node a task's inputs live on, when the stage names one and it has room), so tasks
spread over the nodes and a slow node never queues more than its backlog. Results come back in
task order (a task that finishes early waits in a buffer), so partitions keep their order. A
worker that dies (its process killed, its node lost) has its tasks run again on the others, up to
``max_attempts`` times per task; a replacement worker is started on the node when the node is
still alive. An output lost with its node (a task's input, or an output the driver reads) is made
again by running the task that made it once more (lineage.py), and the task that needed it runs
again reading the new one. A task that raises fails the query with the original exception type,
its message naming the stage and the partition; one whose worker died ``max_attempts`` times
fails it with ``StageFailed`` naming the stage, the partition and the nodes it died on. A death
counts against the task the worker was running (the oldest one it had not finished: an engine
worker runs its tasks one at a time in submission order), not against the ones queued behind it,
which run again elsewhere without losing an attempt. A task
whose stage's ``recover`` hook repairs its error (the flight shuffle makes lost map outputs again)
runs again too."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ketch.runners.ray.lineage import Lineage, OutputsLost, Producer, output_refs

log = logging.getLogger(__name__)


@dataclass
class WorkerSlot:
    handle: Any
    node_id: str
    alive: bool = True
    in_flight: int = 0
    # When the worker died: the submission number of the task it was running (an engine worker
    # runs its tasks one at a time, in submission order), the only one the death counts against.
    died_running: int | None = None


@dataclass
class StageTasks:
    """One stage's tasks. ``submit(worker_handle, index)`` starts task ``index`` on that engine
    worker and returns (ref of its small metadata, what the task yields: e.g. the refs of its
    output tables, which stay in the object store); the task is done when the metadata is."""

    name: str  # e.g. "stage 1 (map: Scan -> Project)"
    num_tasks: int
    submit: Callable[[Any, int], tuple[Any, Any]]
    # Per task, the node whose worker should run it (its inputs live there), or None. Soft: when
    # that worker is full or gone, the least loaded one runs it.
    preferred_nodes: list[str | None] | None = None
    # Called with the original exception of a task that raised: True when the cause was repaired
    # (the flight shuffle's lost map outputs made again) and the task may run again.
    recover: Callable[[BaseException], bool] | None = None
    # False when a task run again may give different outputs (a random shuffle's map tasks):
    # a lost output of such a stage cannot be made again (lineage.OutputsLost).
    replayable: bool = True


class StageFailed(RuntimeError):
    pass


@dataclass
class Upstream:
    """A stage that feeds a pipelined one (``Coordinator.run(stage, upstream)``). ``release(i,
    output, metadata)`` is called for each of its tasks in task order and returns how many tasks
    of the fed stage can start now (a running count); ``release(None, None, None)`` after the
    last returns the fed stage's final task count."""

    stage: StageTasks
    release: Callable[[int | None, Any, Any], int]


class _Lane:
    """One stage's task bookkeeping inside ``Coordinator.run``: ``total`` None while unknown."""

    def __init__(self, stage: StageTasks, total: int | None) -> None:
        self.stage = stage
        self.total = total
        self.released = total or 0
        self.pending: deque[int] = deque(range(total or 0))
        self.done: dict[int, Any] = {}
        self.next_out = 0
        self.attempts: dict[int, int] = {}
        self.died_on: dict[int, list[str]] = {}  # task -> the nodes its engine worker died on


def _lost_object(error: BaseException) -> str | None:
    """The object id (hex) of the lost object ``error`` reports (directly, or as the cause of a
    task's error: a task reading a lost input), or None when it is about something else."""
    from ray.exceptions import ObjectLostError, RayTaskError

    cause = error.cause if isinstance(error, RayTaskError) and error.cause is not None else error
    if isinstance(cause, ObjectLostError):
        return str(cause.object_ref_hex)
    if isinstance(error, ObjectLostError):
        return str(error.object_ref_hex)
    return None


def _running_when_died(slot: WorkerSlot, seq: int, in_flight: dict[Any, tuple[Any, ...]]) -> int:
    """The submission number of the task ``slot``'s worker was running when it died, told by the
    failed task ``seq``: the oldest of the slot's tasks that did not finish (a task that finished
    before the death has a ready, successful result; the worker runs tasks in submission order)."""
    import ray

    others = {ref: entry[4] for ref, entry in in_flight.items() if entry[2] is slot}
    unfinished = [seq]
    if others:
        ready, not_ready = ray.wait(list(others), num_returns=len(others), timeout=0)
        unfinished += [others[ref] for ref in not_ready]
        for ref in ready:
            try:
                ray.get(ref, timeout=0)
            except Exception:  # noqa: BLE001 - failed with the worker: it did not finish
                unfinished.append(others[ref])
    return min(unfinished)


def _discard(output: Any) -> None:
    """Reads the errors a failed task left in its outputs' refs (the task runs again), so Ray does
    not log each of them as an unhandled error when the refs are dropped."""
    import ray

    try:
        ray.get(output_refs(output), timeout=5)
    except Exception:  # noqa: BLE001 - the errors are expected: the task failed
        pass


def _recovered(stage: StageTasks, error: Any) -> bool:
    """Whether ``stage``'s ``recover`` hook repaired the cause of a task's ``error``."""
    cause = error.cause if error.cause is not None else error
    return stage.recover is not None and bool(stage.recover(cause))


def _nodes(node_ids: list[str]) -> str:
    return ", ".join(node_ids) if node_ids else "none"


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
        self.abandoned: list[Any] = []  # tasks still running when the last stage stopped
        self.lineage = Lineage()  # which task made each output, to make lost ones again
        self._submitted = 0  # tasks submitted so far: each in-flight task's submission number

    def run(self, stage: StageTasks, upstream: Upstream | None = None) -> Iterator[tuple[Any, Any]]:
        """Yields each task's (output, metadata) in task order as soon as it and all before it are
        done. With ``upstream``, the stage is pipelined behind another one: the upstream stage's
        tasks run at the same time, and as each of its tasks completes (in order) ``release``
        says how many of this stage's tasks can now start; ``stage.num_tasks`` is then only known
        when the upstream stage is done. This stage's tasks go first when both wait for a worker,
        so finished upstream outputs do not pile up."""
        import ray
        from ray.exceptions import ActorUnschedulableError, RayActorError, RayTaskError

        down = _Lane(stage, stage.num_tasks if upstream is None else None)
        lanes = [down]
        up: _Lane | None = None
        if upstream is not None:
            up = _Lane(upstream.stage, upstream.stage.num_tasks)
            lanes.append(up)
        in_flight: dict[Any, tuple[_Lane, int, WorkerSlot, Any, int]] = {}
        try:
            while down.total is None or down.next_out < down.total:
                for lane in lanes:  # this stage first, then the one feeding it
                    self._submit(lane, in_flight)
                if not in_flight:
                    raise StageFailed(f"{stage.name}: no engine worker is alive to run the remaining tasks")
                ready, _ = ray.wait(list(in_flight), num_returns=1)
                ref = ready[0]
                lane, index, slot, output, seq = in_flight.pop(ref)
                slot.in_flight -= 1
                try:
                    lane.done[index] = (output, ray.get(ref))
                    self.tasks_per_node[slot.node_id] = self.tasks_per_node.get(slot.node_id, 0) + 1
                    self.lineage.record(lane.stage, index, output, slot.node_id)
                except (RayTaskError, RayActorError, ActorUnschedulableError) as error:
                    total = lane.total if lane.total is not None else "?"
                    where = f"{lane.stage.name}, partition {index} of {total}"
                    lost = _lost_object(error)
                    if lost is not None or not isinstance(error, RayTaskError):
                        _discard(output)
                    if lost is not None:
                        # An input was lost with its node: make it again, then run this task again.
                        if not self._recover(lost, where):
                            self._count_attempt(lane, index, where, f"its input {lost} stayed lost")
                        lane.pending.appendleft(index)
                    elif isinstance(error, RayTaskError) and _recovered(lane.stage, error):
                        # A flight shuffle input lost with its worker, made again: run it again.
                        _discard(output)
                        self._count_attempt(lane, index, where, "its flight shuffle input was lost")
                        lane.pending.appendleft(index)
                    elif isinstance(error, RayTaskError):
                        cause = error.cause if error.cause is not None else error
                        original = getattr(cause, "udf_cause", None)  # a UDF's own exception (worker.py)
                        raise _with_context(cause, where) from (original if original is not None else cause)
                    else:
                        # The worker died with this task (and maybe others) in flight: run it again
                        # elsewhere; the death counts only against the task it was running.
                        if slot.alive:
                            slot.died_running = _running_when_died(slot, seq, in_flight)
                        self._lost(slot)
                        if seq == slot.died_running:
                            lane.died_on.setdefault(index, []).append(slot.node_id)
                            self._count_attempt(lane, index, where, "its engine worker died")
                        lane.pending.appendleft(index)
                if up is not None:
                    while up.next_out in up.done:
                        up_output, up_meta = up.done.pop(up.next_out)
                        self._release(down, upstream.release(up.next_out, up_output, up_meta))  # type: ignore[union-attr]
                        up.next_out += 1
                    if up.next_out == up.total and down.total is None:
                        down.total = upstream.release(None, None, None)  # type: ignore[union-attr]
                        self._release(down, down.total)
                        stage.num_tasks = down.total
                while down.next_out in down.done:
                    yield down.done.pop(down.next_out)
                    down.next_out += 1
        finally:
            for ref in in_flight:
                ray.cancel(ref, force=False)
            self.abandoned = list(in_flight)

    @staticmethod
    def _release(lane: _Lane, known: int) -> None:
        """Tasks up to ``known`` of ``lane`` may start now."""
        while lane.released < known:
            lane.pending.append(lane.released)
            lane.released += 1

    def drain_abandoned(self, timeout_s: float = 300.0) -> None:
        """Waits (up to ``timeout_s``) for the tasks the last stopped stage left running (a
        running actor task cannot be cancelled) and drops their results or errors, so nothing
        still writes when the caller cleans up (a failed write's staging directory)."""
        import ray

        abandoned, self.abandoned = self.abandoned, []
        if not abandoned:
            return
        ready, _ = ray.wait(abandoned, num_returns=len(abandoned), timeout=timeout_s)
        for ref in ready:
            try:
                ray.get(ref)
            except Exception:  # noqa: BLE001 - the query already failed with the first error
                pass

    def _submit(self, lane: _Lane, in_flight: dict[Any, tuple[_Lane, int, WorkerSlot, Any, int]]) -> None:
        stage = lane.stage
        while lane.pending:
            alive = [w for w in self.workers if w.alive and w.in_flight < self.max_task_backlog]
            if not alive:
                return
            index = lane.pending.popleft()
            preferred = stage.preferred_nodes[index] if stage.preferred_nodes else None
            local = [w for w in alive if w.node_id == preferred]
            slot = min(local or alive, key=lambda w: w.in_flight)
            ref, output = stage.submit(slot.handle, index)
            slot.in_flight += 1
            self._submitted += 1
            in_flight[ref] = (lane, index, slot, output, self._submitted)

    def _count_attempt(self, lane: _Lane, index: int, where: str, why: str) -> None:
        """One more failed attempt of ``lane``'s task ``index``; StageFailed (naming the stage,
        the partition and the nodes its workers died on) once it failed ``max_attempts`` times."""
        lane.attempts[index] = lane.attempts.get(index, 0) + 1
        if lane.attempts[index] >= self.max_attempts:
            died_on = lane.died_on.get(index, [])
            nodes = f"; its engine worker died on node(s) {_nodes(died_on)}" if died_on else ""
            raise StageFailed(f"{where}: failed {lane.attempts[index]} times ({why}){nodes}") from None

    def _lost(self, slot: WorkerSlot) -> None:
        if not slot.alive:
            return
        slot.alive = False
        replacement = self.restart_worker(slot.node_id)
        if replacement is not None:
            self.workers.append(WorkerSlot(replacement, slot.node_id))

    # -- outputs lost with their node ----------------------------------------------------------------
    def get(self, refs: list[Any]) -> list[Any]:
        """``ray.get(refs)`` for the driver's reads of task outputs: an output lost with its node
        is made again first (``_recover``); OutputsLost when that is impossible."""
        import ray

        for _ in range(self.max_attempts):
            try:
                return list(ray.get(self.lineage.resolve(refs)))
            except Exception as error:  # noqa: BLE001 - only lost objects are handled here
                lost = _lost_object(error)
                if lost is None:
                    raise
                producer = self.lineage.producer_of(lost)
                self._recover(lost, producer.where if producer else "the driver reading an output")
        raise StageFailed(f"the driver could not read {len(refs)} task output(s): lost {self.max_attempts}x")

    def _recover(self, lost: str, where: str) -> bool:
        """Makes the lost object ``lost`` (hex id) again: the task that made it runs again, and so
        do the other tasks of its stage that ran on the same node when that node is gone. False
        when it was already made again (a task submitted before that reads the old ref: it just
        runs again). Raises OutputsLost when no task of this query made it, or its stage is not
        replayable."""
        if self.lineage.replaced(lost):
            return False
        producer = self.lineage.producer_of(lost)
        if producer is None:
            raise OutputsLost(
                f"{where}: its input object {lost} was lost (its node left the cluster?) and no task "
                "of this query made it, so it cannot be made again"
            )
        if not producer.stage.replayable:
            raise OutputsLost(
                f"{where}: the output of {producer.where} was lost with node {producer.node_id}, and "
                "that stage gives other rows when run again (a random shuffle)"
            )
        for task in self.lineage.lost_with(producer, self._dead_nodes()):
            self._rerun(task)
        return True

    def _rerun(self, producer: Producer) -> None:
        """Runs ``producer``'s task again on the least loaded alive worker (its own lost inputs
        made again first) and records its new outputs, which replace the lost ones."""
        import ray
        from ray.exceptions import ActorUnschedulableError, RayActorError, RayTaskError

        where = f"{producer.where} (run again: its output was lost with node {producer.node_id})"
        died_on: list[str] = []
        for _ in range(self.max_attempts):
            alive = [w for w in self.workers if w.alive]
            if not alive:
                raise StageFailed(f"{where}: no engine worker is alive to run it")
            slot = min(alive, key=lambda w: w.in_flight)
            meta, output = producer.stage.submit(slot.handle, producer.index)
            slot.in_flight += 1
            try:
                ray.get(meta)
            except (RayTaskError, RayActorError, ActorUnschedulableError) as error:
                lost = _lost_object(error)
                if lost is not None or not isinstance(error, RayTaskError):
                    _discard(output)
                if lost is not None:
                    self._recover(lost, where)
                elif isinstance(error, RayTaskError):
                    cause = error.cause if error.cause is not None else error
                    raise _with_context(cause, where) from cause
                else:
                    self._lost(slot)
                    died_on.append(slot.node_id)
                continue
            finally:
                slot.in_flight -= 1
            self.lineage.record(producer.stage, producer.index, output, slot.node_id)
            self.tasks_per_node[slot.node_id] = self.tasks_per_node.get(slot.node_id, 0) + 1
            self.lineage.reruns.append(where)
            log.warning("ketch: %s: ran it again on node %s", where, slot.node_id)
            return
        raise StageFailed(
            f"{where}: failed {self.max_attempts} times; its engine worker died on node(s) {_nodes(died_on)}"
        )

    @staticmethod
    def _dead_nodes() -> set[str]:
        import ray

        return {node["NodeID"] for node in ray.nodes() if not node["Alive"]}
