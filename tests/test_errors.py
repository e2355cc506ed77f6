"""Error types and messages: missing columns, plan-time type errors, non-Boolean predicates."""

from __future__ import annotations

import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.errors import (
    ColumnNotFoundError,
    KetchError,
    KetchFileNotFoundError,
    KetchIOError,
    KetchTypeError,
    KetchValueError,
    UDFError,
)


@pytest.fixture
def df() -> ketch.DataFrame:
    return ketch.from_pydict({"n": [1, 2, 3], "s": ["a", "b", "c"], "flag": [True, False, None]})


def test_error_hierarchy():
    assert issubclass(ColumnNotFoundError, ValueError) and issubclass(ColumnNotFoundError, KetchError)
    assert issubclass(KetchTypeError, TypeError) and issubclass(KetchTypeError, KetchError)
    assert issubclass(KetchValueError, ValueError)
    assert issubclass(KetchIOError, OSError)
    assert issubclass(KetchFileNotFoundError, FileNotFoundError) and issubclass(
        KetchFileNotFoundError, KetchIOError
    )
    assert issubclass(UDFError, KetchError)


@pytest.mark.parametrize(
    "build",
    [
        lambda df: df.select(col("missing")),
        lambda df: df.select("missing"),
        lambda df: df.select((col("missing") + 1).alias("m")),
        lambda df: df.with_column("x", col("missing")),
        lambda df: df.where(col("missing") > 1),
    ],
    ids=["select-col", "select-str", "select-expr", "with_column", "where"],
)
def test_missing_column_raises_listing_available_columns(df, build):
    with pytest.raises(ColumnNotFoundError) as info:
        build(df)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert "missing" in message
    for name in ("n", "s", "flag"):
        assert name in message


def test_exclude_and_getitem_of_missing_column(df):
    with pytest.raises(ColumnNotFoundError, match="nope"):
        df.exclude("nope")
    with pytest.raises(ColumnNotFoundError, match="nope"):
        df["nope"]


def test_string_minus_int_is_a_plan_time_type_error(df):
    # Raised while building the plan: no collect() is needed. (string + int concatenates the
    # int's text, as in Daft.)
    with pytest.raises(KetchTypeError) as info:
        df.with_column("t", col("s") - 1)
    message = str(info.value)
    assert "col(s)" in message and "string" in message
    with pytest.raises(KetchTypeError, match=r"col\(s\)"):
        df.select((col("s") - 1).alias("t"))
    with pytest.raises(TypeError):  # KetchTypeError is a TypeError
        df.select((col("s") * col("n")).alias("t"))


def test_type_error_is_raised_before_any_execution(df):
    calls = []

    def spy(v):
        calls.append(v)
        return v

    tracked = df.with_column("n2", col("n").apply(spy, return_dtype=int))
    with pytest.raises(KetchTypeError):
        tracked.with_column("bad", col("s") - 1)
    assert calls == []  # nothing ran


@pytest.mark.parametrize(
    "predicate",
    [col("n"), col("s"), col("n") + 1, col("n").cast(pa.float64())],
    ids=["int", "string", "arith", "float"],
)
def test_where_requires_boolean_predicate(df, predicate):
    with pytest.raises(KetchTypeError) as info:
        df.where(predicate)
    assert "Boolean" in str(info.value)


def test_impossible_cast_is_plan_time_type_error(df):
    with pytest.raises(KetchTypeError, match="cast"):
        df.select(col("flag").cast(pa.list_(pa.int64())))


def test_execution_time_errors_are_ketch_errors():
    df = ketch.from_pydict({"x": [1, 2**62]}).select(col("x") * 4)
    with pytest.raises(KetchValueError, match="overflow"):  # int64 overflow is an error, not a wrap
        df.collect()
    # float -> int truncates (Daft's cast rule), it does not fail
    assert ketch.from_pydict({"x": [1.5, -2.7]}).select(col("x").cast(pa.int64())).to_pydict() == {
        "x": [1, -2]
    }


def test_errors_are_catchable_as_builtin_exceptions(df, tmp_path):
    with pytest.raises(ValueError):
        df.select("nope")
    with pytest.raises(TypeError):
        df.where(col("n"))
    with pytest.raises(FileNotFoundError):
        ketch.read_parquet(str(tmp_path / "*.parquet"))
    with pytest.raises(OSError):
        ketch.read_parquet(str(tmp_path / "absent.parquet"))


def _plain_query(values: list) -> dict:
    return ketch.from_pydict({"v": values}).with_column("w", col("v") * 2).to_pydict()


def _missing_column() -> None:
    ketch.from_pydict({"v": [1]}).select(col("nope"))


def test_run_isolated_harness_returns_values_and_reraises(run_isolated):
    """The harness used below works: results come back, exceptions are re-raised here."""
    assert run_isolated(_plain_query, [1, 2, None]) == {"v": [1, 2, None], "w": [2, 4, None]}
    with pytest.raises(ColumnNotFoundError, match="nope"):
        run_isolated(_missing_column)


def _fail_after_a_later_morsel_reached_the_sink() -> str:
    """Two 100-row morsels on two UDF threads: morsel 1 passes both UDFs first (on its way to the
    sink's re-order buffer, where it waits for morsel 0), then morsel 0 fails in the first UDF. The
    query must raise UDFError. Synchronised by events, not sleeps: morsel 0 fails only once morsel 1
    has gone through the second UDF, the last step before the sink (thread mode: the events are
    shared; worker processes would each have their own)."""
    import threading

    import numpy as np

    batch = 100
    second_passed = threading.Event()

    @ketch.cls(return_dtype=int, batch_size=batch, concurrency=2, use_process=False)
    class Gate:
        def __call__(self, x: ketch.Series) -> np.ndarray:
            v = x.to_numpy()
            if v[0] == batch:
                return v
            second_passed.wait(10)
            raise ValueError("morsel 0 fails")

    # No batch_size: no ordered re-chunk step in front of it, so morsel 1 need not wait for morsel 0.
    @ketch.cls(return_dtype=int, concurrency=2, use_process=False)
    class Mark:
        def __call__(self, x: ketch.Series) -> np.ndarray:
            v = x.to_numpy()
            if v[0] == batch:
                second_passed.set()
            return v

    query = ketch.from_pydict({"x": np.arange(2 * batch)}).with_column("a", Mark()(Gate()(col("x"))))
    try:
        query.collect()
    except UDFError as exc:
        return str(exc)
    return "no error"


def test_failing_query_raises_instead_of_hanging(run_isolated):
    # Regression test: a morsel dropped after a failure used to leave a hole in the sink's re-order
    # buffer, so the morsels parked behind it never released their permits and Run() waited forever.
    # Run in a child so that a regression fails with TimeoutError instead of stalling the suite.
    message = run_isolated(_fail_after_a_later_morsel_reached_the_sink, timeout=15)
    assert "morsel 0 fails" in message


def test_integer_overflow_in_arithmetic_is_an_error_naming_the_function():
    df = ketch.from_pydict({"a": [1, 2**62]})
    with pytest.raises(ketch.errors.KetchValueError, match="multiply_checked.*overflow"):
        df.select(ketch.col("a") * 4).collect()
    assert df.select(ketch.col("a") * 1).to_pydict()["a"] == [1, 2**62]


@pytest.mark.parametrize("morsel_rows", [1, 1000])
def test_integer_sum_overflow_raises_instead_of_wrapping(morsel_rows):
    big = 2**62
    df = ketch.from_pydict({"k": [1, 1, 1, 2], "v": [big, big, big, 5]})
    with ketch.execution_config_ctx(morsel_size_rows=morsel_rows):
        with pytest.raises(KetchError, match=r"agg_sum\(col\(v\)\) overflows int64 .*about 1.38e\+19"):
            df.groupby("k").agg(col("v").sum()).collect()
        with pytest.raises(KetchError, match="overflows int64"):
            df.agg(col("v").sum()).collect()
    # Partial sums that leave the range but come back give the exact result.
    ok = ketch.from_pydict({"k": [1, 1, 1, 2], "v": [big, big, -big, 3]})
    assert ok.groupby("k").agg(col("v").sum()).sort("k").to_pydict() == {"k": [1, 2], "v": [big, 3]}


def test_limit_and_sample_arguments_are_checked_in_python_not_by_the_binding():
    df = ketch.from_pydict({"x": list(range(10))})
    assert df.limit(2**64).to_pydict()["x"] == list(range(10))  # larger than any table: all rows
    # Any int seed works and is reproducible (reduced modulo 2**64).
    assert df.sample(0.5, seed=-1).to_pydict() == df.sample(0.5, seed=2**64 - 1).to_pydict()
    with pytest.raises(ValueError, match="fraction"):
        df.sample(-0.1)
    with pytest.raises(ValueError, match="fraction"):
        df.sample(1.5)
    with pytest.raises(ValueError, match="seed must be an int"):
        df.sample(0.5, seed="a")
    with pytest.raises(ValueError, match="limit"):
        df.limit(-1)


def test_aggregation_outside_agg_and_failed_cast_explain_themselves():
    df = ketch.from_pydict({"x": [1, 2], "s": ["1", "a"]})
    with pytest.raises(KetchError, match=r"sum\(\) is an aggregation: use it in df.agg"):
        df.with_column("y", col("x").sum()).collect()
    # Text that does not parse casts to null, as in Daft; a cast that cannot be done still fails
    # naming the expression, both types and the morsel's first source row.
    assert df.select(col("s").cast(int)).to_pydict() == {"s": [1, None]}
    lists = ketch.from_pydict({"l": [[1.0, 2.0], [1.0, 2.0, 3.0]]})
    with pytest.raises(
        KetchError, match=r"cast of col\(l\) from list<item: double> to fixed_size_list.*row 0"
    ):
        lists.select(col("l").cast(ketch.DataType.fixed_size_list(ketch.DataType.float64(), 2))).collect()
