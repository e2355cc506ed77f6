"""Casts between multimodal types that share a layout (FixedShapeImage ↔ FixedShapeTensor,
extension ↔ storage), zero-copy numpy / torch views, and the Python type."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image

import ketch
from ketch import col
from ketch.errors import KetchTypeError


def _thumbs(rng, n: int = 6) -> ketch.DataFrame:
    blobs = []
    for _ in range(n):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (9, 11, 3), dtype=np.uint8)).save(buf, "PNG")
        blobs.append(buf.getvalue())
    df = ketch.from_pydict({"b": blobs}).with_column("img", col("b").image.decode(mode="RGB"))
    return df.with_column("thumb", col("img").image.resize(5, 4))


def test_fixed_shape_image_casts_to_tensor_and_back_without_copying(rng):
    df = _thumbs(rng)
    tensor_type = ketch.DataType.tensor(ketch.DataType.uint8(), (4, 5, 3))
    out = df.with_column("t", col("thumb").cast(tensor_type)).with_column(
        "back", col("t").cast(ketch.DataType.image("RGB", 4, 5))
    )
    table = out.to_arrow()
    assert table.schema.field("t").type == tensor_type.to_arrow()
    images = ketch.Series(table.column("thumb")).to_numpy()
    tensors = ketch.Series(table.column("t")).to_numpy()
    assert tensors.shape == (6, 4, 5, 3)
    np.testing.assert_array_equal(tensors, images)
    np.testing.assert_array_equal(ketch.Series(table.column("back")).to_numpy(), images)


def test_cast_to_tensor_of_another_shape_fails_at_plan_time(rng):
    df = _thumbs(rng, 1)
    with pytest.raises(KetchTypeError, match="cannot cast"):
        df.with_column("t", col("thumb").cast(ketch.DataType.tensor(ketch.DataType.uint8(), (5, 4, 3))))
    with pytest.raises(KetchTypeError, match="cannot cast"):
        df.with_column("t", col("thumb").cast(ketch.DataType.tensor(ketch.DataType.float32(), (4, 5, 3))))


def test_embedding_is_a_fixed_size_list_and_to_numpy_is_zero_copy(rng):
    values = rng.normal(size=(7, 4)).astype(np.float32)
    arr = pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), 4)
    df = ketch.from_arrow(pa.table({"e": arr}))
    emb = df.with_column("e2", col("e").cast(ketch.DataType.embedding(ketch.DataType.float32(), 4)))
    series = ketch.Series(emb.to_arrow().column("e2"))
    block = series.to_numpy()
    np.testing.assert_array_equal(block, values)
    assert block.shape == (7, 4)
    sliced = ketch.Series(arr.slice(2, 3)).to_numpy()
    np.testing.assert_array_equal(sliced, values[2:5])


def test_to_torch_shares_the_arrow_buffer(rng):
    import torch

    table = _thumbs(rng).to_arrow()
    column = table.column("thumb").combine_chunks()
    series = ketch.Series(column)
    tensor = series.to_torch()
    assert tensor.shape == (6, 4, 5, 3) and tensor.dtype == torch.uint8
    child = column.storage.values
    assert tensor.data_ptr() == child.buffers()[1].address + child.offset  # no copy
    np.testing.assert_array_equal(tensor.numpy(), series.to_numpy())
    with pytest.raises(TypeError, match="fixed-shape"):
        ketch.Series(table.column("img")).to_torch()


class Point:
    def __init__(self, x: int) -> None:
        self.x = x

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Point) and other.x == self.x


def test_python_objects_travel_through_the_engine():
    df = ketch.from_pydict({"i": [1, 2, 3, 4], "o": [Point(1), None, {"k": Point(3)}, [Point(4)]]})
    assert df.schema().field("o").type == ketch.DataType.python().to_arrow()
    out = df.where(col("i") != 1).sort("i", desc=True).to_pydict()
    assert out == {"i": [4, 3, 2], "o": [[Point(4)], {"k": Point(3)}, None]}


def test_udf_returning_python_objects():
    @ketch.udf(return_dtype=ketch.DataType.python())
    def make_points(x):
        return [Point(v) for v in x.to_pylist()]

    df = ketch.from_pydict({"x": [5, 6]}).with_column("p", make_points(col("x")))
    assert df.to_pydict()["p"] == [Point(5), Point(6)]
    got = df.with_column("px", col("p").apply(lambda p: p.x, return_dtype=int)).to_pydict()["px"]
    assert got == [5, 6]
