"""url.download over HTTP against a real server on loopback started by the test: real image files,
a slow endpoint, a 404, a reset connection, a redirect, a flaky endpoint (retried), concurrency
bounded by max_connections and connections kept alive."""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from PIL import Image

import ketch
from ketch import col
from ketch.errors import KetchError
from ketch.io import HTTPConfig, IOConfig


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.max_active = 0
        self.requests = 0
        self.client_ports: set[int] = set()
        self.flaky_calls = 0
        self.stall_calls = 0
        self.release = threading.Event()  # set at teardown: a stalled handler returns
        self.files: dict[str, bytes] = {}


def _make_handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive

        def log_message(self, *args) -> None:  # quiet
            pass

        def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            with state.lock:
                state.active += 1
                state.requests += 1
                state.max_active = max(state.max_active, state.active)
                state.client_ports.add(self.client_address[1])
            try:
                path = self.path
                if path.startswith("/img/"):
                    time.sleep(0.01)  # long enough for requests to overlap
                    self._send(200, state.files[path[5:]], {"Content-Type": "application/octet-stream"})
                elif path.startswith("/slow/"):
                    time.sleep(0.5)
                    self._send(200, state.files[path[6:]])
                elif path.startswith("/redirect/"):
                    self._send(302, b"", {"Location": "/img/" + path[10:]})
                elif path == "/reset":
                    # Close the socket with RST, no response at all.
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )
                    self.connection.close()
                    self.close_connection = True
                elif path == "/stall-once":
                    # First request: headers and 100 of 1000 bytes, then nothing (a stalled body);
                    # later requests get the whole body.
                    with state.lock:
                        state.stall_calls += 1
                        first = state.stall_calls == 1
                    body = bytes(range(256)) * 3 + bytes(232)
                    if first:
                        self.send_response(200)
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body[:100])
                        self.wfile.flush()
                        state.release.wait(30)
                        self.close_connection = True
                    else:
                        self._send(200, body)
                elif path == "/flaky":
                    with state.lock:
                        state.flaky_calls += 1
                        first = state.flaky_calls == 1
                    if first:
                        self._send(503, b"try again")
                    else:
                        self._send(200, state.files["0.png"])
                else:
                    self._send(404, b"not found")
            finally:
                with state.lock:
                    state.active -= 1

    return Handler


@pytest.fixture
def server(rng) -> Iterator[tuple[str, _State, list[np.ndarray]]]:
    state = _State()
    arrays = []
    for i in range(60):
        a = rng.integers(0, 256, (8 + i % 5, 10, 3), dtype=np.uint8)
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, "PNG")
        state.files[f"{i}.png"] = buf.getvalue()
        arrays.append(a)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(state))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", state, arrays
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()


def test_download_and_decode_real_images_over_http(server):
    base, state, arrays = server
    urls = [f"{base}/img/{i}.png" for i in range(60)]
    df = ketch.from_pydict({"url": urls})
    df = df.with_column("img", col("url").url.download(max_connections=4).image.decode())
    out = df.to_pydict()
    for got, a in zip(out["img"], arrays, strict=True):
        np.testing.assert_array_equal(got, a)
    assert 1 <= state.max_active <= 4  # never more than max_connections at once
    assert state.requests == 60
    assert len(state.client_ports) < 60  # connections were reused (keep-alive)


def test_slow_endpoint_and_redirect_succeed(server):
    base, _, arrays = server
    urls = [f"{base}/slow/1.png", f"{base}/redirect/2.png"]
    out = ketch.from_pydict({"url": urls}).with_column("b", col("url").url.download()).to_pydict()
    assert out["b"][0] == _png(server, "1.png")
    assert out["b"][1] == _png(server, "2.png")


def _png(server, name: str) -> bytes:
    return server[1].files[name]


def test_flaky_endpoint_is_retried(server):
    base, state, _ = server
    out = (
        ketch.from_pydict({"url": [f"{base}/flaky"]}).with_column("b", col("url").url.download()).to_pydict()
    )
    assert out["b"] == [_png(server, "0.png")]
    assert state.flaky_calls == 2


def test_stalled_body_is_retried_like_other_transient_errors(server):
    # libcurl aborts the first transfer with CURLE_OPERATION_TIMEDOUT (below 1 KiB/s for 1 s).
    _, state, _ = server
    base = server[0]
    config = IOConfig(http=HTTPConfig(low_speed_timeout_s=1, max_retries=1))
    df = ketch.from_pydict({"url": [f"{base}/stall-once"]})
    out = df.with_column("b", col("url").url.download(io_config=config)).to_pydict()
    assert out["b"] == [bytes(range(256)) * 3 + bytes(232)]
    assert state.stall_calls == 2


def test_failures_raise_naming_the_row_or_yield_nulls_exactly(server):
    base, _, _ = server
    urls = [f"{base}/img/{i}.png" for i in range(10)]
    bad = {3: f"{base}/missing.png", 5: f"{base}/reset", 7: "http://127.0.0.1:1/refused.png"}
    for row, url in bad.items():
        urls[row] = url
    urls[8] = None
    df = ketch.from_pydict({"url": urls})
    nulls = df.with_column("b", col("url").url.download(on_error="null")).to_pydict()["b"]
    assert [i for i, v in enumerate(nulls) if v is None] == [3, 5, 7, 8]
    assert nulls[0] == _png(server, "0.png")

    only_404 = ketch.from_pydict({"url": [f"{base}/img/0.png", f"{base}/missing.png"]})
    with pytest.raises(KetchError, match=r"row 1 .*missing\.png.*HTTP 404"):
        only_404.with_column("b", col("url").url.download()).collect()
    only_reset = ketch.from_pydict({"url": [f"{base}/reset"]})
    with pytest.raises(KetchError, match="row 0"):
        only_reset.with_column("b", col("url").url.download()).collect()


def test_a_download_stopped_by_another_rows_failure_never_becomes_the_error(server):
    # Row 0 is still downloading (slow) when row 1's 404 stops the query; row 0's transfer is
    # given up, and that is a consequence, not an earlier failure: the error names row 1.
    base, _, _ = server
    urls = [f"{base}/slow/0.png", f"{base}/missing.png"]
    for _ in range(3):
        df = ketch.from_pydict({"url": urls})
        with pytest.raises(KetchError, match=r"row 1 .*missing\.png.*HTTP 404"):
            df.with_column("b", col("url").url.download()).collect()


def test_download_runs_on_the_io_pool_in_explain(server):
    base, _, _ = server
    df = ketch.from_pydict({"url": [f"{base}/img/0.png"]}).with_column("b", col("url").url.download())
    out = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out):
        df.explain(show_all=True)
    assert "Runs on = I/O pool" in out.getvalue()
