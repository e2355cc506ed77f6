"""Series.from_pylist / from_numpy / cast as Daft 0.7.26 builds them (issue 28; expected types
printed by Daft 0.7.26 in benchmarks/.venv-peers)."""

from __future__ import annotations

import numpy as np

from ketch import DataType, Series


def test_from_pylist_python_dtype_keeps_the_objects() -> None:
    arrays = [np.zeros((2, 2)), np.ones(3)]
    series = Series.from_pylist(arrays, dtype=DataType.python())
    assert repr(series.datatype()) == "Python"
    back = series.to_pylist()
    assert [a.shape for a in back] == [(2, 2), (3,)] and np.array_equal(back[1], np.ones(3))
    assert Series.from_pylist([1, 2], dtype=DataType.python()).to_pylist() == [1, 2]


def test_from_pylist_infers_as_from_pydict() -> None:
    assert repr(Series.from_pylist([np.zeros((2, 2)), np.ones(3)]).datatype()) == "Tensor[Float64]"
    marker = object()
    objects = Series.from_pylist([marker, 1])
    assert repr(objects.datatype()) == "Python" and objects.to_pylist()[1] == 1


def test_from_numpy_and_cast() -> None:
    flat = Series.from_numpy(np.arange(3, dtype=np.int32))
    assert repr(flat.datatype()) == "Int32" and flat.to_pylist() == [0, 1, 2]
    assert flat.cast(DataType.float64()).to_pylist() == [0.0, 1.0, 2.0]
    assert flat.cast(DataType.string()).to_pylist() == ["0", "1", "2"]
    rows = Series.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert [list(r) for r in rows.to_pylist()] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
