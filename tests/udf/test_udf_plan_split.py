"""The optimizer gives each UDF, and the async I/O functions, a projection node of its own (after
pushdowns), and leaves projections alone when splitting would change what a stage reads."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import ketch
from ketch import col


@ketch.func(return_dtype=int)
def plus_one(x: int) -> int:
    return x + 1


@ketch.func(return_dtype=int)
def times_two(x: int) -> int:
    return x * 2


def _optimized(df: ketch.DataFrame) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        df.explain(show_all=True)
    text = out.getvalue()
    return text[text.index("== Optimized Logical Plan ==") : text.index("== Physical Plan ==")]


def test_each_udf_and_the_io_functions_get_their_own_node(tmp_path):
    (tmp_path / "f.bin").write_bytes(b"abc")
    df = ketch.from_pydict({"a": [1, 2], "b": [3, 4], "p": [str(tmp_path / "f.bin")] * 2})
    df = df.select(
        (col("a") + 10).alias("a10"),
        plus_one(col("a")).alias("u1"),
        times_two(col("b")).alias("u2"),
        col("p").url.download().alias("data"),
        col("b"),
    )
    plan = _optimized(df)
    projects = [line for line in plan.splitlines() if line.startswith("* Project")]
    assert len(projects) == 5, plan  # plain, I/O, UDF 1, UDF 2, final column order
    assert "plus_one" in projects[2] and "times_two" not in projects[2]
    assert "times_two" in projects[1] and "url_download" not in projects[1]
    assert "url_download" in projects[3]
    assert "(col(a) + lit(10))" in projects[4] and "plus_one" not in projects[4]
    out = df.to_pydict()
    assert out == {"a10": [11, 12], "u1": [2, 3], "u2": [6, 8], "data": [b"abc", b"abc"], "b": [3, 4]}


def test_projection_that_would_shadow_a_udf_input_is_left_whole():
    df = ketch.from_pydict({"a": [1, 2]}).select((col("a") * 100).alias("a"), plus_one(col("a")).alias("u"))
    plan = _optimized(df)
    assert len([line for line in plan.splitlines() if line.startswith("* Project")]) == 1
    assert df.to_pydict() == {"a": [100, 200], "u": [2, 3]}


def test_single_udf_with_pass_through_columns_is_not_split():
    df = ketch.from_pydict({"a": [1], "b": [2]}).with_column("u", plus_one(col("a")))
    plan = _optimized(df)
    assert len([line for line in plan.splitlines() if line.startswith("* Project")]) == 1


def _physical(df: ketch.DataFrame) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        df.explain(show_all=True)
    text = out.getvalue()
    return text[text.index("== Physical Plan ==") :]


def test_download_nested_in_image_kernels_is_its_own_io_stage(tmp_path):
    import numpy as np
    from PIL import Image

    paths = []
    for i in range(3):
        path = tmp_path / f"{i}.png"
        Image.fromarray(np.full((4, 6, 3), i * 40, dtype=np.uint8)).save(path)
        paths.append(str(path))
    df = ketch.from_pydict({"url": paths})
    df = df.with_column("img", col("url").url.download().image.decode(mode="RGB").image.resize(3, 2))
    plan = _physical(df)
    nodes = plan.split("* ")
    download = [n for n in nodes if "url_download" in n]
    decode = [n for n in nodes if "image_decode" in n]
    assert len(download) == 1 and "Runs on = I/O pool" in download[0], plan
    assert "image_decode" not in download[0], plan
    assert len(decode) == 1 and "Runs on = I/O pool" not in decode[0], plan
    out = df.to_pydict()
    assert [img.shape for img in out["img"]] == [(2, 3, 3)] * 3
    assert [int(img[0, 0, 0]) for img in out["img"]] == [0, 40, 80]
    assert list(out) == ["url", "img"]  # the I/O stage's temporary column is gone


def test_image_decode_nested_in_other_kernels_is_a_stage_of_its_own():
    # A decoded image is ~100x its file: as a stage's output the executor sizes morsels by it
    # (inside resize(decode(b)) it was an unseen intermediate of 64 images per call).
    import numpy as np
    from PIL import Image

    blobs = []
    for i in range(3):
        buffer = io.BytesIO()
        Image.fromarray(np.full((4, 6, 3), i * 40, dtype=np.uint8)).save(buffer, format="PNG")
        blobs.append(buffer.getvalue())
    df = ketch.from_pydict({"b": blobs}).select(
        col("b").image.decode(mode="RGB").image.resize(3, 2).alias("img")
    )
    plan = _physical(df)
    nodes = plan.split("* ")
    decode = [n for n in nodes if "image_decode" in n]
    assert len(decode) == 1 and "image_resize" not in decode[0], plan
    resize = [n for n in nodes if "image_resize" in n]
    assert len(resize) == 1 and "__ketch_split_" in resize[0], plan
    assert [int(img[0, 0, 0]) for img in df.to_pydict()["img"]] == [0, 40, 80]
    alone = ketch.from_pydict({"b": blobs}).select(col("b").image.decode(mode="RGB").alias("img"))
    assert "__ketch_split_" not in _physical(alone)  # a decode at the root needs no stage of its own
