"""Text made from numbers, output names and counting, as Daft 0.7.26 does them (issue 28): a
float cast to string, ``+`` of a string and a number (``functions.format``), the name of an
expression whose first input is a literal, ``count(mode="all")`` without an expression, the
``col("*")`` wildcard and ``DataFrame.count`` of expressions. Expected values were read from Daft
0.7.26 (benchmarks/.venv-peers) running the same code."""

from __future__ import annotations

import pytest

import ketch
from ketch import DataType, col, lit
from ketch import functions as F

# (value, Daft's text): shortest round-trip digits, plain for exponents -5..15, else scientific.
FLOAT_TEXT = [
    (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (0.1, "0.1"), (123.456, "123.456"),
    (1e5, "100000.0"), (1e15, "1000000000000000.0"), (2.0**53, "9007199254740992.0"),
    (1e16, "1e16"), (1.5e16, "1.5e16"), (1.2345678901234568e17, "1.2345678901234568e17"),
    (1e-4, "0.0001"), (1e-5, "0.00001"), (1.2345e-5, "0.000012345"), (1e-6, "1e-6"),
    (1 / 3, "0.3333333333333333"), (1e100, "1e100"), (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e308"),
    (float("inf"), "inf"), (float("-inf"), "-inf"), (float("nan"), "NaN"),
]  # fmt: skip


def test_float_to_string_cast_writes_daft_s_text() -> None:
    values = [v for v, _ in FLOAT_TEXT] + [None]
    got = ketch.from_pydict({"f": values}).select(col("f").cast(DataType.string())).to_pydict()["f"]
    assert got == [text for _, text in FLOAT_TEXT] + [None]
    for value, text in FLOAT_TEXT[:-3]:
        assert float(text) == value  # the text reads back as the same float
    # float32: the shortest digits of the float32 value (0.1, not 0.10000000149011612).
    f32 = ketch.from_pydict({"f": [1.5, 1e20, 0.1]}).select(col("f").cast(DataType.float32()))
    assert f32.select(col("f").cast(DataType.string())).to_pydict()["f"] == ["1.5", "1e20", "0.1"]


def test_plus_of_a_string_and_a_number_concatenates_their_text() -> None:
    df = ketch.from_pydict({"id": [1, None], "f": [1.5, 2.0], "b": [True, False], "s": ["x", None]})
    assert df.select(F.format("user_{}", col("id"))).to_pydict() == {"literal": ["user_1", None]}
    text = df.select(F.format("v={} {}", col("f"), col("b"))).to_pydict()
    assert text == {"literal": ["v=1.5 true", "v=2.0 false"]}
    assert df.select(lit("a") + col("id")).to_pydict() == {"literal": ["a1", None]}
    assert df.select(col("id") + lit("a")).to_pydict() == {"id": ["1a", None]}
    assert df.select(col("s") + col("id")).to_pydict() == {"s": ["x1", None]}
    with pytest.raises(ValueError, match="has 2 placeholders but 1 arguments"):
        F.format("{} {}", col("id"))


@pytest.mark.parametrize(
    ("expr", "name"),
    [
        (lit(1) + col("a"), "literal"),
        (lit(2) * col("a"), "literal"),
        (lit(1) > col("a"), "literal"),
        (col("a") + lit(1), "a"),
        (F.when(col("a") > 1, lit("x")).otherwise(col("s")), "literal"),
        ((col("a") > 1).if_else(col("s"), lit("y")), "s"),
        (lit(1).cast(DataType.string()), "literal"),
        (F.concat(lit("p"), col("s")), "literal"),
    ],
    ids=["lit+col", "lit*col", "lit>col", "col+lit", "when", "if_else", "cast", "concat"],
)
def test_an_expression_is_named_as_its_first_input(expr, name) -> None:  # type: ignore[no-untyped-def]
    df = ketch.from_pydict({"a": [1, 2], "s": ["x", "y"]})
    assert df.select(expr).column_names == [name]


def test_count_all_without_an_expression_and_the_wildcard() -> None:
    df = ketch.from_pydict({"g": ["a", "a", "b"], "a": [1, None, 3], "b": [1.0, 2.0, None]})
    assert df.agg(F.count(mode="all")).to_pydict() == {"g": [3], "a": [3], "b": [3]}
    assert df.agg(F.count(mode="all").alias("n")).to_pydict() == {"n": [3]}
    with pytest.raises(ValueError, match="only supports mode='all'"):
        F.count()
    assert df.select(col("*")).to_pydict() == df.to_pydict()
    assert df.agg(col("*").max()).to_pydict() == {"g": ["b"], "a": [3], "b": [2.0]}
    grouped = df.groupby("g").agg(col("*").count()).sort("g").to_pydict()
    assert grouped == {"g": ["a", "b"], "a": [1, 1], "b": [2, 0]}  # the key is not counted


def test_dataframe_count_takes_expressions() -> None:
    df = ketch.from_pydict({"a": [1, None, 3], "b": [1.0, 2.0, None]})
    assert df.count(col("a"), "b").to_pydict() == {"a": [2], "b": [2]}
    assert df.count(1).to_pydict() == {"count": [3]}


def test_getitem_by_position_and_wildcard() -> None:
    df = ketch.from_pydict({"foo": [1, None, None], "bar": [None, 2, 2], "baz": [3, 4, 5]})
    assert df[0].name() == "foo" and df[-1].name() == "baz"
    # Daft's docstring: df.count(df["*"]) counts each column's non-null values.
    assert df.count(df["*"]).to_pydict() == {"foo": [1], "bar": [2], "baz": [3]}
    with pytest.raises(IndexError):
        df[3]
    with pytest.raises(ketch.errors.ColumnNotFoundError):
        df["nope"]
