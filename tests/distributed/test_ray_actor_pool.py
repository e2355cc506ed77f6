"""Actor-pool UDFs on the Ray runner (3-node local cluster; the two non-head nodes declare one fake
GPU and one "accel" unit each): one Ray actor per instance with ``__init__`` once per actor,
GPU/custom resources placed by Ray, local-first / least-loaded routing, restarts of killed actors,
``__init__`` failures with the user's exception, timeouts, plan-time resource checks, explain."""

from __future__ import annotations

import os
import re
import signal
import threading
from collections import Counter

import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.errors import UDFError

pytestmark = pytest.mark.ray_runner


@pytest.fixture(autouse=True)
def _by_value(request):
    """UDF classes of this module travel by value (Ray's processes cannot import test modules)."""
    import sys

    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _where() -> dict:
    import ray

    context = ray.get_runtime_context()
    return {
        "pid": os.getpid(),
        "node": context.get_node_id(),
        "actor": context.get_actor_id() or "",
        "cuda": os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>"),
    }


def _tag_rows(n: int, partitions: int = 4) -> ketch.DataFrame:
    return ketch.from_pydict({"x": list(range(n))}).into_partitions(partitions).collect()


@ketch.cls(return_dtype=ketch.DataType.string(), concurrency=3, cpus=0.25, batch_size=5)
class Tagger:
    def __init__(self) -> None:
        import json

        self.json = json
        self.where = _where()
        self.where["inits"] = 1

    def __call__(self, x):
        return [self.json.dumps({**self.where, "x": v}) for v in x.to_pylist()]


def _decode(values: list[str]) -> list[dict]:
    import json

    return [json.loads(v) for v in values]


def test_a_class_udf_with_concurrency_runs_as_a_pool_of_ray_actors_with_init_once_each(on_ray):
    df = _tag_rows(60).with_column("t", Tagger()(col("x")))
    out = df.to_pydict()
    tags = _decode(out["t"])
    assert [t["x"] for t in tags] == list(range(60))  # order and values kept
    actors = {t["actor"] for t in tags}
    assert all(actors) and len(actors) <= 3  # Ray actors, not engine-worker threads or processes
    # The engine workers are actors too: the UDF's actors are other processes.
    worker_pids = {t["pid"] for t in tags}
    assert len(worker_pids) == len(actors)
    # Each actor ran __init__ once: one (pid, actor) identity per actor across all its batches.
    assert len({(t["pid"], t["actor"]) for t in tags}) == len(actors)


def _states(actor_ids: set[str], want: str, timeout_s: float = 30.0) -> dict[str, str]:
    """The actors' states in Ray's GCS once all are ``want`` (ray.kill is asynchronous), or as
    they are after ``timeout_s``."""
    import time

    from ray._private.state import actors

    deadline = time.monotonic() + timeout_s
    while True:
        states = {a: actors(a)["State"] for a in actor_ids}
        if all(state == want for state in states.values()) or time.monotonic() > deadline:
            return states
        time.sleep(0.2)


def test_with_no_idle_time_the_actors_are_killed_when_the_query_ends(on_ray):
    import ray

    with ketch.execution_config_ctx(actor_udf_idle_timeout=0):
        out = _tag_rows(10).with_column("t", Tagger()(col("x"))).to_pydict()
    used = {t["actor"] for t in _decode(out["t"])}
    assert set(_states(used, "DEAD").values()) == {"DEAD"}
    assert ray.is_initialized()


@ketch.cls(return_dtype=ketch.DataType.string(), concurrency=2, cpus=0.25, batch_size=5)
class CountedInit:
    """Appends a line to ``log`` in ``__init__`` (every actor on this machine: the local cluster)."""

    def __init__(self, log: str, tag: str = "a") -> None:
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        self.where = _where()
        self.tag = tag

    def __call__(self, x):
        return [f"{self.tag}:{self.where['actor']}:{v}" for v in x.to_pylist()]


def _actors(values: list[str]) -> set[str]:
    return {v.split(":")[1] for v in values}


def test_a_second_query_takes_over_the_warm_pool_without_running_init_again(on_ray, tmp_path):
    log = tmp_path / "inits"
    udf = CountedInit(str(log))
    first = _tag_rows(40).with_column("t", udf(col("x"))).to_pydict()
    assert len(log.read_text().splitlines()) == 2  # two actors, __init__ once each
    assert len(on_ray.warm_pools) == 1  # kept idle after the query
    second = _tag_rows(40).with_column("t", CountedInit(str(log))(col("x"))).to_pydict()  # same class, args
    assert len(log.read_text().splitlines()) == 2  # no __init__ again
    assert _actors(second["t"]) <= _actors(first["t"])
    assert second["t"] == first["t"]
    assert on_ray.warm_pools.reused == 1
    # Stopped on request: the next query starts (and initialises) new actors.
    assert ketch.runners.close_actor_pools() == 1
    assert set(_states(_actors(first["t"]), "DEAD").values()) == {"DEAD"}
    _tag_rows(40).with_column("t", CountedInit(str(log))(col("x"))).collect()
    assert len(log.read_text().splitlines()) == 4


def test_other_init_arguments_start_a_new_pool_and_stop_the_idle_one(on_ray, tmp_path):
    log = tmp_path / "inits"
    first = _tag_rows(20).with_column("t", CountedInit(str(log), "a")(col("x"))).to_pydict()
    second = _tag_rows(20).with_column("t", CountedInit(str(log), "b")(col("x"))).to_pydict()
    assert len(log.read_text().splitlines()) == 4
    assert all(v.startswith("b:") for v in second["t"])
    assert not _actors(first["t"]) & _actors(second["t"])
    assert set(_states(_actors(first["t"]), "DEAD").values()) == {"DEAD"}  # gave its resources back
    assert len(on_ray.warm_pools) == 1


def test_a_failed_query_kills_its_actors_and_keeps_none_idle(on_ray, tmp_path):
    @ketch.cls(return_dtype=ketch.DataType.string(), concurrency=2, cpus=0.25, batch_size=5)
    class FailsOnSeven:
        def __init__(self) -> None:
            self.where = _where()

        def __call__(self, x):
            if 7 in x.to_pylist():
                raise ValueError("seven")
            return [self.where["actor"]] * len(x)

    ok = _tag_rows(5).with_column("t", FailsOnSeven()(col("x"))).to_pydict()  # rows 0-4: kept idle
    assert len(on_ray.warm_pools) == 1
    with pytest.raises(UDFError, match="seven"):
        _tag_rows(20).with_column("t", FailsOnSeven()(col("x"))).collect()
    assert len(on_ray.warm_pools) == 0
    assert set(_states(set(ok["t"]), "DEAD").values()) == {"DEAD"}


def test_an_idle_pool_stops_after_the_idle_timeout(on_ray):
    with ketch.execution_config_ctx(actor_udf_idle_timeout=1):
        out = _tag_rows(10).with_column("t", Tagger()(col("x"))).to_pydict()
    used = {t["actor"] for t in _decode(out["t"])}
    assert set(_states(used, "DEAD").values()) == {"DEAD"}
    assert len(on_ray.warm_pools) == 0


def test_fractional_gpus_place_two_actors_per_gpu_and_each_sees_only_its_gpu(on_ray):
    @ketch.cls(return_dtype=ketch.DataType.string(), gpus=0.5, cpus=0.1, batch_size=2)
    class HalfGpu:
        def __init__(self) -> None:
            import json

            self.tag = json.dumps(_where())

        def __call__(self, x):
            return [self.tag] * len(x)

    out = _tag_rows(40, 8).with_column("t", HalfGpu()(col("x"))).to_pydict()
    tags = {tuple(sorted(t.items())) for t in _decode(out["t"])}
    by_node = Counter(dict(t)["node"] for t in tags)
    # 2 fake GPUs in the cluster / 0.5 per actor = 4 actors, two on each GPU node.
    import ray

    gpu_nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"] and n["Resources"].get("GPU", 0) > 0}
    assert set(by_node) <= gpu_nodes
    assert sum(by_node.values()) <= 4
    for t in tags:
        assert dict(t)["cuda"] == "0"  # each node's one GPU, as Ray assigned it


def test_custom_resources_and_ray_options_reach_ray(on_ray):
    import ray

    @ketch.cls(
        return_dtype=ketch.DataType.string(),
        concurrency=2,
        cpus=0.1,
        ray_options={"resources": {"accel": 1}},
    )
    class NeedsAccel:
        def __init__(self) -> None:
            self.node = ray.get_runtime_context().get_node_id()

        def __call__(self, x):
            return [self.node] * len(x)

    out = _tag_rows(20).with_column("n", NeedsAccel()(col("x"))).to_pydict()
    accel_nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"] and n["Resources"].get("accel", 0) > 0}
    assert set(out["n"]) <= accel_nodes and out["x"] == list(range(20))


def test_a_request_no_node_can_hold_fails_at_plan_time_with_the_numbers(on_ray):
    @ketch.cls(return_dtype=int, concurrency=1, gpus=3)
    class TooBig:
        def __call__(self, x):
            return x

    with pytest.raises(ValueError, match=r"TooBig.*gpu 3 per actor.*no node.*GPU 1"):
        _tag_rows(4).with_column("y", TooBig()(col("x"))).collect()


def test_a_pool_larger_than_the_cluster_runs_with_what_fits_and_warns(on_ray):
    @ketch.cls(return_dtype=int, concurrency=5, gpus=1, cpus=0.1)
    class FiveGpus:
        def __call__(self, x):
            return x.to_arrow()

    with pytest.warns(UserWarning, match=r"FiveGpus.*5 actors.*room for 2.*running with 2"):
        out = _tag_rows(12).with_column("y", FiveGpus()(col("x"))).to_pydict()
    assert out["y"] == list(range(12))


def test_an_init_failure_reports_the_users_exception_and_traceback(on_ray):
    @ketch.cls(return_dtype=int, concurrency=2, cpus=0.1)
    class Broken:
        def __init__(self) -> None:
            raise FileNotFoundError("model weights at /models/nope.bin")

        def __call__(self, x):
            return x

    with pytest.raises(UDFError, match=r"Broken.*model weights at /models/nope\.bin") as info:
        _tag_rows(4).with_column("y", Broken()(col("x"))).collect()
    cause = info.value.__cause__
    assert isinstance(cause, FileNotFoundError)
    assert any("__init__" in note and "raise FileNotFoundError" in note for note in cause.__notes__)


def test_a_failing_batch_keeps_its_exception_type_and_on_error_still_applies(on_ray):
    class Seven:
        def __call__(self, x):
            if 7 in x.to_pylist():
                raise KeyError("seven")
            return x.to_arrow()

    FailsOnSeven = ketch.cls(Seven, return_dtype=int, concurrency=2, cpus=0.1, batch_size=1)
    with pytest.raises(UDFError, match="Seven") as info:
        _tag_rows(10).with_column("y", FailsOnSeven()(col("x"))).collect()
    assert isinstance(info.value.__cause__, KeyError)
    import traceback

    # The actor's frames travel with the exception (tblib), down to the user's own line.
    assert 'raise KeyError("seven")' in "".join(traceback.format_tb(info.value.__cause__.__traceback__))

    NullOnSeven = ketch.cls(Seven, return_dtype=int, concurrency=2, cpus=0.1, batch_size=1, on_error="ignore")
    out = _tag_rows(10).with_column("y", NullOnSeven()(col("x"))).to_pydict()
    assert out["y"] == [None if v == 7 else v for v in range(10)]


def test_an_actor_killed_mid_query_is_restarted_and_its_batch_resent(on_ray, tmp_path):
    marker = tmp_path / "killed"

    @ketch.cls(return_dtype=ketch.DataType.string(), concurrency=2, cpus=0.1, batch_size=1)
    class DiesOnce:
        def __init__(self) -> None:
            self.pid = os.getpid()

        def __call__(self, x):
            if 5 in x.to_pylist() and not marker.exists():
                marker.write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)  # the UDF actor itself
            return [f"{self.pid}:{v}" for v in x.to_pylist()]

    out = _tag_rows(12).with_column("t", DiesOnce()(col("x"))).to_pydict()
    assert marker.exists()
    assert [int(t.split(":")[1]) for t in out["t"]] == list(range(12))  # none lost or doubled
    killed = int(marker.read_text())
    # Row 5 ran again on a restarted actor (a new process, __init__ run again there).
    assert int(out["t"][5].split(":")[0]) != killed


def test_an_actor_that_keeps_crashing_is_reported_with_the_udf_and_node(on_ray):
    @ketch.cls(
        return_dtype=int, concurrency=1, cpus=0.1, ray_options={"max_restarts": 1, "max_task_retries": 1}
    )
    class Segfaults:
        def __call__(self, x):
            os.kill(os.getpid(), signal.SIGSEGV)

    with pytest.raises(UDFError, match=r"Segfaults.*actor 0 on node [0-9a-f]+.*died"):
        _tag_rows(4, 1).with_column("y", Segfaults()(col("x"))).collect()


def test_an_actor_out_of_memory_is_reported_with_the_udf_and_node(on_ray):
    """The actor's address space is capped (RLIMIT_AS, as a container's memory limit would cap
    it); a batch that allocates past the cap fails with the user's MemoryError, named by the UDF,
    with a note giving the actor's node, and the other actors' rows are not silently dropped."""

    @ketch.cls(return_dtype=int, concurrency=1, cpus=0.1, batch_size=2)
    class Hungry:
        def __init__(self) -> None:
            import resource

            with open("/proc/self/status") as status:
                vm_kb = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
            cap = vm_kb * 1024 + (256 << 20)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

        def __call__(self, x):
            import numpy as np

            if 3 in x.to_pylist():
                np.ones(1 << 31, dtype=np.uint8)  # 2 GiB, far past the cap
            return x.to_arrow()

    with pytest.raises(UDFError, match="Hungry") as info:
        _tag_rows(6, 1).with_column("y", Hungry()(col("x"))).collect()
    cause = info.value.__cause__
    assert isinstance(cause, MemoryError), repr(cause)
    notes = "\n".join(getattr(cause, "__notes__", []))
    assert re.search(r"UDF actor 0 of 1 ran on node [0-9a-f]{16,}", notes), notes


def test_a_hanging_call_is_stopped_by_timeout_s_naming_the_udf(on_ray):
    release = threading.Event()  # never set: the call would hang forever

    @ketch.cls(return_dtype=int, concurrency=1, cpus=0.1, timeout_s=1)
    class Hangs:
        def __call__(self, x):
            import time

            time.sleep(3600)
            return x

    with pytest.raises(UDFError, match=r"Hangs.*timeout_s=1"):
        _tag_rows(2, 1).with_column("y", Hangs()(col("x"))).collect()
    assert not release.is_set()


def test_local_actors_first_then_the_least_loaded_keeps_every_actor_busy(on_ray):
    import ray

    # 7 rows at batch_size 1 through a 4-actor stage: every actor gets batches, whichever node the
    # input's single task runs on (its node's actors first, then the idle remote ones).
    @ketch.cls(return_dtype=ketch.DataType.string(), concurrency=4, cpus=0.1, batch_size=1)
    class Slow:
        def __init__(self) -> None:
            self.actor = ray.get_runtime_context().get_actor_id()

        def __call__(self, x):
            import time

            time.sleep(0.5)
            return [self.actor] * len(x)

    out = ketch.from_pydict({"x": list(range(7))}).with_column("a", Slow()(col("x"))).to_pydict()
    assert out["x"] == list(range(7))
    assert len(set(out["a"])) == 4


def test_explain_shows_the_actor_pool(on_ray):
    df = _tag_rows(4).with_column("t", Tagger()(col("x")))
    import io

    buffer = io.StringIO()
    df.explain(show_all=True, file=buffer)
    assert "ActorUDF: Tagger (actor pool: 3 actors, cpu 0.25 each)" in buffer.getvalue()


def test_without_concurrency_or_gpus_a_class_udf_stays_in_the_engine_worker(on_ray):
    @ketch.cls(return_dtype=ketch.DataType.string(), use_process=False)
    class InWorker:
        def __call__(self, x):
            import ray

            return [ray.get_runtime_context().get_actor_id() or ""] * len(x)

    from ray._private.state import actors

    out = _tag_rows(8).with_column("a", InWorker()(col("x"))).to_pydict()
    assert {actors(a)["ActorClassName"] for a in out["a"]} == {"EngineWorker"}


def test_results_equal_the_native_runner(on_ray):
    from ray_compare import native_then_ray

    @ketch.cls(return_dtype=pa.int64(), concurrency=2, cpus=0.1, batch_size=7)
    class AddOne:
        def __call__(self, x):
            return pa.compute.add(x.to_arrow(), 1)

    native, on_ray_result = native_then_ray(
        lambda: _tag_rows(100).with_column("y", AddOne()(col("x"))).sort("y", desc=True).limit(10)
    )
    assert native.to_pydict() == on_ray_result.to_pydict()
    assert on_ray_result.to_pydict()["y"] == list(range(100, 90, -1))


def test_two_chained_actor_udf_stages_overlap(on_ray):
    import time

    @ketch.cls(return_dtype=pa.float64(), concurrency=1, cpus=0.1, batch_size=1)
    class First:
        def __call__(self, x):
            time.sleep(0.05)
            return [time.time()] * len(x)  # when this batch left stage 1

    @ketch.cls(return_dtype=pa.float64(), concurrency=2, cpus=0.1, batch_size=1)
    class Second:
        def __call__(self, x):
            return [time.time()] * len(x)  # when stage 2 ran it

    out = (
        ketch.from_pydict({"x": list(range(30))})
        .with_column("a", First()(col("x")))
        .with_column("b", Second()(col("a")))
        .to_pydict()
    )
    assert out["x"] == list(range(30))
    # Stage 2 starts on stage 1's first outputs: its first call comes before stage 1's last one.
    assert min(out["b"]) < max(out["a"])
