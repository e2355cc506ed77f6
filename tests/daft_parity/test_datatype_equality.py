"""DataType equality is logical, as in Daft (issue 28): Arrow's 32- and 64-bit offset variants
of strings, binaries and lists are one type (``String``, ``Binary``, ``List``), at any depth."""

from __future__ import annotations

import pyarrow as pa
import pytest

import ketch
from ketch import DataType


def test_inferred_and_declared_types_compare_equal() -> None:
    df = ketch.from_pydict({"s": ["a"], "l": [["x"]], "st": [{"a": "x", "b": [b"y"]}]})
    schema = df.schema()
    assert schema["s"].dtype == DataType.string()  # Daft: True
    assert schema["l"].dtype == DataType.list(DataType.string())
    nested = DataType.struct({"a": DataType.string(), "b": DataType.list(DataType.binary())})
    assert schema["st"].dtype == nested
    assert len({schema["s"].dtype, DataType.string()}) == 1  # equal types hash alike


@pytest.mark.parametrize(
    ("small", "large"),
    [
        (pa.string(), pa.large_string()),
        (pa.binary(), pa.large_binary()),
        (pa.list_(pa.string()), pa.large_list(pa.large_string())),
        (pa.map_(pa.string(), pa.list_(pa.int64())), pa.map_(pa.large_string(), pa.large_list(pa.int64()))),
        (pa.list_(pa.string(), 2), pa.list_(pa.large_string(), 2)),
    ],
)
def test_offset_width_is_not_part_of_the_type(small: pa.DataType, large: pa.DataType) -> None:
    assert DataType(small) == DataType(large) and hash(DataType(small)) == hash(DataType(large))
    assert DataType(small) == large  # against an Arrow type too
    table = pa.table({"a": pa.array([], small), "b": pa.array([], large)})
    schema = ketch.from_arrow(table).schema()
    assert schema["a"].dtype == schema["b"].dtype
    assert hash(schema["a"].dtype) == hash(schema["b"].dtype)


def test_different_types_stay_different() -> None:
    assert DataType.string() != DataType.binary()
    assert DataType.list(DataType.int64()) != DataType.list(DataType.int32())
    assert DataType.struct({"a": DataType.string()}) != DataType.struct({"b": DataType.string()})
    fixed = ketch.from_arrow(pa.table({"f": pa.array([[1, 2]], pa.list_(pa.int64(), 2))})).schema()["f"].dtype
    assert fixed != DataType.list(DataType.int64())
