"""Memory is bounded by what operators produce, not by what they read: downloads, and UDFs that
return large values, have their morsels cut by the bytes they are seen to produce per row so the
query's accounted memory stays within its budget; the Parquet writer closes row groups by size.

These check the engine's own accounting (ExecutionStats.peak_memory_bytes) and the results; the
process RSS is measured by benchmarks/bench_udf_pipeline.py, not here."""

from __future__ import annotations

import hashlib
import io
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col

MIB = 1 << 20


def _body(index: int, size: int) -> bytes:
    seed = hashlib.sha256(str(index).encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


@pytest.fixture
def object_server() -> Iterator[str]:
    """Serves /<index>/<size>: `size` deterministic bytes."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            _, index, size = self.path.split("/")
            body = _body(int(index), int(size))
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@ketch.func
def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _most_morsels(stats: object, name: str) -> int:
    return max(op["morsels"] for op in stats.operators() if op["name"] == name)


def test_downloads_are_cut_to_fit_the_budget(object_server):
    budget, size, n = 32 * MIB, 2 * MIB, 24
    urls = [f"{object_server}/{i}/{size}" for i in range(n)]
    df = ketch.from_pydict({"url": urls}).with_column("data", col("url").url.download())
    df = df.select(col("url"), digest(col("data")).alias("sha"))
    with ketch.execution_config_ctx(memory_budget_bytes=budget):
        stats = df.explain_analyze(file=io.StringIO())
        out = df.to_pydict()
    assert out["sha"] == [hashlib.sha256(_body(i, size)).hexdigest() for i in range(n)]
    assert stats.peak_memory_bytes <= 1.5 * budget  # 64-row morsels would hold 128 MiB
    assert _most_morsels(stats, "Project") >= n // 2  # a few URLs per morsel, not one morsel of 24


def test_row_udf_with_large_results_is_cut_to_fit_the_budget():
    budget, size, n = 16 * MIB, 1 * MIB, 40

    @ketch.func
    def blob(i: int) -> bytes:
        return _body(i, size)

    df = ketch.from_pydict({"i": list(range(n))}).with_column("b", blob(col("i")))
    df = df.select(col("i"), digest(col("b")).alias("sha"))
    with ketch.execution_config_ctx(memory_budget_bytes=budget):
        stats = df.explain_analyze(file=io.StringIO())
        out = df.to_pydict()
    assert out["sha"] == [hashlib.sha256(_body(i, size)).hexdigest() for i in range(n)]
    assert stats.peak_memory_bytes <= 1.5 * budget  # one call of 40 rows would hold 40 MiB


def test_parquet_row_groups_close_by_size(object_server, tmp_path):
    size, n = 4 * MIB, 40
    urls = [f"{object_server}/{i}/{size}" for i in range(n)]
    df = ketch.from_pydict({"url": urls}).with_column("data", col("url").url.download())
    df.write_parquet(str(tmp_path))
    (path,) = list(tmp_path.glob("*.parquet"))
    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == n
    assert meta.num_row_groups >= 2  # 160 MiB in row groups of about 64 MiB
    for g in range(meta.num_row_groups):
        assert meta.row_group(g).total_byte_size <= 80 * MIB
    table = pq.read_table(path)
    assert table["data"].to_pylist() == [_body(i, size) for i in range(n)]


def test_python_object_results_are_cut_to_fit_the_budget():
    """A UDF returning Python objects (pickled in the engine) of 1 MiB each: calls shrink to a row
    or two once the first result is seen, instead of one call over every row."""
    import numpy as np

    budget, n = 16 * MIB, 40
    calls: list[int] = []

    @ketch.func.batch(return_dtype=ketch.DataType.python())
    def arrays(i):
        calls.append(len(i))
        return [np.full(MIB // 8, v, dtype=np.int64) for v in i.to_pylist()]

    @ketch.func
    def total(a: object) -> int:
        return int(a.sum())

    df = ketch.from_pydict({"i": list(range(n))}).with_column("a", arrays(col("i")))
    df = df.select(col("i"), total(col("a")).alias("s"))
    with ketch.execution_config_ctx(memory_budget_bytes=budget):
        stats = df.explain_analyze(file=io.StringIO())
        out = df.to_pydict()
    assert out["s"] == [i * (MIB // 8) for i in range(n)]
    assert stats.peak_memory_bytes <= 1.5 * budget
    assert max(calls) < n and len(calls) > 2  # not one call over all 40 rows
