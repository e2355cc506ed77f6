"""DataFrame construction, relational operations, materialization and expression semantics,
checked against pandas / pyarrow / plain Python on randomized data with nulls."""

from __future__ import annotations

import io
import math
import operator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import ketch
from ketch import col, lit

N = 1000
STRINGS = ["apple", "banana", "cherry", "durian", "elderberry"]


def _nullify(rng: np.random.Generator, values: list, fraction: float = 0.15) -> list:
    mask = rng.random(len(values)) < fraction
    return [None if m else v for v, m in zip(values, mask, strict=True)]


@pytest.fixture
def data(rng) -> dict[str, list]:
    """Columns: a int64 (nulls), b float64 non-zero (nulls), c int64 non-zero (no nulls),
    s string (nulls), f / g bool (nulls)."""
    a = _nullify(rng, [int(v) for v in rng.integers(-50, 50, N)])
    b_raw = rng.uniform(0.5, 20.0, N) * rng.choice([-1.0, 1.0], N)
    b = _nullify(rng, [float(v) for v in b_raw])
    c = [int(v) for v in rng.choice(np.r_[-9:0, 1:10], N)]
    s = _nullify(rng, [STRINGS[i] for i in rng.integers(0, len(STRINGS), N)])
    f = _nullify(rng, [bool(v) for v in rng.integers(0, 2, N)], 0.2)
    g = _nullify(rng, [bool(v) for v in rng.integers(0, 2, N)], 0.2)
    return {"a": a, "b": b, "c": c, "s": s, "f": f, "g": g}


@pytest.fixture
def table(data) -> pa.Table:
    return pa.table(
        {
            "a": pa.array(data["a"], pa.int64()),
            "b": pa.array(data["b"], pa.float64()),
            "c": pa.array(data["c"], pa.int64()),
            "s": pa.array(data["s"], pa.string()),
            "f": pa.array(data["f"], pa.bool_()),
            "g": pa.array(data["g"], pa.bool_()),
        }
    )


@pytest.fixture
def pdf(data) -> pd.DataFrame:
    """The same data as a pandas frame with nullable dtypes (Kleene logic, NA propagation)."""
    return pd.DataFrame(
        {
            "a": pd.array(data["a"], dtype="Int64"),
            "b": pd.array(data["b"], dtype="Float64"),
            "c": pd.array(data["c"], dtype="Int64"),
            "s": pd.array(data["s"], dtype="string"),
            "f": pd.array(data["f"], dtype="boolean"),
            "g": pd.array(data["g"], dtype="boolean"),
        }
    )


def pd_list(series: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in series.tolist()]


def assert_close_list(actual: list, expected: list) -> None:
    assert len(actual) == len(expected)
    assert [v is None for v in actual] == [v is None for v in expected]
    got = np.array([v for v in actual if v is not None], dtype=float)
    want = np.array([v for v in expected if v is not None], dtype=float)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


# -- construction and materialization ---------------------------------------------------------------


def test_from_pydict_roundtrip_and_schema(data):
    df = ketch.from_pydict(data)
    assert df.column_names == ["a", "b", "c", "s", "f", "g"]
    schema = df.schema()
    assert schema.field("a").type == pa.int64()
    assert schema.field("b").type == pa.float64()
    assert schema.field("s").type in (pa.string(), pa.large_string())
    assert schema.field("f").type == pa.bool_()
    assert df.to_pydict() == data


def test_from_pydict_numpy_and_arrow_columns():
    x = np.arange(10, dtype=np.int32)
    y = pa.array([float(i) / 3 for i in range(10)])
    out = ketch.from_pydict({"x": x, "y": y}).to_arrow()
    assert out.schema.field("x").type == pa.int32()
    assert out.column("x").to_pylist() == x.tolist()
    assert out.column("y").to_pylist() == y.to_pylist()


def test_from_pydict_rejects_ragged_columns():
    with pytest.raises(ValueError, match="different lengths"):
        ketch.from_pydict({"a": [1, 2, 3], "b": [1, 2]})


def test_from_arrow_table_batch_and_list(table):
    assert ketch.from_arrow(table).to_arrow().equals(table)
    batch = table.to_batches()[0]
    assert ketch.from_arrow(batch).to_arrow().equals(pa.Table.from_batches([batch]))
    first, second = table.slice(0, 400), table.slice(400)
    assert ketch.from_arrow([first, second]).to_arrow().equals(table)


def test_from_pandas_roundtrip_drops_index():
    frame = pd.DataFrame(
        {"i": [3, 1, 2, 9], "x": [0.5, np.nan, 2.25, -1.0], "s": ["a", None, "c", "d"]},
        index=[10, 11, 12, 13],
    )
    out = ketch.from_pandas(frame).to_pandas()
    pd.testing.assert_frame_equal(out, frame.reset_index(drop=True))


def test_to_pydict_to_arrow_to_pandas_agree(table):
    df = ketch.from_arrow(table)
    assert df.to_arrow().equals(table)
    assert df.to_pydict() == table.to_pydict()
    pd.testing.assert_frame_equal(df.to_pandas(), table.to_pandas())


def test_collect_returns_self_and_keeps_result(table):
    df = ketch.from_arrow(table).where(col("c") > 0)
    assert df.collect() is df
    assert len(df) == pc.sum(pc.greater(table["c"], 0)).as_py()
    # Later operations start from the materialized result.
    assert df.select("c").to_pydict()["c"] == [v for v in table["c"].to_pylist() if v > 0]


def test_len_needs_collect(table):
    # An in-memory DataFrame is materialized (Daft: len works); a query over it is not.
    assert len(ketch.from_arrow(table)) == table.num_rows
    with pytest.raises(RuntimeError):
        len(ketch.from_arrow(table).where(col("a").not_null()))


# -- relational operations -------------------------------------------------------------------------


def test_select_orders_and_computes(table, pdf):
    out = ketch.from_arrow(table).select("s", col("a"), (col("c") * 2).alias("c2")).to_pydict()
    assert list(out) == ["s", "a", "c2"]
    assert out["s"] == pd_list(pdf["s"])
    assert out["a"] == pd_list(pdf["a"])
    assert out["c2"] == pd_list(pdf["c"] * 2)


def test_with_column_replaces_in_place_and_appends(table, pdf):
    df = ketch.from_arrow(table)
    replaced = df.with_column("b", col("b") * 10)
    assert replaced.column_names == df.column_names  # same position, same order
    assert_close_list(replaced.to_pydict()["b"], pd_list(pdf["b"] * 10))

    appended = df.with_column("ac", col("a") + col("c"))
    assert appended.column_names == ["a", "b", "c", "s", "f", "g", "ac"]
    out = appended.to_pydict()
    assert out["ac"] == pd_list(pdf["a"] + pdf["c"])
    assert out["a"] == pd_list(pdf["a"])  # the input column is untouched


def test_with_columns_replace_and_append_see_original_values(table, pdf):
    df = ketch.from_arrow(table).with_columns(
        {"a": col("a") + 1, "new": col("a") * 2, "c": col("c") - col("a")}
    )
    assert df.column_names == ["a", "b", "c", "s", "f", "g", "new"]
    out = df.to_pydict()
    assert out["a"] == pd_list(pdf["a"] + 1)
    assert out["new"] == pd_list(pdf["a"] * 2)  # uses the *original* a, not a + 1
    assert out["c"] == pd_list(pdf["c"] - pdf["a"])


def test_where_treats_null_predicate_as_false(table, pdf):
    out = ketch.from_arrow(table).where(col("f")).to_arrow()
    mask = pdf["f"].fillna(False).to_numpy(dtype=bool)
    assert pdf["f"].isna().any()  # the data does hold null predicate values
    assert out.num_rows == int(mask.sum())
    assert out.column("f").to_pylist() == [True] * int(mask.sum())
    assert out.equals(table.filter(pa.array(mask)))


def test_where_compound_predicate_matches_pandas(table, pdf):
    predicate = ((col("a") > 0) & (col("s") == "banana")) | (col("b") < -10.0)
    out = ketch.from_arrow(table).where(predicate).to_pydict()
    is_banana = (pdf["s"] == "banana").astype("boolean")
    mask = (((pdf["a"] > 0) & is_banana) | (pdf["b"] < -10.0)).fillna(False).to_numpy(bool)
    expected = pa.Table.from_pandas(table.to_pandas()[mask], preserve_index=False)
    assert out == expected.to_pydict()
    assert 0 < len(out["a"]) < N


def test_chained_where_is_conjunction(table):
    out = ketch.from_arrow(table).where(col("c") > 0).where(col("a") < 10).to_arrow()
    mask = pc.and_kleene(pc.greater(table["c"], 0), pc.less(table["a"], 10))
    assert out.equals(table.filter(mask))


def test_exclude(table):
    out = ketch.from_arrow(table).exclude("b", "f").to_arrow()
    assert out.column_names == ["a", "c", "s", "g"]
    assert out.equals(table.drop_columns(["b", "f"]))


def test_limit_takes_first_rows_in_order(table):
    assert ketch.from_arrow(table).limit(17).to_arrow().equals(table.slice(0, 17))
    assert ketch.from_arrow(table).limit(0).to_arrow().num_rows == 0
    assert ketch.from_arrow(table).limit(10 * N).to_arrow().equals(table)


def test_limit_across_many_morsels_keeps_order():
    values = np.arange(50_000)
    with ketch.execution_config_ctx(morsel_size_rows=1000, num_compute_threads=4):
        out = ketch.from_pydict({"x": values}).with_column("y", col("x") * 3).limit(12_345).to_pydict()
    assert out["x"] == values[:12_345].tolist()
    assert out["y"] == (values[:12_345] * 3).tolist()


def test_limit_rejects_negative(table):
    with pytest.raises(ValueError):
        ketch.from_arrow(table).limit(-1)


def test_count_rows(table, pdf):
    df = ketch.from_arrow(table)
    assert df.count_rows() == N
    assert df.where(col("a") > 5).count_rows() == int((pdf["a"] > 5).fillna(False).sum())
    assert df.where(col("a") > 1000).count_rows() == 0


def test_show_prints_table(capsys):
    df = ketch.from_pydict({"name": ["alpha", "beta", "gamma", "delta"], "val": [1, 2, None, 4]})
    df.show(3)
    out = capsys.readouterr().out
    assert "name" in out and "val" in out
    assert "Int64" in out and "String" in out  # Daft's type names
    for shown in ("alpha", "beta", "gamma", "None"):
        assert shown in out
    assert "delta" not in out  # only the first 3 rows
    assert "(Showing first 3 of 4 rows)" in out  # Daft's footer: the total of a materialized frame
    df.where(col("val") > 0).show(1)
    assert "(Showing first 1 rows)" in capsys.readouterr().out  # a lazy one's total is unknown


def test_explain_show_all_prints_all_plans(table, capsys):
    df = ketch.from_arrow(table).where(col("a") > 0).select("a", "s")
    df.explain(show_all=True)
    out = capsys.readouterr().out
    assert "Unoptimized Logical Plan" in out
    assert "Optimized Logical Plan" in out
    assert "Physical Plan" in out
    assert out.index("Optimized Logical Plan") < out.index("Physical Plan")
    assert "Filter" in out and "col(a) > lit(0)" in out

    buf = io.StringIO()
    df.explain(file=buf)
    assert "Unoptimized Logical Plan" in buf.getvalue()
    assert "Physical Plan" not in buf.getvalue()


# -- expressions ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "left", "right", "dtype"),
    [
        (operator.add, "a", "c", pa.int64()),
        (operator.sub, "a", "c", pa.int64()),
        (operator.mul, "a", "c", pa.int64()),
        (operator.add, "a", "b", pa.float64()),
        (operator.sub, "b", "a", pa.float64()),
        (operator.mul, "b", "b", pa.float64()),
    ],
)
def test_binary_arithmetic_matches_pandas(table, pdf, op, left, right, dtype):
    out = ketch.from_arrow(table).select(op(col(left), col(right)).alias("r")).to_arrow()
    assert out.schema.field("r").type == dtype
    expected = pd_list(op(pdf[left], pdf[right]))
    if dtype == pa.int64():
        assert out.column("r").to_pylist() == expected
    else:
        assert_close_list(out.column("r").to_pylist(), expected)


@pytest.mark.parametrize(("left", "right"), [("a", "c"), ("c", "a"), ("b", "c"), ("a", "b")])
def test_true_division_is_float64(table, pdf, left, right):
    out = ketch.from_arrow(table).select((col(left) / col(right)).alias("q")).to_arrow()
    assert out.schema.field("q").type == pa.float64()
    got = out.column("q").to_pylist()
    num, den = pdf[left].astype("Float64"), pdf[right].astype("Float64")
    nonzero = (den != 0).fillna(True).to_numpy(bool)
    expected = pd_list(num / den)
    got = [v for v, keep in zip(got, nonzero, strict=True) if keep]
    expected = [v for v, keep in zip(expected, nonzero, strict=True) if keep]
    assert_close_list(got, expected)


def test_division_int_by_int_literal_and_by_zero():
    df = ketch.from_pydict({"x": [7, -3, 0, None]})
    out = df.select((col("x") / 2).alias("half"), (col("x") / 0).alias("zero"), (1 / col("x")).alias("inv"))
    out = out.to_arrow()
    assert out.schema.field("half").type == pa.float64()
    assert out.column("half").to_pylist() == [3.5, -1.5, 0.0, None]
    zero = out.column("zero").to_pylist()
    assert zero[0] == math.inf and zero[1] == -math.inf and math.isnan(zero[2]) and zero[3] is None
    inv = out.column("inv").to_pylist()
    assert inv[0] == pytest.approx(1 / 7) and inv[1] == pytest.approx(-1 / 3)
    assert inv[2] == math.inf and inv[3] is None


def test_reflected_operators_with_literals(table, pdf):
    out = (
        ketch.from_arrow(table)
        .select((10 - col("a")).alias("r1"), (3 * col("c")).alias("r2"), (col("a") + 0.5).alias("r3"))
        .to_pydict()
    )
    assert out["r1"] == pd_list(10 - pdf["a"])
    assert out["r2"] == pd_list(3 * pdf["c"])
    assert_close_list(out["r3"], pd_list(pdf["a"] + 0.5))


@pytest.mark.parametrize("op", [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge])
def test_comparisons_match_pandas(table, pdf, op):
    out = (
        ketch.from_arrow(table)
        .select(
            op(col("a"), col("c")).alias("ints"),
            op(col("b"), 1.5).alias("floats"),
            op(col("s"), "cherry").alias("strs"),
        )
        .to_arrow()
    )
    for name in ("ints", "floats", "strs"):
        assert out.schema.field(name).type == pa.bool_()
    assert out.column("ints").to_pylist() == pd_list(op(pdf["a"], pdf["c"]))
    assert out.column("floats").to_pylist() == pd_list(op(pdf["b"], 1.5))
    assert out.column("strs").to_pylist() == pd_list(op(pdf["s"], "cherry").astype("boolean"))


def test_boolean_logic_is_kleene_like_pandas(table, pdf):
    out = (
        ketch.from_arrow(table)
        .select(
            (col("f") & col("g")).alias("and_"), (col("f") | col("g")).alias("or_"), (~col("f")).alias("not_")
        )
        .to_pydict()
    )
    assert out["and_"] == pd_list(pdf["f"] & pdf["g"])
    assert out["or_"] == pd_list(pdf["f"] | pdf["g"])
    assert out["not_"] == pd_list(~pdf["f"])
    # Kleene: False & null is False, True | null is True.
    assert any(v is False for v, f in zip(out["and_"], pdf["f"].tolist(), strict=True) if f is False)


def test_alias_and_expression_name():
    expr = (col("a") + 1).alias("plus_one")
    assert expr.name() == "plus_one"
    assert (col("a") * 2).name() == "a"
    out = ketch.from_pydict({"a": [1, 2]}).select(expr, col("a").alias("a2"))
    assert out.column_names == ["plus_one", "a2"]
    assert out.to_pydict() == {"plus_one": [2, 3], "a2": [1, 2]}


def test_duplicate_output_names_rejected():
    df = ketch.from_pydict({"a": [1, 2]})
    with pytest.raises(ValueError, match="duplicate"):
        df.select(col("a"), (col("a") + 1))


def test_cast(table, data):
    df = ketch.from_arrow(table)
    out = df.select(
        col("a").cast(pa.float64()).alias("a_f"),
        col("a").cast(ketch.DataType.string()).alias("a_s"),
        col("c").cast(ketch.DataType.int8()).alias("c_i8"),
        col("f").cast(int).alias("f_i"),
    ).to_arrow()
    assert out.schema.field("a_f").type == pa.float64()
    assert out.schema.field("a_s").type == pa.large_string()
    assert out.schema.field("c_i8").type == pa.int8()
    assert out.schema.field("f_i").type == pa.int64()
    assert out.column("a_f").to_pylist() == [None if v is None else float(v) for v in data["a"]]
    assert out.column("a_s").to_pylist() == [None if v is None else str(v) for v in data["a"]]
    assert out.column("c_i8").to_pylist() == data["c"]
    assert out.column("f_i").to_pylist() == [None if v is None else int(v) for v in data["f"]]


def test_cast_float_to_int_whole_values():
    out = ketch.from_pydict({"x": [1.0, -2.0, None, 40.0]}).select(col("x").cast(pa.int64())).to_pydict()
    assert out == {"x": [1, -2, None, 40]}


def test_is_null_and_not_null(table, pdf):
    out = (
        ketch.from_arrow(table)
        .select(
            col("a").is_null().alias("a_null"),
            col("s").not_null().alias("s_valid"),
            col("c").is_null().alias("c_null"),
        )
        .to_pydict()
    )
    assert out["a_null"] == pdf["a"].isna().tolist()
    assert out["s_valid"] == pdf["s"].notna().tolist()
    assert out["c_null"] == [False] * N
    assert ketch.from_arrow(table).where(col("a").is_null()).count_rows() == int(pdf["a"].isna().sum())


def test_apply_rowwise(table, data):
    def describe(v):
        return None if v is None else f"{v}:{len(v)}"

    out = (
        ketch.from_arrow(table)
        .select(
            col("s").apply(describe, return_dtype=str).alias("desc"),
            col("a")
            .apply(lambda v: -1 if v is None else v * v, return_dtype=ketch.DataType.int64())
            .alias("sq"),
        )
        .to_arrow()
    )
    assert out.column("desc").to_pylist() == [describe(v) for v in data["s"]]
    assert out.column("sq").to_pylist() == [-1 if v is None else v * v for v in data["a"]]
    assert out.schema.field("sq").type == pa.int64()


def test_lit_broadcasts():
    out = ketch.from_pydict({"a": [1, 2, 3]}).with_columns({"k": lit(7), "t": lit("x")}).to_pydict()
    assert out == {"a": [1, 2, 3], "k": [7, 7, 7], "t": ["x", "x", "x"]}


def test_expression_has_no_truth_value():
    with pytest.raises(TypeError):
        bool(col("a") > 1)
