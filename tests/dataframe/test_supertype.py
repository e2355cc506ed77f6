"""Daft's supertype table (daft_core get_supertype), as Ketch applies it to Arrow types before
stacking columns (union by position / name, unpivot)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from ketch.dataframe_ops.supertype import supertype

CASES = [
    (pa.int8(), pa.int16(), pa.int16()),
    (pa.int8(), pa.uint8(), pa.int16()),
    (pa.int16(), pa.uint8(), pa.int16()),
    (pa.int32(), pa.uint16(), pa.int32()),
    (pa.int32(), pa.uint32(), pa.int64()),
    (pa.int64(), pa.uint64(), pa.float64()),  # Daft follows numpy
    (pa.uint8(), pa.uint32(), pa.uint32()),
    (pa.int16(), pa.float32(), pa.float32()),
    (pa.int32(), pa.float32(), pa.float64()),
    (pa.uint16(), pa.float32(), pa.float32()),
    (pa.uint32(), pa.float32(), pa.float64()),
    (pa.float32(), pa.float64(), pa.float64()),
    (pa.bool_(), pa.int32(), pa.int32()),
    (pa.bool_(), pa.float32(), pa.float32()),
    (pa.null(), pa.string(), pa.string()),
    (pa.date32(), pa.timestamp("us"), pa.timestamp("us")),
    (pa.int64(), pa.string(), pa.string()),
    (pa.bool_(), pa.large_string(), pa.large_string()),
    (pa.string(), pa.large_string(), pa.large_string()),
    (pa.list_(pa.int32()), pa.list_(pa.int64()), pa.large_list(pa.int64())),
    (pa.binary(), pa.string(), None),
    (pa.list_(pa.int64()), pa.string(), None),
    (pa.int64(), pa.binary(), None),
]


@pytest.mark.parametrize(("left", "right", "expected"), CASES)
def test_supertype_table(left, right, expected):
    assert supertype(left, right) == expected
    assert supertype(right, left) == expected  # symmetric
    assert supertype(left, left) == left
