"""ketch.File (Daft's daft.File): File column values reach UDFs as File objects (path, name, open,
read, size, mime_type, to_tempfile), UDFs return File columns, and image.decode reads File columns."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
from PIL import Image

import ketch
from ketch import DataType, col


def write_png(path, pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, "PNG")
    path.write_bytes(buf.getvalue())
    return buf.getvalue()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"first line\nsecond\n")
    (tmp_path / "b.txt").write_bytes(b"x" * 5000)
    pixels = np.arange(6 * 7 * 3, dtype=np.uint8).reshape(6, 7, 3)
    write_png(tmp_path / "c.png", pixels)
    return tmp_path, pixels


def test_udf_receives_file_objects(files) -> None:
    root, _ = files

    @ketch.func
    def describe(f: ketch.File) -> str:
        assert isinstance(f, ketch.File)
        with f.open() as fh:
            head = fh.read(5)
        return f"{f.name}:{f.size()}:{head!r}:{f.mime_type()}"

    out = ketch.from_files(str(root / "*")).select(describe(col("file")).alias("d")).to_pydict()["d"]
    assert out == [
        "a.txt:18:b'first':text/plain",
        "b.txt:5000:b'xxxxx':text/plain",
        f"c.png:{(root / 'c.png').stat().st_size}:b'\\x89PNG\\r':image/png",
    ]


def test_file_api_outside_a_query(files, tmp_path) -> None:
    root, _ = files
    f = ketch.File(str(root / "a.txt"))
    assert f.path == str(root / "a.txt") and f.name == "a.txt" and str(f) == f.path
    assert f.read() == b"first line\nsecond\n"
    assert f.size() == 18 and f.exists()
    assert f.mime_type() == "text/plain"
    with f.to_tempfile() as tmp:
        assert tmp.read() == b"first line\nsecond\n"
    assert pickle.loads(pickle.dumps(f)) == f
    uri = ketch.File("file://" + str(root / "b.txt"))
    assert uri.read() == b"x" * 5000
    missing = ketch.File(str(tmp_path / "nope.bin"))
    assert not missing.exists()
    with pytest.raises(FileNotFoundError):
        missing.read()
    with pytest.raises(ValueError, match="non-empty path"):
        ketch.File("")


def test_to_pydict_and_udf_returning_files(files) -> None:
    root, _ = files
    df = ketch.from_files(str(root / "*.txt"))
    values = df.to_pydict()["file"]
    assert values == [ketch.File(str(root / "a.txt")), ketch.File(str(root / "b.txt"))]
    assert values[1].size() == 5000

    @ketch.func
    def sibling(f: ketch.File) -> ketch.File:
        return ketch.File(f.path.replace(".txt", ".png").replace("a.png", "c.png").replace("b.png", "c.png"))

    out = df.select(sibling(col("file")).alias("g"))
    assert str(out.schema().field("g").type) == "File"
    assert out.select(col("g").file.guess_mime_type().alias("m")).to_pydict()["m"] == ["image/png"] * 2

    @ketch.func(return_dtype=DataType.file())
    def as_path(f: ketch.File):
        return f.path

    paths = df.select(as_path(col("file")).alias("g")).select(col("g").file.path().alias("p"))
    assert paths.to_pydict()["p"] == [str(root / "a.txt"), str(root / "b.txt")]


def test_image_decode_reads_a_file_column(files, tmp_path) -> None:
    root, pixels = files
    df = ketch.from_files(str(root / "*.png")).select(col("file").image.decode(mode="RGB").alias("img"))
    (img,) = df.to_pydict()["img"]
    np.testing.assert_array_equal(np.asarray(img), pixels)
    # Missing files: an error naming the path, or null with on_error="null".
    refs = ketch.from_pydict({"p": [str(root / "c.png"), str(tmp_path / "gone.png")]}).with_column(
        "f", col("p").url.to_file()
    )
    out = refs.select(col("f").image.decode(on_error="null").alias("img")).to_pydict()["img"]
    assert out[1] is None and np.asarray(out[0]).shape == (6, 7, 3)
    with pytest.raises(Exception, match="gone.png"):
        refs.select(col("f").image.decode()).collect()
    # A File column of non-images fails per row like bytes do.
    with pytest.raises(ValueError, match="image.decode failed at row 0"):
        ketch.from_files(str(root / "a.txt")).select(col("file").image.decode()).collect()
