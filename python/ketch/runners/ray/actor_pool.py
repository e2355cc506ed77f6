"""Actor-pool UDFs on the Ray runner: the driver's side (plan-time checks, start, readiness, stop).

On the Ray runner a class UDF that asks for ``concurrency`` / ``max_concurrency`` or for GPUs
(``@ketch.cls`` or a legacy ``@ketch.udf`` class; not async) runs as a pool of Ray actors
(``udf_actor.UDFActor``), one instance each, instead of inside the engine workers, as in Daft's
Flotilla. Before the query's tasks are cut, each pool's actors are started with the UDF's
resources (``cpus`` → ``num_cpus``; without it Ray's actor default, as in Daft: placed on a
node with a CPU, none held while it runs, so a pool larger than the cores still starts; ``gpus`` →
``num_gpus``, fractions allowed; ``memory_bytes`` → ``memory``; ``ray_options`` last, e.g.
``resources`` or ``runtime_env``), ``max_restarts=4`` and ``max_task_retries=4`` (Daft's
defaults; ``ray_options`` may override), spread over the nodes. The driver waits for them up to
``actor_udf_ready_timeout`` seconds (execution config, default 120), then the UDF's runner carries
an ``ActorPoolClient`` (actor_routing.py) into every task's fragment and the engine workers send
batches to the actors. After a successful query its pools stay alive for
``actor_udf_idle_timeout`` seconds (execution config, default 300) in the runner's ``WarmPools``:
the next query with the same UDF (the same pickled class, init arguments and options) and the
same resource request takes them over and does not run ``__init__`` (load its model) again. A
failed or cancelled query's actors are killed; a query that starts new pools first stops the idle
ones it does not reuse (they hold cluster resources); ``ketch.runners.close_actor_pools()`` stops
the idle ones at once.

Plan-time checks, against the alive nodes' total resources: a per-actor request that no node can
hold raises ValueError with the numbers; a pool larger than what is left of the cluster after the
query's earlier pools starts the actors that fit, warns (``warnings.warn`` and the log) and runs
with them, never waiting silently. Without ``concurrency``, a GPU pool gets one actor per GPU
share of the cluster (``gpus=0.5`` on 2 GPUs: 4 actors)."""

from __future__ import annotations

import hashlib
import logging
import math
import threading
import time
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any

from ketch.runners.ray.actor_routing import ActorPoolClient

_log = logging.getLogger("ketch.ray")
DEFAULT_MAX_RESTARTS = 4
DEFAULT_MAX_TASK_RETRIES = 4


@dataclass(frozen=True)
class ActorRequest:
    """What a class UDF asks of its actors (set by ``ketch.udf`` on the runner)."""

    concurrency: int | None
    num_cpus: float | None
    num_gpus: float
    memory_bytes: int | None
    ray_options: dict[str, Any] = field(default_factory=dict)

    def per_actor(self) -> dict[str, float]:
        """Resources one actor reserves, in Ray's names (memory in bytes)."""
        # Without cpus=, Ray's actor default: placed on a node with a CPU, holding none while it runs.
        wanted: dict[str, float] = {"CPU": 0.0 if self.num_cpus is None else float(self.num_cpus)}
        if self.num_gpus:
            wanted["GPU"] = float(self.num_gpus)
        if self.memory_bytes:
            wanted["memory"] = float(self.memory_bytes)
        for name, amount in (self.ray_options.get("resources") or {}).items():
            wanted[name] = float(amount)
        for ray_name, option in (("CPU", "num_cpus"), ("GPU", "num_gpus"), ("memory", "memory")):
            if option in self.ray_options:
                wanted[ray_name] = float(self.ray_options[option])
        return {k: v for k, v in wanted.items() if v > 0}

    def describe(self) -> str:
        parts = [f"{k.lower() if k in ('CPU', 'GPU') else k} {v:g}" for k, v in self.per_actor().items()]
        return ", ".join(parts) or "Ray's default resources"


def _fits(per_actor: dict[str, float], free: dict[str, float]) -> int:
    """How many actors needing ``per_actor`` fit into ``free``."""
    counts = [math.floor(free.get(k, 0.0) / v + 1e-9) for k, v in per_actor.items() if v > 0]
    return min(counts) if counts else 1 << 30


def plan_pool_size(
    name: str,
    request: ActorRequest,
    total_per_node: dict[str, dict[str, float]],
    free_per_node: dict[str, dict[str, float]],
) -> tuple[int, int]:
    """(actors wanted, actors that fit now) for one pool; takes what fits from ``free_per_node``
    (what earlier pools left of ``total_per_node``). Raises ValueError naming the numbers when no
    node can hold one actor."""
    per_actor = request.per_actor()
    if not any(_fits(per_actor, total) >= 1 for total in total_per_node.values()):
        nodes = "; ".join(
            f"node {node[:8]}: {', '.join(f'{k} {res.get(k, 0.0):g}' for k in sorted(per_actor))}"
            for node, res in total_per_node.items()
        )
        raise ValueError(
            f"UDF '{name}' asks for {request.describe()} per actor, but no node of the Ray cluster "
            f"can hold one ({nodes or 'no alive nodes'})"
        )
    wanted = request.concurrency
    if wanted is None:
        gpus = sum(res.get("GPU", 0.0) for res in total_per_node.values())
        wanted = max(1, int(gpus // request.num_gpus)) if request.num_gpus and gpus else 1
    placed = 0
    for free in free_per_node.values():
        n = min(_fits(per_actor, free), wanted - placed)
        for k, v in per_actor.items():
            free[k] = free.get(k, 0.0) - n * v
        placed += n
        if placed >= wanted:
            break
    return wanted, placed


@dataclass
class _Pool:
    runner: Any
    client: ActorPoolClient
    request: ActorRequest
    key: tuple = ()


def pool_key(payload: bytes, request: ActorRequest) -> tuple:
    """What makes two pools interchangeable: the UDF's pickled factory (its class or function,
    init arguments and options) and the resources asked for."""
    options = repr(sorted(request.ray_options.items(), key=lambda kv: kv[0]))
    return (
        hashlib.sha256(payload).hexdigest(),
        request.concurrency,
        request.num_cpus,
        request.num_gpus,
        request.memory_bytes,
        options,
    )


@dataclass
class _Idle:
    client: ActorPoolClient
    since: float


def _all_alive(client: ActorPoolClient, timeout_s: float = 30.0) -> bool:
    """Whether every actor of an idle pool still answers (``ready``) within ``timeout_s``."""
    import ray

    refs = [handle.ready.remote() for handle in client.handles]
    try:
        done, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout_s)
        if len(done) < len(refs):
            return False
        ray.get(done)
    except Exception:  # noqa: BLE001 - RayActorError: dead
        return False
    return True


def _kill(handles: list[Any]) -> None:
    import ray

    for handle in handles:
        try:
            ray.kill(handle, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass


class WarmPools:
    """The idle actor pools of one Ray runner, kept for the next query (see the module doc).
    Thread-safe; a daemon timer stops a pool ``idle_timeout_s`` after it was put back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[tuple, list[_Idle]] = {}
        self._timers: list[threading.Timer] = []
        self.reused = 0  # pools taken over by a later query (explain_analyze, tests)

    def take(self, key: tuple) -> ActorPoolClient | None:
        """An idle pool for ``key`` (the longest idle first), or None."""
        with self._lock:
            pools = self._idle.get(key)
            if not pools:
                return None
            idle = pools.pop(0)
            if not pools:
                del self._idle[key]
            return idle.client

    def put(self, key: tuple, client: ActorPoolClient, idle_timeout_s: float) -> None:
        """Keeps ``client``'s actors for ``idle_timeout_s`` seconds (0: stops them now)."""
        if idle_timeout_s <= 0:
            _kill(client.handles)
            return
        with self._lock:
            self._idle.setdefault(key, []).append(_Idle(client, time.monotonic()))
            timer = threading.Timer(idle_timeout_s + 0.05, self.expire, args=(idle_timeout_s,))
            timer.daemon = True
            self._timers = [t for t in self._timers if t.is_alive()] + [timer]
        timer.start()

    def expire(self, idle_timeout_s: float) -> None:
        """Stops the pools idle for ``idle_timeout_s`` seconds or more."""
        now = time.monotonic()
        doomed = []
        with self._lock:
            for key in list(self._idle):
                keep = [p for p in self._idle[key] if now - p.since < idle_timeout_s]
                doomed += [p for p in self._idle[key] if now - p.since >= idle_timeout_s]
                if keep:
                    self._idle[key] = keep
                else:
                    del self._idle[key]
        for pool in doomed:
            _kill(pool.client.handles)

    def evict(self, keep: set[tuple] | None = None) -> int:
        """Stops the idle pools whose key is not in ``keep`` (all when None); how many."""
        keep = keep or set()
        with self._lock:
            doomed = [p for key, pools in self._idle.items() if key not in keep for p in pools]
            self._idle = {key: pools for key, pools in self._idle.items() if key in keep}
        for pool in doomed:
            _kill(pool.client.handles)
        return len(doomed)

    def close(self) -> int:
        """Stops every idle pool and its timers; how many pools were stopped."""
        with self._lock:
            timers, self._timers = self._timers, []
        for timer in timers:
            timer.cancel()
        return self.evict()

    def __len__(self) -> int:
        with self._lock:
            return sum(len(pools) for pools in self._idle.values())


class ActorPools:
    """The actor pools of one query: ``start()`` before the stages run, ``stop()`` after."""

    def __init__(
        self,
        plan: Any,
        ready_timeout_s: float,
        warm: WarmPools | None = None,
        idle_timeout_s: float = 0.0,
    ) -> None:
        self.ready_timeout_s = ready_timeout_s
        self.warm = warm
        self.idle_timeout_s = idle_timeout_s
        self.pools: list[_Pool] = []
        seen: set[int] = set()
        self._runners = []
        for runner in plan.udf_runners():
            if getattr(runner, "actor_request", None) is not None and id(runner) not in seen:
                seen.add(id(runner))
                self._runners.append(runner)

    def __bool__(self) -> bool:
        return bool(self._runners)

    def start(self) -> None:
        """Starts every pool's actors and waits for them (see the module doc). Raises the user's
        ``__init__`` exception as UDFError, TimeoutError when no actor of a pool got ready in
        ``actor_udf_ready_timeout`` seconds, ValueError for a request no node can hold."""
        import ray

        from ketch.runners.ray.udf_actor import UDFActor

        totals = {
            n["NodeID"]: {k: float(v) for k, v in n.get("Resources", {}).items()}
            for n in ray.nodes()
            if n["Alive"]
        }
        free = {node: dict(res) for node, res in totals.items()}
        starting = []
        reused: list[tuple[Any, ActorRequest, tuple, ActorPoolClient]] = []
        planned = []
        for runner in self._runners:
            request: ActorRequest = runner.actor_request
            payload = _payload(runner)
            key = pool_key(payload, request)
            warm = self.warm.take(key) if self.warm is not None else None
            if warm is not None and not _all_alive(warm):
                _kill(warm.handles)  # an actor died while idle (its node left): start afresh
                warm = None
            planned.append((runner, request, payload, key, warm))
        if self.warm is not None and any(warm is None for *_, warm in planned):
            # New actors are about to ask for resources: idle pools this query does not reuse
            # give theirs back first.
            self.warm.evict()
        try:
            for runner, request, payload, key, warm in planned:
                wanted, fit = plan_pool_size(runner.name, request, totals, free)
                if warm is not None:
                    reused.append((runner, request, key, warm))
                    continue
                count = max(1, min(wanted, fit))
                if fit < wanted:
                    message = (
                        f"UDF '{runner.name}' asks for {wanted} actors with {request.describe()} each; "
                        f"the Ray cluster has room for {fit} next to this query's other pools: "
                        f"running with {count}" + (" (it waits for resources to free up)" if fit == 0 else "")
                    )
                    warnings.warn(message, stacklevel=3)
                    _log.warning(message)
                options: dict[str, Any] = {
                    "max_restarts": DEFAULT_MAX_RESTARTS,
                    "max_task_retries": DEFAULT_MAX_TASK_RETRIES,
                    "max_concurrency": 1,
                    "scheduling_strategy": "SPREAD",
                }
                if request.num_cpus is not None:
                    options["num_cpus"] = request.num_cpus
                if request.num_gpus:
                    options["num_gpus"] = request.num_gpus
                if request.memory_bytes:
                    options["memory"] = request.memory_bytes
                options.update(request.ray_options)
                actor_class = ray.remote(UDFActor).options(name=None, **options)
                handles = [actor_class.remote(payload, runner.name) for _ in range(count)]
                starting.append((runner, request, key, handles))
            for runner, request, key, client in reused:
                pool = _Pool(runner, client, request, key)
                self.pools.append(pool)
                if self.warm is not None:
                    self.warm.reused += 1
            for runner, request, key, handles in starting:
                pool = self._wait_ready(runner, request, handles)
                pool.key = key
                self.pools.append(pool)
        except BaseException:
            for _, _, _, handles in starting:
                _kill(handles)
            for _, _, _, client in reused:
                _kill(client.handles)
            for pool in self.pools:
                _kill(pool.client.handles)
            self.pools = []
            raise
        for pool in self.pools:
            pool.runner.actor_pool = pool.client

    def _wait_ready(self, runner: Any, request: ActorRequest, handles: list[Any]) -> _Pool:
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        from ketch.errors import UDFError

        refs = {handle.ready.remote(): handle for handle in handles}
        infos: dict[Any, dict[str, Any]] = {}
        deadline = time.monotonic() + self.ready_timeout_s
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            try:
                infos[refs[ready[0]]] = ray.get(ready[0])
            except RayTaskError as error:
                cause = error.cause if error.cause is not None else error
                raise UDFError(f"UDF '{runner.name}' failed: {type(cause).__name__}: {cause}") from cause
            except RayActorError as error:
                raise UDFError(
                    f"UDF '{runner.name}': an actor of its pool died while starting: {error}"
                ) from None
        alive = [h for h in handles if h in infos]
        if not alive:
            raise TimeoutError(
                f"UDF '{runner.name}': none of its {len(handles)} actors ({request.describe()} each) "
                f"was ready within actor_udf_ready_timeout={self.ready_timeout_s:g} s; raise it with "
                "ketch.set_execution_config(actor_udf_ready_timeout=...) or ask for fewer resources"
            )
        if len(alive) < len(handles):
            message = (
                f"UDF '{runner.name}': {len(alive)} of {len(handles)} actors were ready within "
                f"actor_udf_ready_timeout={self.ready_timeout_s:g} s; running with those"
            )
            warnings.warn(message, stacklevel=4)
            _log.warning(message)
            for handle in handles:
                if handle not in infos:
                    ray.kill(handle, no_restart=True)
        client = ActorPoolClient(
            pool_id=uuid.uuid4().hex,
            udf_name=runner.name,
            handles=alive,
            node_ids=[infos[h]["node_id"] for h in alive],
            pids=[infos[h]["pid"] for h in alive],
        )
        return _Pool(runner, client, request)

    def stop(self, succeeded: bool = False) -> None:
        """Detaches the pools from their runners; after a successful query they go to the warm
        pools (when there are and ``idle_timeout_s`` > 0), otherwise their actors are killed."""
        for pool in self.pools:
            pool.runner.actor_pool = None
            if succeeded and self.warm is not None and self.idle_timeout_s > 0:
                self.warm.put(pool.key, pool.client, self.idle_timeout_s)
            else:
                _kill(pool.client.handles)
        self.pools = []


def _payload(runner: Any) -> bytes:
    """The cloudpickled factory an actor builds the UDF from (as a worker process would)."""
    process = getattr(runner, "process", None)
    if process is not None:
        return process.payload
    import cloudpickle

    try:
        return cloudpickle.dumps(runner.worker_factory())
    except Exception as exc:
        raise TypeError(
            f"UDF '{runner.name}' cannot run as a Ray actor pool: it cannot be pickled: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def describe_pools(plan: Any, cluster_gpus: float | None = None) -> list[str]:
    """One explain line per actor-pool UDF of ``plan``: its pool size and resources per actor."""
    lines = []
    seen: set[int] = set()
    for runner in plan.udf_runners():
        request = getattr(runner, "actor_request", None)
        if request is None or id(runner) in seen:
            continue
        seen.add(id(runner))
        size: Any = request.concurrency
        if size is None:
            size = max(1, int(cluster_gpus // request.num_gpus)) if request.num_gpus and cluster_gpus else 1
        lines.append(f"* ActorUDF: {runner.name} (actor pool: {size} actors, {request.describe()} each)")
    return lines
