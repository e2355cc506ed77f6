"""Casts between tensors, images and embeddings (Daft's cast table): a variable-shape Tensor to
Image, FixedShapeImage, FixedShapeTensor and Embedding, and an Image back to a Tensor. The types
printed are those Daft 0.7.26 prints for the same casts; the values are the same pixels."""

from __future__ import annotations

import numpy as np
import pytest

import ketch
from ketch import DataType, col
from ketch.errors import KetchError, KetchTypeError

PIXELS = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3), np.arange(12, 24, dtype=np.uint8).reshape(2, 2, 3)]


def _cast(df: ketch.DataFrame, to: DataType) -> tuple[str, list]:
    out = df.select(col(df.column_names[0]).cast(to))
    return str(out.schema()[df.column_names[0]].dtype), out.to_pydict()[df.column_names[0]]


@pytest.mark.parametrize(
    ("to", "printed"),
    [
        (DataType.image("RGB"), "Image[RGB]"),
        (DataType.image("RGB", 2, 2), "Image[RGB; 2 x 2]"),
        (DataType.tensor(DataType.uint8(), (2, 2, 3)), "Tensor[UInt8; [2, 2, 3]]"),
    ],
)
def test_a_uint8_tensor_casts_to_images_and_fixed_shape_tensors(to: DataType, printed: str):
    df = ketch.from_pydict({"t": [*PIXELS, None]})
    assert str(df.schema()["t"].dtype) == "Tensor[UInt8]"
    dtype, values = _cast(df, to)
    assert dtype == printed
    assert values[2] is None
    for got, want in zip(values[:2], PIXELS, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_an_image_casts_back_to_the_tensor_of_its_pixels():
    images = ketch.from_pydict({"t": PIXELS}).select(col("t").cast(DataType.image("RGB")))
    dtype, values = _cast(images, DataType.tensor(DataType.uint8()))
    assert dtype == "Tensor[UInt8]"
    for got, want in zip(values, PIXELS, strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_float_tensor_casts_to_an_embedding_of_its_size():
    df = ketch.from_pydict({"e": [np.ones(4, np.float32), np.arange(4, dtype=np.float32)]})
    dtype, values = _cast(df, DataType.embedding(DataType.float32(), 4))
    assert dtype == "Embedding[Float32; 4]"
    np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), [[1, 1, 1, 1], [0, 1, 2, 3]])


def test_a_row_of_another_shape_fails_naming_its_row_and_shape():
    df = ketch.from_pydict({"t": [np.zeros((2, 3), np.uint8)] * 5 + [np.zeros((2, 2), np.uint8)]})
    with pytest.raises(KetchError, match=r"tensor of shape \[2, 2\] at row 5 to Tensor\[UInt8; \[2, 3\]\]"):
        df.select(col("t").cast(DataType.tensor(DataType.uint8(), (2, 3)))).collect()
    with pytest.raises(KetchError, match=r"tensor of shape \[2, 3\] at row 0 to Image\[RGB\]"):
        df.select(col("t").cast(DataType.image("RGB"))).collect()


def test_an_impossible_cast_names_the_logical_types_not_the_storage():
    df = ketch.from_pydict({"t": PIXELS})
    with pytest.raises(KetchTypeError, match=r"of type Tensor\[UInt8\] to ") as error:
        df.select(col("t").cast(DataType.int64())).collect()
    assert "struct<" not in str(error.value)
