"""The seeds' case on a real 3-node Ray cluster: one small Parquet file of image URLs (served by a
real HTTP server on loopback) feeding an expensive UDF. The scan splits the file's one row group
into row ranges below the expensive pipeline, so the map stage has several tasks and the engine
workers of all three nodes download and process the images, without a manual repartition; the
stage stats and explain_analyze show the tasks per node. Results (values and row order) are the
native runner's."""

from __future__ import annotations

import hashlib
import io
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col

NUM_URLS = 48


@pytest.fixture
def image_server() -> Iterator[tuple[str, dict[str, bytes], dict[str, int]]]:
    """A loopback HTTP server: GET /img/<i>.bin returns 2 KiB of bytes that depend on i. Yields
    (base URL, the bodies by path, requests served by path)."""
    bodies = {f"/img/{i}.bin": hashlib.sha256(str(i).encode()).digest() * 64 for i in range(NUM_URLS)}
    served: dict[str, int] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            body = bodies.get(self.path)
            with lock:
                served[self.path] = served.get(self.path, 0) + 1
            self.send_response(200 if body is not None else 404)
            payload = body if body is not None else b"not found"
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", bodies, served
    finally:
        httpd.shutdown()
        httpd.server_close()


@ketch.func(return_dtype=ketch.DataType.string())
def expensive_digest(data: bytes) -> str:
    """The "model": a deliberately costly hash chain over the downloaded bytes."""
    digest = data
    for _ in range(200):
        digest = hashlib.sha256(digest).digest()
    return digest.hex()


def _expected(data: bytes) -> str:
    digest = data
    for _ in range(200):
        digest = hashlib.sha256(digest).digest()
    return digest.hex()


def test_one_small_file_of_urls_under_an_expensive_udf_runs_on_every_node(
    on_ray: Any, image_server: tuple[str, dict[str, bytes], dict[str, int]], tmp_path: Path
) -> None:
    base, bodies, served = image_server
    path = tmp_path / "seeds.parquet"
    urls = [f"{base}/img/{i}.bin" for i in range(NUM_URLS)]
    pq.write_table(pa.table({"id": pa.array(range(NUM_URLS), pa.int64()), "url": urls}), path)
    assert pq.ParquetFile(path).metadata.num_row_groups == 1

    df = (
        ketch.read_parquet(str(path))
        .with_column("data", col("url").url.download())
        .with_column("digest", expensive_digest(col("data")))
        .select("id", "digest")
    )
    report = io.StringIO()
    df.explain_analyze(file=report)
    out = df.to_pydict()

    want = [_expected(bodies[f"/img/{i}.bin"]) for i in range(NUM_URLS)]
    assert out == {"id": list(range(NUM_URLS)), "digest": want}  # values and order

    # explain_analyze ran the query and kept its result (to_pydict reads it): one map stage
    # (scan -> download -> UDF) of several tasks, with tasks on each of the 3 nodes.
    stages = on_ray.last_stages
    assert [s.kind for s in stages] == ["map"], [s.name for s in stages]
    (stage,) = stages
    assert "Scan" in stage.name
    assert stage.tasks >= 3
    assert stage.rows_out == NUM_URLS
    assert len(stage.tasks_per_node) == 3, stage.tasks_per_node
    assert sum(stage.tasks_per_node.values()) == stage.tasks
    assert all(n >= 1 for n in stage.tasks_per_node.values())

    # explain_analyze prints the same stage with its tasks per node (3 nodes).
    text = report.getvalue()
    assert "== Stages ==" in text
    (line,) = [ln for ln in text.splitlines() if ln.startswith("stage 1 (map:")]
    assert re.search(rf"{stage.tasks} tasks, [\d.]+ s, {NUM_URLS} rows out", line), line
    per_node = line.split("tasks per node {", 1)[1].rstrip("}").split(", ")
    assert len(per_node) == 3 and sum(int(p.split(": ")[1]) for p in per_node) == stage.tasks

    # Every URL was fetched exactly once: no row range was read (and downloaded) twice.
    assert served == {f"/img/{i}.bin": 1 for i in range(NUM_URLS)}


def test_the_seeds_query_gives_the_native_runners_result(
    on_ray: Any, image_server: tuple[str, dict[str, bytes], dict[str, int]], tmp_path: Path
) -> None:
    base, _, _ = image_server
    path = tmp_path / "seeds.parquet"
    pq.write_table(pa.table({"url": [f"{base}/img/{i}.bin" for i in range(NUM_URLS)]}), path)

    def build() -> ketch.DataFrame:
        return (
            ketch.read_parquet(str(path))
            .with_column("digest", expensive_digest(col("url").url.download()))
            .where(col("digest") > "4")
        )

    on_cluster = build().to_pydict()
    ketch.set_runner_native()
    native = build().to_pydict()
    assert on_cluster == native
    assert 0 < len(native["url"]) < NUM_URLS


def _scan_task_reason(df: ketch.DataFrame) -> str:
    """The "Scan tasks = N (...)" line of the optimized plan."""
    report = io.StringIO()
    df.explain(show_all=True, file=report)
    (line,) = {ln.strip() for ln in report.getvalue().splitlines() if "Scan tasks = " in ln}
    return line


def test_scan_tasks_under_an_expensive_pipeline_are_cut_for_the_clusters_cpus(
    on_ray: Any, tmp_path: Path
) -> None:
    import ray

    path = tmp_path / "urls.parquet"
    pq.write_table(pa.table({"url": [f"http://127.0.0.1:1/{i}" for i in range(NUM_URLS)]}), path)
    df = ketch.read_parquet(str(path)).with_column("digest", expensive_digest(col("url")))

    cluster_cpus = int(ray.cluster_resources()["CPU"])
    assert cluster_cpus == 3  # tests/conftest.py: 3 nodes of 1 CPU
    line = _scan_task_reason(df)
    assert f"cut for {cluster_cpus} workers x 2" in line, line
    assert f"Scan tasks = {2 * cluster_cpus} (" in line, line

    # A user's own num_compute_threads is kept.
    with ketch.execution_config_ctx(num_compute_threads=5):
        assert "cut for 5 workers x 2" in _scan_task_reason(df)
