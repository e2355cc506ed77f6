"""Regressions for a hostile tester's findings (crashes, hangs, wrong results) in the image, HTTP,
file-listing, embedding and aggregation kernels."""

from __future__ import annotations

import io
import os
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image

import ketch
from ketch import col
from ketch.errors import KetchError
from ketch.io import HTTPConfig, IOConfig


def _decode(blobs, **kwargs):
    df = ketch.from_arrow(pa.table({"b": pa.array(blobs, pa.binary())}))
    return df.with_column("img", col("b").image.decode(**kwargs)).to_pydict()["img"]


def _save(image: Image.Image, fmt: str, **kwargs) -> bytes:
    buf = io.BytesIO()
    image.save(buf, fmt, **kwargs)
    return buf.getvalue()


# -- images ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_truncated_jpeg_is_an_error_not_gray_fill(rng, keep):
    data = _save(Image.fromarray(rng.integers(0, 256, (200, 300, 3), dtype=np.uint8)), "JPEG")
    cut = data[: int(len(data) * keep)]
    with pytest.raises(KetchError, match="row 0.*truncated JPEG"):
        _decode([cut])
    assert _decode([cut], on_error="null") == [None]


def test_jpeg_declaring_a_huge_size_is_refused_before_allocating():
    data = bytearray(_save(Image.new("RGB", (8, 8)), "JPEG"))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", 16384, 16384)  # height, width
    with pytest.raises(KetchError, match="exceeds the limit"):
        _decode([bytes(data)])


def test_truncated_png_with_large_header_is_refused_before_allocating():
    import zlib

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return (
            struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))
        )

    ihdr = struct.pack(">IIBBBBB", 12000, 12000, 8, 6, 0, 0, 0)  # 144M pixels RGBA: under the limit
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(bytes(100)))
    with pytest.raises(KetchError, match="truncated PNG"):
        _decode([data])


def test_palette_tiff_keeps_its_colors():
    image = Image.new("P", (2, 1))
    image.putpalette([255, 0, 0, 0, 0, 255] + [0] * 762)
    image.putdata([0, 1])
    (got,) = _decode([_save(image, "TIFF")])
    np.testing.assert_array_equal(got, [[[255, 0, 0], [0, 0, 255]]])


def test_gif_frame_smaller_than_the_screen_gets_the_background_color(rng):
    frame = Image.fromarray(rng.integers(0, 256, (4, 5, 3), dtype=np.uint8)).quantize(8)
    canvas = Image.new("P", (9, 7), 0)
    canvas.putpalette(frame.getpalette())
    canvas.paste(frame, (2, 1))
    data = _save(canvas, "GIF")
    (got,) = _decode([data])
    np.testing.assert_array_equal(got, np.asarray(Image.open(io.BytesIO(data)).convert("RGB")))


def test_crop_with_null_coordinate_or_huge_box(rng):
    blob = _save(Image.fromarray(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)), "PNG")
    df = ketch.from_pydict({"b": [blob, blob], "box": [[0, None, 1, 1], [1, 1, 2**62, 2**62]]})
    out = df.with_column("c", col("b").image.decode().image.crop(col("box"))).to_pydict()["c"]
    assert out[0] is None
    assert np.asarray(out[1]).shape == (5, 7, 3)
    huge = df.with_column("c", col("b").image.decode().image.crop((1, 1, 2**63 - 1, 2**63 - 1)))
    assert [np.asarray(x).shape for x in huge.to_pydict()["c"]] == [(5, 7, 3)] * 2


# -- embeddings and sums ---------------------------------------------------------------------------


def test_cosine_distance_with_null_elements_and_big_ints():
    values = pa.array([1.0, 99.0, 1.0, 1.0, 2.0, 3.0], pa.float64())
    validity = pa.array([True, False, True, True, True, True])
    masked = pa.array(values.to_pylist(), mask=pa.compute.invert(validity))
    emb = pa.FixedSizeListArray.from_arrays(masked, 3)
    df = ketch.from_arrow(pa.table({"e": emb}))
    got = df.select(col("e").embedding.cosine_distance([1.0, 1.0, 1.0]).alias("d")).to_pydict()["d"]
    assert got[0] is None and got[1] == pytest.approx(1 - 6 / (np.sqrt(14) * np.sqrt(3)))
    big = ketch.from_pydict({"e": [[2**62, 2**62]]})
    assert big.select(col("e").embedding.cosine_distance([1, 1]).alias("d")).to_pydict()["d"][
        0
    ] == pytest.approx(0)


@pytest.mark.parametrize(
    "values, dtype",
    [([2**63 - 1, 0], pa.int64()), ([-(2**63), 0], pa.int64()), ([2**64 - 1, 0], pa.uint64())],
)
def test_sums_at_the_limits_are_not_overflows(values, dtype):
    df = ketch.from_arrow(pa.table({"k": [1, 1], "v": pa.array(values, dtype)}))
    assert df.groupby("k").agg(col("v").sum()).to_pydict()["v"] == [sum(values)]


# -- files -----------------------------------------------------------------------------------------


def test_glob_does_not_follow_symlink_loops(tmp_path):
    root = tmp_path / "g"
    root.mkdir()
    (root / "a.jpg").write_bytes(b"x")
    (root / "sub").mkdir()
    (root / "sub" / "b.jpg").write_bytes(b"y")
    os.symlink(root, root / "loop1")
    os.symlink(root, root / "sub" / "loop2")
    for pattern in [str(root), str(root / "**" / "*.jpg")]:
        paths = ketch.from_glob_path(pattern).to_pydict()["path"]
        assert paths == [f"file://{root / 'a.jpg'}", f"file://{root / 'sub' / 'b.jpg'}"]


def test_literal_file_with_glob_characters_and_hidden_files(tmp_path):
    (tmp_path / "q[1].jpg").write_bytes(b"1")
    (tmp_path / ".hidden").write_bytes(b"2")
    assert ketch.from_glob_path(str(tmp_path / "q[1].jpg")).to_pydict()["path"] == [
        f"file://{tmp_path / 'q[1].jpg'}"
    ]
    assert len(ketch.from_glob_path(str(tmp_path)).to_pydict()["path"]) == 2
    with pytest.raises(ValueError, match="from_glob_path needs at least one path"):
        ketch.from_glob_path([])


# -- HTTP ------------------------------------------------------------------------------------------


@pytest.fixture
def nasty_server() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            try:
                if self.path == "/endless":
                    self.send_response(200)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    chunk = b"x" * 65536
                    while True:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                elif self.path == "/stall":
                    self.send_response(200)
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    self.wfile.flush()
                    time.sleep(30)
                elif self.path == "/to-ftp":
                    self.send_response(302)
                    self.send_header("Location", "ftp://127.0.0.1/x")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    body = b"ok " + self.path.encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_endless_body_fails_its_row_at_the_size_limit(nasty_server):
    config = IOConfig(http=HTTPConfig(max_object_bytes=1_000_000))
    df = ketch.from_pydict({"u": [f"{nasty_server}/endless", f"{nasty_server}/fine"]})
    out = df.with_column("b", col("u").url.download(on_error="null", io_config=config)).to_pydict()["b"]
    assert out == [None, b"ok /fine"]
    with pytest.raises(KetchError, match="row 0.*larger than the limit of 1000000 bytes"):
        df.with_column("b", col("u").url.download(io_config=config)).collect()


def test_stalled_transfer_times_out_once(nasty_server):
    config = IOConfig(http=HTTPConfig(low_speed_timeout_s=1))
    df = ketch.from_pydict({"u": [f"{nasty_server}/stall"]})
    start = time.monotonic()
    out = df.with_column("b", col("u").url.download(on_error="null", io_config=config)).to_pydict()["b"]
    assert out == [None]
    assert time.monotonic() - start < 10  # three attempts (stalls are retried) of about 1 s, not of 60 s


def test_redirects_only_to_http(nasty_server):
    df = ketch.from_pydict({"u": [f"{nasty_server}/to-ftp", f"{nasty_server}/with space"]})
    out = df.with_column("b", col("u").url.download(on_error="null")).to_pydict()["b"]
    assert out == [None, b"ok /with%20space"]
