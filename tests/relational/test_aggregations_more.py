"""Daft's other aggregations (product, count_distinct, var, skew, bool_and/or, approx_percentiles,
percentile/median, agg_set, count modes) as Expression methods, ``ketch.functions`` and
shorthands, grouped and global, on both runners, against pandas; and ``pivot`` with each of them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch import functions as F
from ketch.errors import KetchTypeError

pytestmark = pytest.mark.usefixtures("runner")

# Groups: "a" mixed values with nulls, "b" all null, "c" one value, "d" many values (incl. negatives),
# "e" zeros in it. Spread over 3 partitions and small morsels so partial states really merge.
KEYS = ["a", "a", "a", "a", "b", "b", "c", "d", "d", "d", "d", "d", "d", "e", "e", "e"]
X = [1.5, None, -2.0, 4.0, None, None, 7.0, 3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 0.0, 2.0, 2.0]
I = [3, None, 2, -1, None, None, 5, 1, 2, 3, 4, 5, 6, 0, 7, 7]  # noqa: E741
B = [True, None, True, False, None, None, True, True, True, True, True, True, True, False, None, False]


def frame(parts: int = 3) -> ketch.DataFrame:
    return ketch.from_pydict({"k": KEYS, "x": X, "i": I, "b": B}).into_partitions(parts)


def pdf() -> pd.DataFrame:
    return pd.DataFrame(
        {"k": KEYS, "x": X, "i": pd.array(I, dtype="Int64"), "b": pd.array(B, dtype="boolean")}
    )


def by_key(df: ketch.DataFrame) -> dict[str, dict]:
    with ketch.execution_config_ctx(morsel_size_rows=3):
        rows = df.to_arrow().to_pylist()
    return {r["k"]: r for r in rows}


def close(got, want, rel=1e-9) -> bool:
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got is None or (isinstance(got, float) and math.isnan(got))
    return got is not None and math.isclose(got, want, rel_tol=rel, abs_tol=1e-12)


def test_product_count_distinct_var_skew_vs_pandas():
    df = (
        frame()
        .groupby("k")
        .agg(
            col("x").product().alias("px"),
            col("i").product().alias("pi"),
            col("x").count_distinct().alias("cdx"),
            col("x").var().alias("v1"),
            col("x").var(ddof=0).alias("v0"),
            col("x").skew().alias("sk"),
            col("x").stddev(ddof=1).alias("sd1"),
        )
    )
    got = by_key(df)
    p = pdf()
    g = p.groupby("k")
    assert df.schema().field("px").type == pa.float64()
    assert df.schema().field("pi").type == pa.int64()
    assert df.schema().field("cdx").type == pa.uint64()
    n = g["x"].count()
    for k in sorted(set(KEYS)):
        # SQL/Daft: product over no values is null (pandas says 1 with min_count=0).
        want_px = g["x"].prod(min_count=1)[k]
        assert close(got[k]["px"], None if pd.isna(want_px) else float(want_px)), k
        want_pi = g["i"].prod(min_count=1)[k]
        assert got[k]["pi"] == (None if pd.isna(want_pi) else int(want_pi)), k
        assert got[k]["cdx"] == g["x"].nunique()[k], k
        for name, ddof in (("v1", 1), ("v0", 0)):
            want = g["x"].var(ddof=ddof)[k] if n[k] > ddof else None
            assert close(got[k][name], want), (k, name, got[k][name], want)
        want_sd = g["x"].std(ddof=1)[k] if n[k] > 1 else None
        assert close(got[k]["sd1"], want_sd), k
        values = p[p.k == k]["x"].dropna().to_numpy()
        if len(values) >= 2 and values.std() > 0:
            m = values.mean()
            biased = ((values - m) ** 3).mean() / ((values - m) ** 2).mean() ** 1.5
            assert close(got[k]["sk"], biased, rel=1e-7), k
            # pandas' skew is the adjusted (unbiased) one: the same up to its factor.
            nn = len(values)
            if nn >= 3:
                adj = biased * math.sqrt(nn * (nn - 1)) / (nn - 2)
                assert close(adj, g["x"].skew()[k], rel=1e-7), k
        elif len(values) == 0:
            assert got[k]["sk"] is None, k


def test_bool_and_or_and_count_modes():
    df = (
        frame()
        .groupby("k")
        .agg(
            col("b").bool_and().alias("all"),
            col("b").bool_or().alias("any"),
            col("b").count().alias("valid"),
            col("b").count("null").alias("nulls"),
            col("b").count(mode="all").alias("rows"),
        )
    )
    got = by_key(df)
    p = pdf()
    for k in sorted(set(KEYS)):
        values = p[p.k == k]["b"].dropna().tolist()
        assert got[k]["all"] == (all(values) if values else None), k
        assert got[k]["any"] == (any(values) if values else None), k
        assert got[k]["valid"] == len(values)
        assert got[k]["nulls"] == int(p[p.k == k]["b"].isna().sum())
        assert got[k]["rows"] == KEYS.count(k)


def test_set_percentile_median_approx_percentiles():
    df = (
        frame()
        .groupby("k")
        .agg(
            col("x").agg_set().alias("set"),
            col("i").list_agg_distinct().alias("iset"),
            col("x").median().alias("med"),
            col("x").percentile(0.9).alias("p90"),
            col("x").approx_percentiles([0.0, 0.5, 1.0]).alias("ap"),
            col("x").approx_percentiles(0.5).alias("ap50"),
        )
    )
    got = by_key(df)
    assert df.schema().field("ap").type == pa.list_(pa.float64(), 3)
    assert df.schema().field("ap50").type == pa.float64()
    p = pdf()
    g = p.groupby("k")
    for k in sorted(set(KEYS)):
        values = p[p.k == k]["x"].dropna()
        assert sorted(got[k]["set"]) == sorted(set(values.tolist())), k
        assert sorted(got[k]["iset"]) == sorted(set(p[p.k == k]["i"].dropna().astype(int).tolist())), k
        if values.empty:
            assert got[k]["med"] is None and got[k]["p90"] is None and got[k]["ap"] is None, k
            assert got[k]["ap50"] is None
            continue
        assert close(got[k]["med"], g["x"].median()[k]), k
        assert close(got[k]["p90"], g["x"].quantile(0.9)[k]), k
        # t-digest is exact at the ends and, on these few values, within the range in between.
        lo, mid, hi = got[k]["ap"]
        assert lo == values.min() and hi == values.max(), k
        assert values.min() <= mid <= values.max() and values.min() <= got[k]["ap50"] <= values.max()


def test_global_aggregations_and_empty_input():
    df = frame().agg(
        col("x").product().alias("p"),
        col("x").count_distinct().alias("cd"),
        col("x").var().alias("v"),
        col("b").bool_and().alias("all"),
        col("b").bool_or().alias("any"),
        col("x").median().alias("med"),
        col("x").skew().alias("sk"),
    )
    row = df.to_arrow().to_pylist()[0]
    s = pd.Series(X, dtype="float64")
    assert close(row["p"], float(s.prod()))  # contains 0.0
    assert row["cd"] == s.nunique()
    assert close(row["v"], s.var())
    assert row["all"] is False and row["any"] is True
    assert close(row["med"], s.median())
    m = s.dropna().to_numpy()
    assert close(row["sk"], ((m - m.mean()) ** 3).mean() / ((m - m.mean()) ** 2).mean() ** 1.5, rel=1e-7)
    empty = (
        frame()
        .where(col("k") == "zzz")
        .agg(
            col("x").count_distinct().alias("cd"),
            col("x").product().alias("p"),
            col("b").bool_and().alias("all"),
        )
    )
    assert empty.to_arrow().to_pylist() == [{"cd": 0, "p": None, "all": None}]


def test_nan_is_a_value():
    df = ketch.from_pydict({"k": [1, 1, 1, 2, 2], "x": [1.0, float("nan"), 2.0, float("nan"), float("nan")]})
    rows = {
        r["k"]: r
        for r in df.groupby("k")
        .agg(col("x").product().alias("p"), col("x").count_distinct().alias("cd"), col("x").var().alias("v"))
        .to_arrow()
        .to_pylist()
    }
    assert math.isnan(rows[1]["p"]) and math.isnan(rows[1]["v"])
    assert rows[1]["cd"] == 3 and rows[2]["cd"] == 1


def test_functions_module_and_shorthands_agree():
    base = frame()
    via_functions = by_key(
        base.groupby("k").agg(
            F.product(col("x")).alias("x"),
            F.count_distinct(col("i")).alias("i"),
            F.bool_or(col("b")).alias("b"),
        )
    )
    via_methods = by_key(
        base.groupby("k").agg(col("x").product(), col("i").count_distinct(), col("b").bool_or())
    )
    assert via_functions == via_methods
    assert by_key(base.groupby("k").product("x")) == {
        k: {"k": k, "x": v["x"]} for k, v in via_methods.items()
    }
    assert by_key(base.groupby("k").count_distinct("i")) == {
        k: {"k": k, "i": v["i"]} for k, v in via_methods.items()
    }
    assert by_key(base.groupby("k").bool_or("b")) == {
        k: {"k": k, "b": v["b"]} for k, v in via_methods.items()
    }
    var0 = by_key(base.groupby("k").var("x", ddof=0))
    assert close(var0["d"]["x"], pd.Series([3.0, 1.0, 4.0, 1.0, 5.0, 9.0]).var(ddof=0))
    assert base.skew("x").to_arrow().column_names == ["x"]
    assert base.product("i").to_arrow().to_pylist() == [{"i": int(np.prod([v for v in I if v is not None]))}]
    assert base.count_distinct("k").to_arrow().to_pylist() == [{"k": 5}]
    assert sorted(base.agg_set("k").to_arrow().to_pylist()[0]["k"]) == sorted(set(KEYS))
    assert F.median(col("x")).name() == "x" and F.avg(col("x")).name() == "x"


def test_wrong_types_fail_at_plan_time():
    df = ketch.from_pydict({"s": ["a", "b"], "i": [1, 2], "k": [1, 1]})
    with pytest.raises(KetchTypeError, match=r"agg_product.*'s'.*(string|utf8)"):
        df.agg(col("s").product())
    with pytest.raises(KetchTypeError, match=r"agg_bool_and.*'i'.*int64"):
        df.groupby("k").agg(col("i").bool_and())
    with pytest.raises(KetchTypeError, match=r"agg_var.*'s'"):
        df.agg(col("s").var())
    with pytest.raises(KetchTypeError, match=r"agg_skew.*'s'"):
        df.agg(col("s").skew())
    with pytest.raises(KetchTypeError, match=r"agg_percentile.*'s'"):
        df.agg(col("s").median())
    for bad in (1.5, -0.1, [0.5, 2.0], []):
        with pytest.raises(ValueError, match="approx_percentiles"):
            col("i").approx_percentiles(bad)
    with pytest.raises(ValueError, match="percentile"):
        col("i").percentile(1.01)
    with pytest.raises(ValueError, match="ddof"):
        col("i").var(ddof=-1)
    with pytest.raises(ValueError, match="count mode"):
        col("i").count("some")


# -- pivot ---------------------------------------------------------------------------------------------
PIVOT_DATA = {
    "g": ["A", "A", "A", "B", "B", "B", "A", "B"],
    "p": [1, 2, 1, 2, None, 1, None, 2],
    "v": [10, 20, 30, 40, 50, 60, 70, None],
    "t": [True, False, True, True, False, True, None, None],
}


def pandas_pivot(values: str, fn) -> dict[str, dict[str, object]]:
    p = pd.DataFrame(PIVOT_DATA)
    p["p"] = p["p"].map(lambda x: "None" if pd.isna(x) else str(int(x)))
    out: dict[str, dict[str, object]] = {}
    for (g, pv), part in p.groupby(["g", "p"]):
        out.setdefault(g, {})[pv] = fn(part[values])
    return out


PIVOT_CASES = {
    "sum": ("v", lambda s: s.sum()),
    "mean": ("v", lambda s: s.mean() if s.notna().any() else None),
    "min": ("v", lambda s: s.min() if s.notna().any() else None),
    "max": ("v", lambda s: s.max() if s.notna().any() else None),
    "count": ("v", lambda s: s.count()),
    "count_distinct": ("v", lambda s: s.nunique()),
    "product": ("v", lambda s: s.prod(min_count=1) if s.notna().any() else None),
    "var": ("v", lambda s: s.var() if s.count() > 1 else None),
    "stddev": ("v", lambda s: s.std(ddof=1) if s.count() > 1 else None),
    "median": ("v", lambda s: s.median() if s.notna().any() else None),
    "bool_and": ("t", lambda s: bool(s.dropna().all()) if s.notna().any() else None),
    "bool_or": ("t", lambda s: bool(s.dropna().any()) if s.notna().any() else None),
    "list": ("v", lambda s: sorted(s.dropna().tolist())),
    "agg_set": ("v", lambda s: sorted(set(s.dropna().tolist()))),
}


@pytest.mark.parametrize("agg_fn", sorted(PIVOT_CASES))
def test_pivot_every_aggregation_with_null_pivot_values(agg_fn):
    values, fn = PIVOT_CASES[agg_fn]
    df = ketch.from_pydict(PIVOT_DATA).into_partitions(2).pivot("g", "p", values, agg_fn)
    # Daft's names: the pivot values' string form, null ones as "None" (after the others).
    assert df.column_names == ["g", "1", "2", "None"]
    got = {r["g"]: r for r in df.to_arrow().to_pylist()}
    want = pandas_pivot(values, fn)
    assert sorted(got) == ["A", "B"]
    for g in ("A", "B"):
        for name in ("1", "2", "None"):
            value, expected = got[g][name], want[g].get(name)
            if agg_fn == "list":
                value = sorted(v for v in value if v is not None) if value is not None else None
            elif agg_fn == "agg_set":
                value = sorted(value) if value is not None else None
            if isinstance(expected, float) or isinstance(value, float):
                assert close(value, None if expected is None else float(expected)), (agg_fn, g, name, value)
            else:
                assert value == expected, (agg_fn, g, name, value, expected)


def test_pivot_names_can_pick_the_null_column_and_skew():
    df = ketch.from_pydict(PIVOT_DATA).pivot("g", "p", "v", "skew", names=["None", "1"])
    assert df.column_names == ["g", "None", "1"]
    got = {r["g"]: r for r in df.to_arrow().to_pylist()}
    # A's null-pivot rows hold one value (70): a zero variance, so skew is NaN; B's 1s: one value.
    assert got["A"]["None"] is None or math.isnan(got["A"]["None"])
    v = np.array([10.0, 30.0])
    m = v.mean()
    want = ((v - m) ** 3).mean() / ((v - m) ** 2).mean() ** 1.5
    assert close(got["A"]["1"], want)
    with pytest.raises(ValueError, match="agg_fn"):
        ketch.from_pydict(PIVOT_DATA).pivot("g", "p", "v", "nope")


# -- the two phases (the Ray runner's partial aggregate -> shuffle -> final aggregate) ----------------
def _two_phase(df: ketch.DataFrame, chunks: list[pa.Table]) -> tuple[pa.Table, list[pa.Table]]:
    """``df`` (an aggregate over an in-memory source) as partial per chunk, then one final over all
    states, through plan bytes as on Ray; returns (result, the partial states per chunk)."""
    from ketch import _core
    from ketch.context import get_execution_config

    config = get_execution_config().to_native()
    plan = df._plan.optimize(config=config)
    split = plan.split_aggregate()
    assert split is not None, "these aggregations have mergeable partial states"
    partial, final = split
    states = []
    for chunk in chunks:
        task = _core.PyPlan.from_bytes(partial.with_inputs([_core.PyPlan.in_memory(chunk)]).to_bytes())
        states.append(task.execute(config, None)[1].read_all())
    merged = pa.concat_tables(states)
    task = _core.PyPlan.from_bytes(final.with_inputs([_core.PyPlan.in_memory(merged)]).to_bytes())
    return task.execute(config, None)[1].read_all(), states


MERGEABLE_MORE = [
    col("x").product().alias("px"),
    col("b").bool_and().alias("all"),
    col("b").bool_or().alias("any"),
    col("x").var().alias("var"),
    col("x").var(ddof=0).alias("var0"),
    col("x").skew().alias("skew"),
    col("y").count_distinct().alias("cd"),
    col("y").agg_set().alias("set"),
    col("x").median().alias("med"),
    col("x").percentile(0.25).alias("p25"),
]


@pytest.mark.parametrize("n_chunks", [1, 4, 9])
def test_partial_states_merge_to_the_single_phase_result(n_chunks):
    rng = np.random.default_rng(n_chunks)
    n = 3000
    # Values far from 0 (1e9 + small spread): sums of squares would cancel catastrophically; the
    # merged moments (Chan et al.) must not.
    x = 1e9 + rng.normal(0, 3, n)
    x[rng.random(n) < 0.1] = np.nan
    table = pa.table(
        {
            "k": pa.array(rng.integers(0, 25, n)),
            "x": pa.array([None if math.isnan(v) else float(v) for v in x], pa.float64()),
            "b": pa.array([None if r < 0.1 else bool(r < 0.8) for r in rng.random(n)]),
            "y": pa.array([None if r < 0.1 else f"w{int(r * 40)}" for r in rng.random(n)]),
        }
    )
    size = math.ceil(n / n_chunks)
    chunks = [table.slice(i * size, size) for i in range(n_chunks)]
    df = ketch.from_arrow(table).groupby("k").agg(*MERGEABLE_MORE)
    got, states = _two_phase(df, chunks)
    names = states[0].schema.names
    assert "__a3_m2" in names and "__a5_m3" in names and "__a6_dlist" in names and "__a8_vlist" in names
    rows = {r["k"]: r for r in got.to_pylist()}
    p = table.to_pandas()
    for k, part in p.groupby("k"):
        xs = part["x"].dropna().to_numpy()
        r = rows[k]
        assert r["all"] == bool(part["b"].dropna().all()) and r["any"] == bool(part["b"].dropna().any())
        assert r["cd"] == part["y"].nunique() and sorted(r["set"]) == sorted(part["y"].dropna().unique())
        assert r["med"] == pytest.approx(float(np.median(xs)), rel=1e-15)
        assert r["p25"] == pytest.approx(float(np.percentile(xs, 25)), rel=1e-15)
        assert r["var"] == pytest.approx(xs.var(ddof=1), rel=1e-6)
        assert r["var0"] == pytest.approx(xs.var(ddof=0), rel=1e-6)
        d = xs - xs.mean()
        assert r["skew"] == pytest.approx((d**3).mean() / (d**2).mean() ** 1.5, rel=1e-4, abs=1e-6)
        assert r["px"] == pytest.approx(float(np.prod(xs)), rel=1e-9) or (
            math.isinf(r["px"]) and math.isinf(float(np.prod(xs)))
        )


def test_partial_states_of_high_cardinality_keys_skip_grouping():
    # Past 100k rows with nearly one group per row the partial phase stops grouping and emits one
    # state row per input row (n 1 or 0, M2 = M3 = 0, one-value lists); the final phase merges them.
    rng = np.random.default_rng(7)
    n = 160_000
    keys = np.arange(n) % 140_000  # the first 131072-row morsel: one group per row
    x = rng.normal(5, 2, n)
    table = pa.table(
        {
            "k": pa.array(keys),
            "x": pa.array([None if i % 7 == 0 else float(v) for i, v in enumerate(x)], pa.float64()),
            "b": pa.array([None if i % 5 == 0 else bool(i % 3) for i in range(n)]),
            "y": pa.array([None if i % 11 == 0 else f"w{i % 3}" for i in range(n)]),
        }
    )
    df = ketch.from_arrow(table).groupby("k").agg(*MERGEABLE_MORE)
    got, states = _two_phase(df, [table])
    assert states[0].num_rows > 140_000  # not merged within the partial phase: grouping was skipped
    want = ketch.from_arrow(table).groupby("k").agg(*MERGEABLE_MORE).to_arrow()
    got_rows = sorted(got.to_pylist(), key=lambda r: r["k"])
    want_rows = sorted(want.to_pylist(), key=lambda r: r["k"])
    assert len(got_rows) == len(want_rows) == 140_000
    for g, w in zip(got_rows[::97], want_rows[::97], strict=True):
        for name in ("all", "any", "cd"):
            assert g[name] == w[name], (name, g, w)
        assert sorted(g["set"]) == sorted(w["set"])
        for name in ("px", "var", "var0", "skew", "med", "p25"):
            assert close(g[name], w[name], rel=1e-9), (name, g, w)
