"""DataType.infer_from_type maps Python type hints as Daft 0.7.26 does (issue 28); the expected
type names were printed by Daft 0.7.26 (benchmarks/.venv-peers)."""

from __future__ import annotations

import datetime
import decimal
import typing

import numpy as np
import pytest

import ketch
from ketch import DataType, col


@pytest.mark.parametrize(
    ("hint", "name"),
    [
        (int, "Int64"), (float, "Float64"), (str, "String"), (bool, "Bool"), (bytes, "Binary"),
        (list[int], "List[Int64]"), (list[str], "List[String]"), (dict[str, int], "Map[String: Int64]"),
        (tuple[int, str], "Struct[_0: Int64, _1: String]"), (typing.Optional[int], "Int64"),  # noqa: UP045
        (int | None, "Int64"), (datetime.datetime, "Timestamp[us]"), (datetime.date, "Date"),
        (datetime.time, "Time[us]"), (datetime.timedelta, "Duration[us]"), (decimal.Decimal, "Python"),
        (np.int32, "Int32"), (np.float32, "Float32"), (object, "Python"), (type(None), "Null"),
        (list, "List[Python]"), (dict, "Map[Python: Python]"),
    ],
)  # fmt: skip
def test_infer_from_type_matches_daft(hint: object, name: str) -> None:
    assert repr(DataType.infer_from_type(hint)) == name


def test_generic_hints_work_as_udf_return_types() -> None:
    df = ketch.from_pydict({"x": [1, 2]})
    out = df.select(col("x").apply(lambda v: [v] * v, return_dtype=list[int]).alias("l"))
    assert out.to_pydict() == {"l": [[1], [2, 2]]}
