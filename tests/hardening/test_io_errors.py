"""I/O errors that name the row and the cause: the OS's reason for a missing local file,
file.size() of an http(s) object by a HEAD request, and read_json naming the file's row (Arrow
counts rows per block)."""

from __future__ import annotations

import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

import ketch
from ketch import col
from ketch.errors import KetchIOError, KetchValueError


@pytest.fixture
def http_dir(tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"x" * 12_345)

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_missing_local_file_names_the_os_reason(tmp_path):
    df = ketch.from_pydict({"p": [str(tmp_path / "nope.bin")]})
    with pytest.raises(KetchIOError, match=r"url.download failed at row 0 .*No such file or directory"):
        df.select(col("p").url.download()).collect()
    with pytest.raises(KetchIOError, match=r"file_size failed at row 0 .*No such file or directory"):
        df.select(col("p").url.to_file().file.size()).collect()


def test_file_size_of_an_http_object_uses_head(http_dir):
    df = ketch.from_pydict({"u": [f"{http_dir}/blob.bin"]})
    assert df.select(col("u").url.to_file().file.size().alias("s")).to_pydict() == {"s": [12_345]}
    missing = ketch.from_pydict({"u": [f"{http_dir}/blob.bin", f"{http_dir}/missing.bin"]})
    with pytest.raises(KetchIOError, match=r"file_size failed at row 1 .*HTTP 404"):
        missing.select(col("u").url.to_file().file.size()).collect()


def test_read_json_names_the_row_of_the_file_past_the_first_block(tmp_path):
    path = tmp_path / "big.jsonl"
    pad = "x" * 100
    lines = [f'{{"a": {i}, "pad": "{pad}"}}' for i in range(50_000)] + ['{"a": 1,,}', '{"a": 2, "pad": ""}']
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(KetchValueError, match=r"in row 50000\b"):
        ketch.read_json(str(path)).collect()
