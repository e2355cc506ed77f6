"""UDFs as Daft 0.7 writes them: @ketch.cls without return_dtype, @ketch.method / .batch,
@ketch.udf(max_concurrency=), empty generators, tensors in and out of numpy."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import col


@ketch.cls(use_process=False)
class Model:
    def __init__(self, offset: int) -> None:
        self.offset = offset

    def __call__(self, x: int) -> int:  # undecorated: row-wise, Int64 from the annotation
        return x + self.offset

    def label(self, x: int) -> str:
        return f"{x}:{self.offset}"

    @ketch.method(return_dtype=ketch.DataType.float64())
    def half(self, x: int):  # no annotation: the mark's return_dtype
        return x / 2

    @ketch.method.batch(return_dtype=ketch.DataType.int64())
    def batch_sum(self, a: ketch.Series, b: ketch.Series):
        assert isinstance(a, ketch.Series)
        return pa.compute.add(a.to_arrow(), b.to_arrow())


def test_cls_without_return_dtype_infers_it_from_annotations():
    model = Model(10)
    df = ketch.from_pydict({"x": [1, 2, 3], "y": [4, 5, 6]})
    out = df.select(
        model(col("x")).alias("plus"),
        model.label(col("x")).alias("label"),
        model.half(col("x")).alias("half"),
        model.batch_sum(col("x"), col("y")).alias("sum"),
    )
    schema = out.schema()
    assert [str(schema[n].dtype) for n in ("plus", "label", "half", "sum")] == [
        "Int64",
        "String",
        "Float64",
        "Int64",
    ]
    assert out.to_pydict() == {
        "plus": [11, 12, 13],
        "label": ["1:10", "2:10", "3:10"],
        "half": [0.5, 1.0, 1.5],
        "sum": [5, 7, 9],
    }


def test_cls_methods_in_worker_processes():
    @ketch.cls(use_process=True, max_concurrency=1)
    class Scale:
        def __init__(self, k: int) -> None:
            self.k = k

        def __call__(self, x: int) -> int:
            return x * self.k

    df = ketch.from_pydict({"x": [1, 2, 3]})
    assert df.select(Scale(3)(col("x"))).to_pydict() == {"x": [3, 6, 9]}


def test_method_with_plain_values_runs_locally():
    model = Model(1)
    assert model(41) == 42
    assert model.label(2) == "2:1"


def test_method_without_type_is_refused_when_the_expression_is_built():
    @ketch.cls
    class NoHint:
        def guess(self, x):
            return x

    with pytest.raises(TypeError, match="NoHint.guess needs return_dtype"):
        NoHint().guess(col("x"))


def test_udf_accepts_max_concurrency():
    @ketch.udf(return_dtype=ketch.DataType.int64(), max_concurrency=2)
    def double(x: ketch.Series):
        return [v * 2 for v in x.to_pylist()]

    assert ketch.from_pydict({"x": [1, 2]}).select(double(col("x"))).to_pydict() == {"x": [2, 4]}
    with pytest.raises(ValueError, match="disagree"):
        ketch.udf(return_dtype=int, concurrency=1, max_concurrency=2)


@pytest.mark.parametrize("use_process", [False, True])
def test_generator_yielding_nothing_gives_a_null_row(use_process):
    @ketch.func(use_process=use_process)
    def repeat(value: str, n: int) -> Iterator[str]:
        for _ in range(n):
            yield value

    df = ketch.from_pydict({"id": [0, 1, 2], "value": ["pip", "install", "daft"], "n": [0, 2, 4]})
    out = df.select("id", repeat(col("value"), col("n"))).to_pydict()
    # Daft's documented example: the row with n=0 comes out once, with a null value.
    assert out == {"id": [0, 1, 1, 2, 2, 2, 2], "value": [None, "install", "install"] + ["daft"] * 4}


def test_numpy_arrays_into_a_variable_shape_tensor():
    @ketch.func(return_dtype=ketch.DataType.tensor(ketch.DataType.float32()))
    def block(n: int):
        return None if n == 0 else np.arange(n * 2, dtype=np.float32).reshape(n, 2)

    df = ketch.from_pydict({"n": [1, 3, 0]}).select(block(col("n")))
    assert str(df.schema()["n"].dtype) == "Tensor[Float32]"
    values = df.to_pydict()["n"]
    assert values[0].shape == (1, 2) and values[1].shape == (3, 2) and values[2] is None
    np.testing.assert_array_equal(values[1], np.arange(6, dtype=np.float32).reshape(3, 2))
    assert values[1].dtype == np.float32


def test_fixed_shape_tensors_come_out_as_numpy_arrays_of_their_shape():
    dtype = ketch.DataType.tensor(ketch.DataType.int32(), (2, 3))

    @ketch.func(return_dtype=dtype)
    def grid(x: int):
        return np.full((2, 3), x, dtype=np.int32)

    values = ketch.from_pydict({"x": [1, 2]}).select(grid(col("x"))).to_pydict()["x"]
    assert [v.shape for v in values] == [(2, 3), (2, 3)]
    np.testing.assert_array_equal(values[1], np.full((2, 3), 2, dtype=np.int32))


def test_udf_exception_names_match_daft():
    from ketch.errors import UDFException

    @ketch.func
    def boom(x: int) -> int:
        raise KeyError("nope")

    with pytest.raises(UDFException) as info:
        ketch.from_pydict({"x": [1]}).select(boom(col("x"))).collect()
    assert isinstance(info.value.original_exception, KeyError)
