"""The flight shuffle (``shuffle_algorithm="flight_shuffle"``): map outputs on local disk (Arrow
IPC), served by each engine worker's Arrow Flight server, fetched by the reduce tasks. Its results
equal map_reduce's (and the native runner's) on the 3-node local cluster; its files are deleted
when the query ends; its buckets never go through the object store."""

from __future__ import annotations

import io
import os
import re
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col
from ketch.errors import KetchIOError
from ketch.runners import get_runner
from ketch.runners.ray.flight_shuffle import FlightMap, FlightPiece, ShuffleStore, query_dir


@pytest.fixture
def six_files(tmp_path: Path) -> Iterator[str]:
    """Six Parquet files of 500 rows (one scan task each): id, g (7 groups), k (join key), v, s,
    keep (id % 50 == 0)."""
    root = tmp_path / "in"
    root.mkdir()
    for i in range(6):
        ids = list(range(i * 500, (i + 1) * 500))
        table = pa.table(
            {
                "id": ids,
                "g": [j % 7 for j in ids],
                "k": [j % 40 for j in ids],
                "v": [float(j) for j in ids],
                "s": [f"row-{j % 13}" for j in ids],
                "keep": [j % 50 == 0 for j in ids],
            }
        )
        pq.write_table(table, root / f"part-{i}.parquet")
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=1, max_sources_per_scan_task=1):
        yield str(root / "*.parquet")


@pytest.fixture
def shuffle_dir(tmp_path: Path) -> Path:
    path = tmp_path / "shuffle"
    path.mkdir()
    return path


@pytest.fixture
def no_broadcast(on_ray: Any) -> Iterator[Any]:
    """Joins shuffle both sides (the broadcast threshold is 0 bytes)."""
    old = on_ray.broadcast_join_size_bytes_threshold
    on_ray.broadcast_join_size_bytes_threshold = 0
    try:
        yield on_ray
    finally:
        on_ray.broadcast_join_size_bytes_threshold = old


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _native(build: Callable[[], ketch.DataFrame]) -> dict[str, list[Any]]:
    ray_runner = get_runner()
    ketch.set_runner_native()
    try:
        return build().to_pydict()
    finally:
        ketch.runners._runner = ray_runner


def _flight_equals_map_reduce(
    on_ray: Any, shuffle_dir: Path, build: Callable[[], ketch.DataFrame], **config: Any
) -> dict[str, list[Any]]:
    """``build()`` on Ray with map_reduce and with flight_shuffle (files under ``shuffle_dir``):
    asserts both equal the native result and that the flight run's shuffles went to disk; returns
    the result."""
    native = _native(build)
    with ketch.execution_config_ctx(shuffle_algorithm="map_reduce"):
        map_reduce = build().to_pydict()
    reference = [s for s in on_ray.last_stages if s.kind == "shuffle map"]
    with ketch.execution_config_ctx(
        shuffle_algorithm="flight_shuffle", flight_shuffle_dirs=[str(shuffle_dir)], **config
    ):
        flight = build().to_pydict()
    assert flight == map_reduce == native
    shuffles = [s for s in on_ray.last_stages if s.kind == "shuffle map"]
    assert "MB on disk" in on_ray.stage_report()
    assert shuffles and len(shuffles) == len(reference)
    for stage, ref in zip(shuffles, reference, strict=True):
        assert "via flight_shuffle" in stage.name, stage.name
        assert stage.rows_out == ref.rows_out and stage.bytes_shuffled == ref.bytes_shuffled
        assert stage.bytes_on_disk > 0 and ref.bytes_on_disk == 0
    assert _files(shuffle_dir) == []  # deleted when the query ended
    return flight


# -- results equal map_reduce's -------------------------------------------------------------------


def test_groupby_two_phase_and_raw_row_aggregations(on_ray: Any, six_files: str, shuffle_dir: Path) -> None:
    def two_phase() -> ketch.DataFrame:
        df = ketch.read_parquet(six_files).groupby("g")
        return df.agg(col("v").sum(), col("id").count(), col("v").mean().alias("m")).sort("g")

    out = _flight_equals_map_reduce(on_ray, shuffle_dir, two_phase)
    assert out["g"] == list(range(7))
    assert out["v"] == [float(sum(j for j in range(3000) if j % 7 == g)) for g in range(7)]
    assert out["id"] == [len([j for j in range(3000) if j % 7 == g]) for g in range(7)]

    def raw_rows() -> ketch.DataFrame:  # list aggregation: every row is shuffled
        df = ketch.read_parquet(six_files).where(col("keep"))
        return df.groupby("g").agg(col("id").agg_list().alias("ids")).sort("g")

    out = _flight_equals_map_reduce(on_ray, shuffle_dir, lambda: raw_rows().with_column("ids", col("ids")))
    assert [sorted(ids) for ids in out["ids"]] == [
        [j for j in range(0, 3000, 50) if j % 7 == g] for g in range(7)
    ]


def test_distinct(on_ray: Any, six_files: str, shuffle_dir: Path) -> None:
    out = _flight_equals_map_reduce(
        on_ray,
        shuffle_dir,
        lambda: ketch.read_parquet(six_files).select("s", "g").distinct().sort(["s", "g"]),
    )
    expected = sorted({(f"row-{j % 13}", j % 7) for j in range(3000)})
    assert list(zip(out["s"], out["g"], strict=True)) == expected


@pytest.mark.parametrize("how", ["inner", "left", "outer"])
def test_joins_shuffling_both_sides(no_broadcast: Any, six_files: str, shuffle_dir: Path, how: str) -> None:
    def join() -> ketch.DataFrame:
        left = ketch.read_parquet(six_files).where(col("keep")).select("id", "k")
        right = ketch.from_pydict({"k": list(range(20, 60)), "w": [f"w{k}" for k in range(20, 60)]})
        right = right.into_partitions(3)
        return left.join(right, on="k", how=how).sort(["id", "k"], nulls_first=[False, True])

    out = _flight_equals_map_reduce(no_broadcast, shuffle_dir, join)
    stages = [s for s in no_broadcast.last_stages if s.kind == "shuffle map"]
    assert len(stages) == 2 and all(s.kind == "shuffle map" for s in stages)  # both sides shuffled
    left_ids = [j for j in range(0, 3000, 50)]
    matched = [j for j in left_ids if 20 <= j % 40]
    if how == "inner":
        assert out["id"] == matched and out["w"] == [f"w{j % 40}" for j in matched]
    elif how == "left":
        assert out["id"] == left_ids
        assert out["w"] == [f"w{j % 40}" if 20 <= j % 40 else None for j in left_ids]
    else:  # outer: the right keys without a left row (all but 20 and 30) come last, id null
        unmatched = sorted(set(range(20, 60)) - {j % 40 for j in left_ids})
        assert len(unmatched) == 38
        assert out["id"] == left_ids + [None] * len(unmatched)
        assert out["k"][len(left_ids) :] == unmatched
        assert out["w"][len(left_ids) :] == [f"w{k}" for k in unmatched]


def test_a_small_right_side_is_broadcast_from_the_flight_shuffle(
    on_ray: Any, six_files: str, shuffle_dir: Path
) -> None:
    def join() -> ketch.DataFrame:
        left = ketch.read_parquet(six_files).where(col("keep")).select("id", "k")
        right = ketch.from_pydict({"k": list(range(20, 60)), "w": [f"w{k}" for k in range(20, 60)]})
        return left.join(right.into_partitions(3), on="k").sort("id")

    expected = _native(join)
    with ketch.execution_config_ctx(
        shuffle_algorithm="flight_shuffle", flight_shuffle_dirs=[str(shuffle_dir)]
    ):
        out = join().to_pydict()
    assert out == expected and len(out["id"]) == 30  # ids % 40 in {20, 30}: half of the 60
    kinds = [s.kind for s in on_ray.last_stages]
    assert "broadcast" in kinds and "shuffle map" not in kinds, kinds
    broadcast = next(s for s in on_ray.last_stages if s.kind == "broadcast")
    assert broadcast.bytes_on_disk > 0  # the right side was written by the flight shuffle, then broadcast
    assert _files(shuffle_dir) == []


def test_tables_without_columns_keep_their_rows(on_ray: Any, six_files: str, shuffle_dir: Path) -> None:
    with ketch.execution_config_ctx(
        shuffle_algorithm="flight_shuffle", flight_shuffle_dirs=[str(shuffle_dir)]
    ):
        assert ketch.read_parquet(six_files).repartition(4).count_rows() == 3000
        assert ketch.read_parquet(six_files).repartition(4, "g").count_rows() == 3000
    assert _files(shuffle_dir) == []


def test_repartition_by_key_gives_the_same_partitions(on_ray: Any, six_files: str, shuffle_dir: Path) -> None:
    def parts(algorithm: str) -> list[list[int]]:
        with ketch.execution_config_ctx(shuffle_algorithm=algorithm, flight_shuffle_dirs=[str(shuffle_dir)]):
            df = ketch.read_parquet(six_files).repartition(4, "g")
            return [sorted(p.to_pydict()["id"]) for p in df.iter_partitions()]

    flight, map_reduce = parts("flight_shuffle"), parts("map_reduce")
    assert flight == map_reduce
    assert len(flight) == 4 and sorted(i for p in flight for i in p) == list(range(3000))
    groups = [{i % 7 for i in p} for p in flight]  # each group in exactly one partition
    assert sum(len(g) for g in groups) == 7
    assert _files(shuffle_dir) == []


def test_random_repartition_keeps_every_row(on_ray: Any, six_files: str, shuffle_dir: Path) -> None:
    with ketch.execution_config_ctx(
        shuffle_algorithm="flight_shuffle", flight_shuffle_dirs=[str(shuffle_dir)]
    ):
        parts = [p.to_pydict()["id"] for p in ketch.read_parquet(six_files).repartition(5).iter_partitions()]
    assert len(parts) == 5 and sorted(i for p in parts for i in p) == list(range(3000))
    assert all(550 <= len(p) <= 650 for p in parts), [len(p) for p in parts]  # spread evenly
    assert _files(shuffle_dir) == []


# -- compression, directories, config -------------------------------------------------------------


def test_zstd_lz4_and_none_give_the_same_result_and_compress(
    on_ray: Any, six_files: str, shuffle_dir: Path
) -> None:
    def build() -> ketch.DataFrame:  # raw rows shuffled: compressible repeated strings
        return ketch.read_parquet(six_files).repartition(3, "g")

    expected = sorted(_native(build)["id"])
    on_disk = {}
    for compression in ("zstd", "lz4", None):
        with ketch.execution_config_ctx(
            shuffle_algorithm="flight_shuffle",
            flight_shuffle_dirs=[str(shuffle_dir)],
            flight_shuffle_compression=compression,
        ):
            out = build().to_pydict()
        assert sorted(out["id"]) == expected and len(out["s"]) == 3000
        on_disk[compression] = next(s for s in on_ray.last_stages if s.kind == "shuffle map").bytes_on_disk
    assert on_disk["zstd"] < on_disk[None] and on_disk["lz4"] < on_disk[None], on_disk


def test_several_dirs_share_the_map_tasks(on_ray: Any, six_files: str, tmp_path: Path) -> None:
    dirs = [tmp_path / "a", tmp_path / "b"]  # created by the workers
    seen: dict[str, list[str]] = {}

    def build() -> ketch.DataFrame:
        return ketch.read_parquet(six_files).groupby("g").agg(col("v").sum()).sort("g")

    expected = _native(build)
    with ketch.execution_config_ctx(
        shuffle_algorithm="flight_shuffle", flight_shuffle_dirs=[str(d) for d in dirs]
    ):
        parts = ketch.read_parquet(six_files).groupby("g").agg(col("v").sum()).iter_partitions()
        first = next(parts)  # the map stage is done: its files are on disk now
        seen = {d.name: _files(d) for d in dirs}
        rest = [first, *parts]
    rows = sorted(zip(*[[r for p in rest for r in p.to_pydict()[c]] for c in ("g", "v")], strict=True))
    assert [list(x) for x in zip(*rows, strict=True)] == [expected["g"], expected["v"]]
    assert seen["a"] and seen["b"], seen  # map tasks 0, 2, 4 in a; 1, 3, 5 in b
    assert all(f.startswith("ketch-shuffle-") and f.endswith(".arrow") for d in seen.values() for f in d)
    assert _files(dirs[0]) == [] and _files(dirs[1]) == []


def test_a_dir_that_cannot_be_written_fails_naming_it(on_ray: Any, six_files: str, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("x")
    with ketch.execution_config_ctx(shuffle_algorithm="flight_shuffle", flight_shuffle_dirs=[str(not_a_dir)]):
        df = ketch.read_parquet(six_files).groupby("g").agg(col("v").sum())
        with pytest.raises(
            KetchIOError, match=rf"cannot write {re.escape(str(not_a_dir))}/ketch-shuffle-.*stage 1 "
        ):
            df.collect()


def test_config_refuses_bad_flight_settings() -> None:
    with pytest.raises(ValueError, match="flight_shuffle_compression must be 'lz4', 'zstd'"):
        ketch.set_execution_config(flight_shuffle_compression="gzip")
    with pytest.raises(ValueError, match="flight_shuffle_dirs must be a non-empty list"):
        ketch.set_execution_config(flight_shuffle_dirs="/tmp/x")
    with pytest.raises(ValueError, match="flight_shuffle_dirs must be a non-empty list"):
        ketch.set_execution_config(flight_shuffle_dirs=[])
    with pytest.raises(ValueError, match="flight_shuffle_dirs entries"):
        ketch.set_execution_config(flight_shuffle_dirs=["/tmp/x", 3])
    with ketch.execution_config_ctx(
        shuffle_algorithm="flight_shuffle", flight_shuffle_dirs=("/tmp/a",), flight_shuffle_compression="none"
    ) as config:
        assert config.shuffle_algorithm == "flight_shuffle" and config.flight_shuffle_compression == "none"
    default = ketch.context.ExecutionConfig()
    assert default.flight_shuffle_compression == "lz4"
    assert default.flight_shuffle_dirs[0].endswith("ketch_flight_shuffle")


def test_explain_names_the_flight_shuffle(on_ray: Any, six_files: str) -> None:
    df = ketch.read_parquet(six_files).groupby("g").agg(col("v").sum())
    on_ray.last_stages.clear()
    out = io.StringIO()
    with ketch.execution_config_ctx(shuffle_algorithm="flight_shuffle"):
        df.explain(show_all=True, file=out)
    plan = out.getvalue().split("== Distributed Plan ==", 1)[1]
    assert "partial Aggregate -> hash shuffle by ['g'] into 6 (flight_shuffle); 6 tasks" in plan, plan
    assert on_ray.last_stages == []  # nothing ran


# -- cleanup on failure and cancel; lost workers ----------------------------------------------------


def test_files_are_deleted_when_the_stream_is_stopped_early(
    on_ray: Any, six_files: str, shuffle_dir: Path
) -> None:
    with ketch.execution_config_ctx(
        shuffle_algorithm="flight_shuffle", flight_shuffle_dirs=[str(shuffle_dir)]
    ):
        parts = ketch.read_parquet(six_files).repartition(6, "k").iter_partitions()
        next(parts)
        during = _files(shuffle_dir)
        parts.close()  # the consumer stops: the query is cancelled
    assert during and all(f.endswith(".arrow") for f in during)
    assert _files(shuffle_dir) == []


def test_map_outputs_lost_with_their_worker_are_made_again(
    fresh_ray_runner: Any, six_files: str, shuffle_dir: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "killed-once"

    @ketch.func
    def die_once(g: int) -> int:  # kills the engine worker running the reduce of group 3
        if g == 3 and not os.path.exists(marker):
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return g * 10

    def build() -> ketch.DataFrame:
        df = ketch.read_parquet(six_files).groupby("g").agg(col("v").sum())
        return df.with_column("h", die_once(col("g"))).sort("g")

    marker.write_text("native run: no kill")
    expected = _native(build)
    marker.unlink()
    with ketch.execution_config_ctx(
        shuffle_algorithm="flight_shuffle", flight_shuffle_dirs=[str(shuffle_dir)]
    ):
        out = build().to_pydict()
    assert marker.exists()
    assert out == expected and out["h"] == [10 * g for g in range(7)]
    # The killed worker held about a third of the map outputs: they were made again elsewhere.
    again = [s for s in fresh_ray_runner.last_stages if s.kind == "shuffle map (recompute)"]
    assert len(again) == 1 and 1 <= again[0].tasks < 6, fresh_ray_runner.stage_report()
    assert "lost with grpc+tcp://" in again[0].name
    assert _files(shuffle_dir) == []  # the dead worker's files too (deleted by its node's new worker)


def test_an_unrecoverable_fetch_fails_naming_stage_partition_and_address(on_ray: Any) -> None:
    from ketch import _core
    from ketch.runners.ray.coordinator import Coordinator, StageTasks
    from ketch.runners.ray.flight_shuffle import FlightFetchError

    fragment = _core.PyPlan.in_memory(pa.table({"a": pa.array([], pa.int64())})).to_bytes()
    config = ketch.get_execution_config()
    lost = FlightPiece("grpc+tcp://127.0.0.1:1", "q-s1/0/0", 5)

    def submit(handle: Any, index: int) -> tuple[Any, Any]:
        refs = handle.run_task.options(num_returns=2).remote(fragment, config, [[lost]], 0, None)
        return refs[-1], refs[:-1]

    coordinator = Coordinator(on_ray.workers(), 2, on_ray._start_worker)
    stage = StageTasks("stage 9 (reduce: final Aggregate)", 2, submit, recover=lambda error: False)
    pattern = (
        r"cannot fetch 'q-s1/0/0' \(5 rows\) from grpc\+tcp://127\.0\.0\.1:1.*stage 9 .*partition [01] of 2"
    )
    with pytest.raises(FlightFetchError, match=pattern):
        list(coordinator.run(stage))


# -- the buckets never go through the object store ---------------------------------------------------


def _object_store_bytes() -> int:
    """Bytes of the objects this driver owns (every task output of the query: the driver submits
    all tasks), as Ray's object directory records them."""
    import ray

    worker = ray._private.worker.global_worker
    refs = [
        ray.ObjectRef(bytes.fromhex(object_id.decode()))
        for object_id in worker.core_worker.get_all_reference_counts()
    ]
    try:
        locations = ray.experimental.get_object_locations(refs)
    except ValueError:
        # A reference freed between listing and locating (its owner no longer knows it): locate
        # the others one by one; a freed object holds no bytes.
        locations = {}
        for ref in refs:
            try:
                locations.update(ray.experimental.get_object_locations([ref]))
            except ValueError:
                continue
    return sum(int(location.get("object_size") or 0) for location in locations.values())


def test_the_map_outputs_stay_out_of_the_object_store(on_ray: Any, tmp_path: Path, shuffle_dir: Path) -> None:
    """A raw-row shuffle of ~24 MB (approx_count_distinct shuffles rows; its output is 7 rows):
    with map_reduce the buckets are in the object store while the reduce stage runs, with the
    flight shuffle only on disk (what lets a shuffle larger than the object store finish)."""
    root = tmp_path / "big"
    root.mkdir()
    for i in range(6):
        ids = list(range(i * 40_000, (i + 1) * 40_000))
        strings = [f"{j:08d}" * 12 for j in ids]  # 96 bytes each, distinct
        pq.write_table(pa.table({"g": [j % 7 for j in ids], "s": strings}), root / f"p{i}.parquet")

    def during(algorithm: str) -> tuple[int, list[int], int]:
        """Object store bytes this query added while its reduce stage runs (objects earlier
        tests left, not yet freed, are not counted), the result, the bytes shuffled."""
        before = _object_store_bytes()
        with ketch.execution_config_ctx(
            shuffle_algorithm=algorithm,
            flight_shuffle_dirs=[str(shuffle_dir)],
            scan_tasks_min_size_bytes=1,
            max_sources_per_scan_task=1,
        ):
            df = ketch.read_parquet(str(root / "*.parquet")).groupby("g")
            parts = df.agg(col("s").approx_count_distinct().alias("n")).iter_partitions()
            first = next(parts)  # the map stage is done, the reduce stage runs
            used = _object_store_bytes() - before
            counts = [n for p in [first, *parts] for n in p.to_pydict()["n"]]
        shuffled = next(s for s in on_ray.last_stages if s.kind == "shuffle map").bytes_shuffled
        return used, sorted(counts), shuffled

    store_flight, counts_flight, shuffled_flight = during("flight_shuffle")
    store_map_reduce, counts_map_reduce, shuffled = during("map_reduce")
    assert shuffled == shuffled_flight > 20_000_000
    assert counts_flight == counts_map_reduce and sum(counts_flight) > 0.9 * 240_000
    assert store_map_reduce > 0.8 * shuffled, (store_map_reduce, shuffled)
    # The map_reduce buckets are all in the store; the flight shuffle's are not. The margin covers
    # objects of earlier queries that Ray frees asynchronously during this one (up to ~5 MB seen
    # on the shared test cluster after the relational suites).
    assert store_flight < 0.25 * shuffled, (store_flight, shuffled)
    assert _files(shuffle_dir) == []


def test_a_shuffle_larger_than_the_object_store_finishes(
    on_ray: Any, tmp_path: Path, shuffle_dir: Path
) -> None:
    """A raw-row shuffle of more bytes than the whole cluster's object store (3 nodes × 256 MiB in
    the test cluster) finishes with the flight shuffle, with the right answer, and never puts its
    buckets into the object store."""
    import pyarrow.compute as pc
    import ray

    capacity = int(ray.cluster_resources()["object_store_memory"])
    root = tmp_path / "huge"
    root.mkdir()
    files, rows_per_file = 8, 1_100_000
    for i in range(files):
        ids = pa.array(range(i * rows_per_file, (i + 1) * rows_per_file), pa.int64())
        strings = pc.utf8_lpad(pc.cast(ids, pa.string()), width=100, padding="k")  # distinct, 100 B
        g = pc.bit_wise_and(ids, pa.scalar(3, pa.int64()))
        pq.write_table(pa.table({"g": g, "s": strings}), root / f"p{i}.parquet", compression="zstd")
    with ketch.execution_config_ctx(
        shuffle_algorithm="flight_shuffle",
        flight_shuffle_dirs=[str(shuffle_dir)],
        scan_tasks_min_size_bytes=1,
        max_sources_per_scan_task=1,
    ):
        # What the query adds: objects the driver already owned (earlier tests' results it still
        # references, e.g. a Ray Dataset's blocks) are not this shuffle's.
        before = _object_store_bytes()
        df = ketch.read_parquet(str(root / "*.parquet")).groupby("g")
        parts = df.agg(col("s").approx_count_distinct().alias("n")).iter_partitions()
        first = next(parts)  # every map task has written its buckets; the reduce stage runs
        used = _object_store_bytes() - before
        tables = [p.to_pydict() for p in [first, *parts]]
    counts = {g: n for t in tables for g, n in zip(t["g"], t["n"], strict=True)}
    shuffle = next(s for s in on_ray.last_stages if s.kind == "shuffle map")
    assert shuffle.bytes_shuffled > capacity, (shuffle.bytes_shuffled, capacity)
    assert used < 0.05 * capacity, (used, capacity)
    total = files * rows_per_file
    assert sorted(counts) == [0, 1, 2, 3]
    for n in counts.values():  # HyperLogLog: within 3% of the 2.2M distinct strings per group
        assert abs(n - total / 4) < 0.03 * total / 4, counts
    assert _files(shuffle_dir) == []


# -- the store on its own: real Flight server on loopback, no Ray --------------------------------------


def test_store_writes_serves_and_drops_without_the_object_store(tmp_path: Path) -> None:
    store = ShuffleStore("127.0.0.1", "node-1")
    reader = ShuffleStore("127.0.0.1", "node-2")
    try:
        table = pa.table({"a": list(range(1000)), "s": ["x" * 20] * 1000})
        buckets = [table.slice(0, 600), table.slice(600, 0), table.slice(600, 400)]
        spec = FlightMap("q1", 2, 5, (str(tmp_path),), "zstd")
        meta = store.write_buckets(spec, buckets)
        assert meta["rows"] == [600, 0, 400] and meta["flight"].startswith("grpc+tcp://127.0.0.1:")
        assert meta["bytes"] == [b.nbytes for b in buckets]
        assert meta["file_bytes"][1] == 0 and 0 < meta["file_bytes"][0] < buckets[0].nbytes
        files = _files(tmp_path)
        assert files == [f"ketch-shuffle-q1/node-1/2-5-{b}.arrow" for b in (0, 2)]
        pieces = [FlightPiece(meta["flight"], f"q1-s2/5/{b}", meta["rows"][b]) for b in range(3)]
        fetched = reader.fetch(pieces)
        assert pa.concat_tables(fetched).equals(table)
        assert reader.fetch([FlightPiece("grpc+tcp://x:1", "q1-s2/5/9", 7, num_columns=0)])[0].num_rows == 7
        with pytest.raises(KetchIOError, match=r"cannot fetch 'q1-s2/5/7' \(3 rows\) from grpc\+tcp://127"):
            reader.fetch([FlightPiece(meta["flight"], "q1-s2/5/7", 3)])
        store.drop_query("q1", [str(tmp_path)])
        assert not os.path.exists(query_dir(str(tmp_path), "q1"))
        with pytest.raises(KetchIOError, match="no shuffle file for ticket"):
            reader.fetch(pieces[:1])
        address = meta["flight"]
        store.write_buckets(FlightMap("q2", 1, 0, (str(tmp_path),), None), buckets)
        store.close()  # the worker exits: its files go, its server stops
        assert _files(tmp_path) == []
        with pytest.raises(KetchIOError, match=re.escape(f"from {address}: ")):
            reader.fetch([FlightPiece(address, "q2-s1/0/0", 600)])
    finally:
        store.close()
        reader.close()
