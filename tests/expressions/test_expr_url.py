"""url.download on local paths and file:// URLs: bytes equal the files' contents, errors name the path."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.errors import KetchTypeError


def _write_files(root: str, rng: np.random.Generator, count: int) -> list[str]:
    paths = []
    for i in range(count):
        size = 0 if i == 3 else int(rng.integers(1, 20_000))
        path = os.path.join(root, f"blob-{i:03d}.bin")
        with open(path, "wb") as f:
            f.write(rng.bytes(size))
        paths.append(path)
    return paths


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _download(urls: list[str | None], on_error: str = "raise", max_connections: int = 32) -> list:
    df = ketch.from_pydict({"u": urls})
    out = df.with_column("b", col("u").url.download(max_connections=max_connections, on_error=on_error))
    table = out.to_arrow()
    assert table.column_names == ["u", "b"]
    assert table.schema.field("b").type == pa.large_binary()
    return table.column("b").to_pylist()


def test_download_paths_and_file_urls(tmp_path, rng):
    paths = _write_files(str(tmp_path), rng, 40)
    urls = [p if i % 2 else "file://" + p for i, p in enumerate(paths)]
    urls[7] = None
    expected = [None if u is None else _read(p) for u, p in zip(urls, paths, strict=True)]
    assert expected[3] == b""  # an empty file downloads as empty bytes, not null
    assert _download(urls) == expected
    # Windows of max_connections reads give the same bytes in the same order.
    assert _download(urls, max_connections=3) == expected


def test_download_many_rows_across_morsels_keeps_order(tmp_path, rng):
    paths = _write_files(str(tmp_path), rng, 25)
    urls = [paths[i % len(paths)] for i in range(700)]  # more than one 64-row morsel
    assert _download(urls) == [_read(u) for u in urls]


def test_download_flat_form_is_identical(tmp_path, rng):
    paths = _write_files(str(tmp_path), rng, 10)
    df = ketch.from_pydict({"u": paths}).with_columns(
        {"ns": col("u").url.download(), "flat": col("u").download(max_connections=2)}
    )
    out = df.to_pydict()
    assert out["ns"] == out["flat"] == [_read(p) for p in paths]


def test_download_then_decode_image(tmp_path):
    from io import BytesIO

    from PIL import Image

    pixels = np.arange(5 * 6 * 3, dtype=np.uint8).reshape(5, 6, 3)
    path = tmp_path / "img.png"
    buf = BytesIO()
    Image.fromarray(pixels).save(buf, "PNG")
    path.write_bytes(buf.getvalue())
    out = ketch.from_pydict({"u": [str(path)]}).with_column("img", col("u").url.download().image.decode())
    np.testing.assert_array_equal(out.to_pydict()["img"][0], pixels)


def test_download_missing_file_raises_naming_the_path(tmp_path, rng):
    paths = _write_files(str(tmp_path), rng, 5)
    missing = str(tmp_path / "does-not-exist.bin")
    with pytest.raises(OSError) as info:
        _download([*paths[:2], missing, *paths[2:]])
    assert isinstance(info.value, ketch.errors.KetchError)
    assert missing in str(info.value)
    assert "row 2" in str(info.value)


def test_download_missing_file_on_error_null(tmp_path, rng):
    paths = _write_files(str(tmp_path), rng, 6)
    missing = str(tmp_path / "gone.bin")
    urls = [paths[0], missing, *paths[1:], "file://" + missing]
    got = _download(urls, on_error="null")
    assert [i for i, v in enumerate(got) if v is None] == [1, len(urls) - 1]
    assert [v for v in got if v is not None] == [_read(p) for p in paths]


def test_download_of_non_string_column_fails_at_plan_time():
    df = ketch.from_pydict({"n": [1, 2]})
    with pytest.raises(KetchTypeError, match=r"col\(n\).*int64"):
        df.with_column("b", col("n").url.download())


def test_download_argument_validation():
    with pytest.raises(ValueError, match="on_error"):
        col("u").url.download(on_error="skip")
    with pytest.raises(ValueError, match="max_connections"):
        col("u").download(max_connections=0)


@pytest.mark.parametrize("path", ["/proc/self/status", "/proc/cpuinfo"])
def test_pseudo_files_whose_size_reads_as_zero_are_read_whole(path):
    # stat() says 0 bytes, yet reading yields content: read to end of file, not `size` bytes.
    assert os.stat(path).st_size == 0
    df = ketch.from_pydict({"p": [path, "file://" + path]})
    out = df.with_column("b", col("p").url.download()).to_pydict()["b"]
    expected = _read(path)
    for got in out:
        assert len(got) > 0
        head = got.split(b"\n", 1)[0]
        assert head == expected.split(b"\n", 1)[0]  # /proc/self/status differs in later lines per process
