"""File columns: ketch.from_files / url.to_file references; path, size, guess_mime_type (magic
bytes from one ranged read, never the extension) and read, over local files and HTTP."""

from __future__ import annotations

import gzip
import io
import threading
import wave
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

import ketch
from ketch import col
from ketch.errors import KetchError, KetchTypeError


def _image(fmt: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (4, 3), (10, 20, 30)).save(buf, fmt)
    return buf.getvalue()


def _samples() -> dict[str, tuple[bytes, str]]:
    """name (with a misleading extension) → (contents, expected MIME type)."""
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as z:
        z.writestr("a.txt", "hello")
    wbuf = io.BytesIO()
    with wave.open(wbuf, "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(8000), w.writeframes(b"\0\0" * 100)
    pbuf = io.BytesIO()
    pq.write_table(pa.table({"x": [1, 2]}), pbuf)
    return {
        "png.txt": (_image("PNG"), "image/png"),
        "jpeg.png": (_image("JPEG"), "image/jpeg"),
        "gif.bin": (_image("GIF"), "image/gif"),
        "webp.jpg": (_image("WEBP"), "image/webp"),
        "tiff.dat": (_image("TIFF"), "image/tiff"),
        "bmp.gif": (_image("BMP"), "image/bmp"),
        "pdf.png": (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", "application/pdf"),
        "zip.csv": (zbuf.getvalue(), "application/zip"),
        "gz.txt": (gzip.compress(b"hello" * 100), "application/gzip"),
        "parquet.json": (pbuf.getvalue(), "application/vnd.apache.parquet"),
        "wav.mp3": (wbuf.getvalue(), "audio/wav"),
        "text.bin": ("plain text, with ünïcode\n".encode(), "text/plain"),
        "empty.png": (b"", "application/x-empty"),
        "random.txt": (bytes(range(256)), "application/octet-stream"),
    }


def test_from_files_lists_lazily_and_sniffs_mime_types(tmp_path):
    samples = _samples()
    for name, (data, _) in samples.items():
        (tmp_path / name).write_bytes(data)
    df = ketch.from_files(str(tmp_path / "*"))
    assert str(df.schema().field("file").type) == "File"
    out = df.select(
        col("file").file.path().alias("path"),
        col("file").file.size().alias("size"),
        col("file").file.guess_mime_type().alias("mime"),
        col("file").file.read().alias("data"),
    ).to_pydict()
    names = [p.rsplit("/", 1)[1] for p in out["path"]]
    assert names == sorted(samples)
    for name, size, mime, data in zip(names, out["size"], out["mime"], out["data"], strict=True):
        assert size == len(samples[name][0])
        assert mime == samples[name][1], name
        assert data == samples[name][0]


def test_file_kernels_on_paths_with_nulls_and_missing_files(tmp_path):
    (tmp_path / "a.bin").write_bytes(_image("PNG"))
    paths = [str(tmp_path / "a.bin"), None, str(tmp_path / "missing.bin")]
    df = ketch.from_pydict({"p": paths}).with_column("f", col("p").url.to_file())
    out = df.select(col("f").file.guess_mime_type(on_error="null").alias("m")).to_pydict()
    assert out["m"] == ["image/png", None, None]
    with pytest.raises(KetchError, match=r"row 2 .*missing\.bin"):
        df.select(col("f").file.size()).collect()
    with pytest.raises(KetchTypeError, match="expects a File column"):
        df.select(col("p").file.read())


def test_directory_and_fifo_are_refused_not_blocked(tmp_path):
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    df = ketch.from_pydict({"p": [str(fifo), str(tmp_path)]}).with_column("f", col("p").url.to_file())
    out = df.select(col("f").file.read(on_error="null").alias("b")).to_pydict()
    assert out["b"] == [None, None]
    with pytest.raises(KetchError, match="not a regular file"):
        ketch.from_pydict({"p": [str(fifo)]}).with_column("b", col("p").url.download()).collect()


class _RangeServer:
    def __init__(self, body: bytes, honor_range: bool) -> None:
        self.body = body
        self.honor_range = honor_range
        self.bytes_sent = 0
        self.ranges: list[str | None] = []
        self.finished = threading.Event()  # set when a response has been written (or cut off)


@pytest.fixture(params=[True, False], ids=["range", "no-range"])
def range_server(request) -> Iterator[tuple[str, _RangeServer]]:
    state = _RangeServer(_image("PNG") + bytes(16_000_000), honor_range=request.param)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            header = self.headers.get("Range")
            state.ranges.append(header)
            body = state.body
            if header and state.honor_range:
                start, end = header.split("=")[1].split("-")
                body = body[int(start) : int(end) + 1]
                self.send_response(206)
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for i in range(0, len(body), 16384):
                    self.wfile.write(body[i : i + 16384])
                    state.bytes_sent += min(16384, len(body) - i)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
            finally:
                state.finished.set()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/big.png", state
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_guess_mime_type_over_http_reads_only_a_range(range_server):
    url, state = range_server
    df = ketch.from_pydict({"u": [url]}).with_column("f", col("u").url.to_file())
    assert df.select(col("f").file.guess_mime_type().alias("m")).to_pydict()["m"] == ["image/png"]
    assert state.ranges == ["bytes=0-63"]
    assert state.finished.wait(30)  # the server thread has counted what it sent
    if state.honor_range:
        assert state.bytes_sent == 64
    else:
        assert state.bytes_sent < len(state.body)  # the transfer was cut short


def test_file_read_and_mime_of_pseudo_files_whose_size_reads_as_zero():
    df = ketch.from_pydict({"p": ["/proc/cpuinfo", "/proc/self/status"]}).with_column(
        "f", col("p").url.to_file()
    )
    out = (
        df.with_column("b", col("f").file.read())
        .with_column("m", col("f").file.guess_mime_type())
        .to_pydict()
    )
    with open("/proc/cpuinfo", "rb") as f:
        assert out["b"][0] == f.read()
    assert out["b"][1].startswith(b"Name:")
    assert out["m"] == ["text/plain", "text/plain"]
