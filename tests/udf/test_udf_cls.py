"""Python UDFs: @ketch.cls (instance pool, batch sizes, order), @ketch.udf, error propagation."""

from __future__ import annotations

import os
import threading

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.errors import UDFError
from ketch.runners import get_runner

# Each test runs on the native and on the Ray runner (tests/conftest.py: runner).
pytestmark = pytest.mark.usefixtures("runner")
N = 5000


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
def test_cls_init_count_batch_sizes_and_order(tmp_path, rng):
    log = tmp_path / "init.log"
    calls: list[tuple[int, int]] = []  # (batch length, first value) per __call__
    lock = threading.Lock()

    @ketch.cls(return_dtype=ketch.DataType.int64(), batch_size=64, concurrency=2)
    class Scale:
        def __init__(self, factor: int) -> None:
            self.factor = factor
            with open(log, "a") as f:
                f.write(f"init {threading.get_ident()}\n")

        def __call__(self, x: ketch.Series) -> np.ndarray:
            assert isinstance(x, ketch.Series)
            values = x.to_numpy()
            with lock:
                calls.append((len(x), int(values[0])))
            return values * self.factor + 1

    values = rng.permutation(N).astype(np.int64)
    df = ketch.from_pydict({"x": values, "i": np.arange(N)})
    out = df.with_column("y", Scale(3)(col("x"))).to_pydict()

    assert out["i"] == list(range(N))  # order preserved
    assert out["y"] == (values * 3 + 1).tolist()

    inits = log.read_text().splitlines()
    assert 1 <= len(inits) <= 2, inits
    sizes = [n for n, _ in calls]
    assert sum(sizes) == N
    assert max(sizes) <= 64
    assert len(calls) >= N // 64  # really batched, not one call
    # Every row went through exactly one batch: the batch starts are distinct values of x.
    assert len({first for _, first in calls}) == len(calls)


def test_cls_bound_constructor_args_and_lazy_init(tmp_path):
    log = tmp_path / "init.log"

    @ketch.cls(return_dtype=str, batch_size=10)
    class Prefix:
        def __init__(self, prefix: str, *, upper: bool = False) -> None:
            self.prefix = prefix.upper() if upper else prefix
            with open(log, "a") as f:
                f.write("init\n")

        def __call__(self, s: ketch.Series) -> list:
            return [None if v is None else self.prefix + v for v in s.to_pylist()]

    expr = Prefix("pre-", upper=True)(col("s"))
    assert not log.exists()  # binding arguments runs no __init__
    df = ketch.from_pydict({"s": ["a", None, "c"] * 7})
    out = df.select(expr.alias("p")).to_pydict()
    assert out["p"] == ["PRE-a", None, "PRE-c"] * 7
    # Concurrency defaults to one instance per CPU; instances start lazily, when batches need them.
    # On Ray each node's engine worker has its own instances (the rows are cut over the workers).
    inits = log.read_text().splitlines()
    nodes = 1
    if getattr(get_runner(), "name", "") == "ray":
        import ray

        nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
    assert set(inits) == {"init"} and 1 <= len(inits) <= (os.cpu_count() or 1) * nodes


@pytest.mark.native_only  # observes this process's UDF runtime (closure state, pids, logs, stdout)
def test_udf_function_batches_and_return_dtype(rng):
    seen: list[int] = []

    @ketch.udf(return_dtype=ketch.DataType.float64(), batch_size=100)
    def weighted(x: ketch.Series, w: ketch.Series) -> pa.Array:
        seen.append(len(x))
        return pa.array(x.to_numpy() * w.to_numpy())

    x = rng.integers(0, 1000, 1234)
    w = rng.random(1234)
    out = ketch.from_pydict({"x": x, "w": w}).select(weighted(col("x"), col("w")).alias("p")).to_arrow()
    assert out.schema.field("p").type == pa.float64()
    np.testing.assert_allclose(out.column("p").to_numpy(), x * w, rtol=1e-15)
    assert sum(seen) == 1234 and max(seen) <= 100


def test_udf_result_is_cast_to_return_dtype():
    @ketch.udf(return_dtype=ketch.DataType.float32())
    def as_list(x: ketch.Series) -> list:
        return [v * 2 for v in x.to_pylist()]

    out = ketch.from_pydict({"x": [1, 2, 3]}).select(as_list(col("x"))).to_arrow()
    assert out.schema.field("x").type == pa.float32()
    assert out.column("x").to_pylist() == [2.0, 4.0, 6.0]


def test_udf_in_where_predicate():
    @ketch.udf(return_dtype=bool, batch_size=7)
    def is_multiple_of_7(x: ketch.Series) -> np.ndarray:
        return x.to_numpy() % 7 == 0

    out = ketch.from_pydict({"x": list(range(100))}).where(is_multiple_of_7(col("x"))).to_pydict()
    assert out["x"] == list(range(0, 100, 7))


def test_udf_raising_surfaces_as_udf_error_with_cause():
    @ketch.udf(return_dtype=int, batch_size=50)
    def explode(x: ketch.Series) -> np.ndarray:
        values = x.to_numpy()
        if (values == 1234).any():
            raise ValueError("found the bad value 1234")
        return values

    df = ketch.from_pydict({"x": np.arange(N)}).with_column("y", explode(col("x")))
    with pytest.raises(UDFError) as info:
        df.collect()
    assert isinstance(info.value.__cause__, ValueError)
    assert str(info.value.__cause__) == "found the bad value 1234"
    assert info.value.__cause__.__traceback__ is not None
    assert "explode" in str(info.value)


def test_cls_raising_in_call_surfaces_as_udf_error():
    @ketch.cls(return_dtype=int, batch_size=100, concurrency=2)
    class Fails:
        def __call__(self, x: ketch.Series) -> list:
            raise KeyError("missing key")

    with pytest.raises(UDFError) as info:
        ketch.from_pydict({"x": list(range(1000))}).select(Fails()(col("x"))).collect()
    assert isinstance(info.value.__cause__, KeyError)
    assert "Fails" in str(info.value)


def test_udf_wrong_length_names_the_udf():
    @ketch.udf(return_dtype=int)
    def drops_one(x: ketch.Series) -> list:
        return x.to_pylist()[:-1]

    with pytest.raises(UDFError, match="drops_one") as info:
        ketch.from_pydict({"x": [1, 2, 3, 4]}).select(drops_one(col("x"))).collect()
    assert "3 values for a batch of 4 rows" in str(info.value)


def test_apply_raising_surfaces_as_udf_error():
    def reciprocal(v):
        return 1 / v

    with pytest.raises(UDFError, match="reciprocal") as info:
        ketch.from_pydict({"x": [1, 0, 2]}).select(col("x").apply(reciprocal, return_dtype=float)).collect()
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_udf_decorator_argument_validation():
    with pytest.raises(ValueError, match="batch_size"):
        ketch.udf(return_dtype=int, batch_size=0)(lambda x: x)
    with pytest.raises(ValueError, match="concurrency"):
        ketch.cls(return_dtype=int, concurrency=-1)(type("C", (), {"__call__": lambda self, x: x}))
    # Daft 0.7: @ketch.cls needs no return_dtype; a method with neither one nor a return
    # annotation is refused when the expression is built, naming the method.
    unannotated = ketch.cls(type("D", (), {"__call__": lambda self, x: x}))()
    with pytest.raises(TypeError, match="D needs return_dtype"):
        unannotated(col("x"))
