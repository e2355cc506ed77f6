"""Property tests: grouped and global aggregation, distinct, against pandas on randomized inputs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from rel_data import (
    KEY_TYPES,
    KINDS,
    SEEDS,
    N,
    key_values,
    morsels,
    norm,
    null_last,
    seed_shape_cases,
    with_nulls,
)

import ketch
from ketch import col
from ketch.errors import KetchTypeError

# Each test runs on the native runner and, for seed 0 (every shape, kind and morsel size), on the Ray
# runner too (tests/conftest.py: runner, ray_subset).
pytestmark = [pytest.mark.usefixtures("runner"), pytest.mark.ray_subset(seed=[0])]

SHAPES = ["empty", "dup", "skewed", "distinct", "nullkeys"]
# (seed, shape) pairs; the empty input is the same for every seed, so it runs once
CASES = seed_shape_cases(SHAPES)
CONCAT_WIDTH = 4


# -- helpers (the ones shared by all test_rel_* files live in rel_data.py) ----------------------------
def fixed_width_strings(rng, n, width=CONCAT_WIDTH):
    letters = np.array(list("pqrs"))[rng.integers(0, 4, (n, width))]
    return ["".join(row) for row in letters]


def make_data(seed, shape, kind, n=N):
    rng = np.random.default_rng(seed)
    keys = key_values(rng, n, shape, kind)
    n = len(keys)
    alphabet = ["a", "b", "xy", "", "zzz", "\u00e9t\u00e9", "B"]
    data = {
        "k": keys,
        "k2": with_nulls(rng, [int(x) for x in rng.integers(0, 3, n)], 0.2),
        "i": with_nulls(rng, [int(x) for x in rng.integers(-1000, 1001, n)], 0.15),
        "f": with_nulls(rng, [float(x) for x in rng.normal(0, 100, n)], 0.15),
        "s": with_nulls(rng, [alphabet[x] for x in rng.integers(0, len(alphabet), n)], 0.15),
        # no nulls here: agg_concat with nulls has its own test below
        "c": fixed_width_strings(rng, n),
    }
    ktype = KEY_TYPES[kind]
    table = pa.table(
        {
            "k": pa.array(data["k"], ktype),
            "k2": pa.array(data["k2"], pa.int64()),
            "i": pa.array(data["i"], pa.int64()),
            "f": pa.array(data["f"], pa.float64()),
            "s": pa.array(data["s"], pa.string()),
            "c": pa.array(data["c"], pa.string()),
        }
    )
    pdf = pd.DataFrame(
        {
            "k": pd.Series(data["k"], dtype="Int64" if kind == "int" else object),
            "k2": pd.Series(data["k2"], dtype="Int64"),
            "i": pd.Series(data["i"], dtype="Int64"),
            "f": pd.Series(data["f"], dtype="Float64"),
            "s": pd.Series(data["s"], dtype=object),
            "c": pd.Series(data["c"], dtype=object),
        }
    )
    return table, pdf


def close(actual, expected, scale=0.0):
    if expected is None or actual is None:
        return actual is None and expected is None
    return math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9 * max(scale, 1.0))


def chunks(s, width=CONCAT_WIDTH):
    assert len(s) % width == 0, s
    return sorted(s[i : i + width] for i in range(0, len(s), width))


AGG_NAMES_INT = ["i_sum", "i_min", "i_max", "i_cnt", "i_all", "i_null", "i_ndv", "f_cnt", "s_cnt", "s_ndv"]


# aggregations that collect values (no partial merge): they force a one-phase aggregation
COLLECTING = {"i_list", "s_list", "i_ndv", "s_ndv", "c_cat"}


def all_aggs():
    return [
        col("i").sum().alias("i_sum"),
        col("i").mean().alias("i_mean"),
        col("i").min().alias("i_min"),
        col("i").max().alias("i_max"),
        col("i").count().alias("i_cnt"),
        col("i").count(mode="all").alias("i_all"),
        col("i").count(mode="null").alias("i_null"),
        col("i").stddev().alias("i_std"),
        col("i").approx_count_distinct().alias("i_ndv"),
        col("i").agg_list().alias("i_list"),
        col("f").sum().alias("f_sum"),
        col("f").mean().alias("f_mean"),
        col("f").min().alias("f_min"),
        col("f").max().alias("f_max"),
        col("f").stddev().alias("f_std"),
        col("f").count().alias("f_cnt"),
        col("f").any_value().alias("f_any"),
        col("s").min().alias("s_min"),
        col("s").max().alias("s_max"),
        col("s").count().alias("s_cnt"),
        col("s").any_value().alias("s_any"),
        col("s").agg_list().alias("s_list"),
        col("s").approx_count_distinct().alias("s_ndv"),
        col("c").agg_concat().alias("c_cat"),
    ]


EXPECTED_TYPES = {
    "i_sum": pa.int64(),
    "i_mean": pa.float64(),
    "i_min": pa.int64(),
    "i_max": pa.int64(),
    "i_cnt": pa.uint64(),
    "i_all": pa.uint64(),
    "i_null": pa.uint64(),
    "i_std": pa.float64(),
    "i_ndv": pa.uint64(),
    "f_sum": pa.float64(),
    "f_mean": pa.float64(),
    "f_std": pa.float64(),
    "f_cnt": pa.uint64(),
    "s_min": pa.string(),
    "s_max": pa.string(),
    "c_cat": (pa.string(), pa.large_string()),  # concatenation may widen offsets
}


def expected_groups(pdf: pd.DataFrame, by: str) -> dict:
    """Expected aggregates per group, from pandas' vectorized groupby(dropna=False); list-like
    expectations (multisets, value sets) from plain Python grouping."""
    g = pdf.groupby(by, dropna=False, sort=False)
    series = {
        "i_sum": g["i"].sum(min_count=1),
        "i_mean": g["i"].mean(),
        "i_min": g["i"].min(),
        "i_max": g["i"].max(),
        "i_cnt": g["i"].count(),
        "i_all": g.size(),
        "i_std": g["i"].std(ddof=1),
        "i_ndv": g["i"].nunique(dropna=True),
        "f_sum": g["f"].sum(min_count=1),
        "f_scale": pdf["f"].abs().groupby(pdf[by], dropna=False).sum(),
        "f_mean": g["f"].mean(),
        "f_min": g["f"].min(),
        "f_max": g["f"].max(),
        "f_std": g["f"].std(ddof=1),
        "f_cnt": g["f"].count(),
        "s_cnt": g["s"].count(),
        "s_ndv": g["s"].nunique(dropna=True),
    }
    out: dict = {}
    for name, ser in series.items():
        for key, value in ser.items():
            out.setdefault(norm(key), {})[name] = norm(value)
    lists: dict = {}
    for key, i, f, s_, c in zip(pdf[by], pdf["i"], pdf["f"], pdf["s"], pdf["c"], strict=True):
        entry = lists.setdefault(norm(key), ([], [], [], []))
        entry[0].append(norm(i))
        entry[1].append(norm(f))
        entry[2].append(norm(s_))
        if c is not None:
            entry[3].append(c)
    assert set(lists) == set(out)
    for key, (i, f, s_, c) in lists.items():
        exp = out[key]
        exp["i_null"] = exp["i_all"] - exp["i_cnt"]
        if exp["i_cnt"] <= 1:  # ddof=1 (Daft's default): null for fewer than 2 values
            exp["i_std"] = None
        if exp["f_cnt"] <= 1:
            exp["f_std"] = None
        exp["i_list"] = sorted(i, key=null_last)
        exp["s_list"] = sorted(s_, key=null_last)
        valid = [v for v in s_ if v is not None]
        exp["s_min"] = min(valid) if valid else None
        exp["s_max"] = max(valid) if valid else None
        exp["f_set"] = set(f)
        exp["s_set"] = set(s_)
        exp["c_cat"] = sorted(c) if c else None
    return out


def check_row(row: dict, exp: dict, where: str) -> None:
    for name in AGG_NAMES_INT:
        assert row[name] == exp[name], (where, name, row[name], exp[name])
    for name in ("i_min", "i_max", "f_min", "f_max", "s_min", "s_max"):
        assert row[name] == exp[name], (where, name, row[name], exp[name])
    assert close(row["f_sum"], exp["f_sum"], exp["f_scale"]), (where, row["f_sum"], exp["f_sum"])
    for name in ("i_mean", "f_mean"):
        assert close(row[name], exp[name], 1e3), (where, name, row[name], exp[name])
    for name in ("i_std", "f_std"):
        assert close(row[name], exp[name], 1e3), (where, name, row[name], exp[name])
    assert row["f_any"] in exp["f_set"], (where, row["f_any"])
    assert row["s_any"] in exp["s_set"], (where, row["s_any"])
    assert sorted(row["i_list"], key=null_last) == exp["i_list"], where
    assert sorted(row["s_list"], key=null_last) == exp["s_list"], where
    if exp["c_cat"] is None:
        assert row["c_cat"] is None, (where, row["c_cat"])
    else:
        assert chunks(row["c_cat"]) == exp["c_cat"], where


# -- grouped aggregation -------------------------------------------------------------------------------
@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed,shape", CASES)
def test_groupby_agg_matches_pandas(seed, shape, kind, small):
    table, pdf = make_data(seed, shape, kind)
    expected = expected_groups(pdf, "k") if len(pdf) else {}
    df = ketch.from_arrow(table)
    with morsels(small):
        # all together (one phase, since some aggregations collect values), then split: the
        # mergeable ones alone take the two-phase path (partial per morsel, then merge)
        combined = df.groupby("k").agg(all_aggs()).to_arrow()
        two_phase = df.groupby("k").agg([e for e in all_aggs() if e.name() not in COLLECTING]).to_arrow()
        one_phase = df.groupby("k").agg([e for e in all_aggs() if e.name() in COLLECTING]).to_arrow()
    assert combined.column_names == ["k"] + [e.name() for e in all_aggs()]
    assert combined.schema.field("k").type == table.schema.field("k").type
    for name, typ in EXPECTED_TYPES.items():
        assert combined.schema.field(name).type in (typ if isinstance(typ, tuple) else (typ,)), name
        split = two_phase if name in two_phase.column_names else one_phase
        assert split.schema.field(name).type == combined.schema.field(name).type, name
    split_rows: dict = {}
    for part in (two_phase, one_phase):
        rows = part.to_pylist()
        assert len({r["k"] for r in rows}) == len(rows), "a group key appears more than once"
        for r in rows:
            split_rows.setdefault(r["k"], {}).update(r)
    for label, rows in (("combined", combined.to_pylist()), ("split", list(split_rows.values()))):
        got = {r["k"]: r for r in rows}
        assert len(got) == len(rows), "a group key appears more than once"
        assert set(got) == set(expected), label
        for key, exp in expected.items():
            check_row(got[key], exp, f"{label} key={str(key)[-20:]!r}")


@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("seed,shape", CASES)
def test_groupby_two_keys_vectorized_pandas(seed, shape, small):
    """Two keys (one with nulls), checked against pandas' vectorized groupby(dropna=False)."""
    table, pdf = make_data(seed, shape, "str")
    with morsels(small):
        out = (
            ketch.from_arrow(table)
            .groupby("k", "k2")
            .agg(
                col("i").sum().alias("i_sum"),
                col("f").mean().alias("f_mean"),
                col("i").count(mode="all").alias("n"),
                col("s").max().alias("s_max"),
            )
            .to_arrow()
            .to_pylist()
        )
    got = {(r["k"], r["k2"]): r for r in out}
    assert len(got) == len(out)
    g = pdf.groupby(["k", "k2"], dropna=False)
    exp_sum = g["i"].sum(min_count=1)
    exp_mean = g["f"].mean()
    exp_n = g.size()
    exp_max = g["s"].agg(lambda x: max([v for v in x if v is not None], default=None))
    expected: dict = {}
    for part, ser in enumerate((exp_sum, exp_mean, exp_n, exp_max)):
        for key, value in ser.items():
            expected.setdefault(tuple(norm(v) for v in key), [None] * 4)[part] = norm(value)
    assert set(got) == set(expected)
    for key, (s, m, n, mx) in expected.items():
        row = got[key]
        assert row["i_sum"] == s and row["n"] == n and row["s_max"] == mx, (key, row)
        assert close(row["f_mean"], m, 1e3), (key, row["f_mean"], m)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_groupby_shortcuts_equal_explicit_aggs(seed):
    table, _ = make_data(seed, "nullkeys", "int")
    df = ketch.from_arrow(table).select("k", "i", "f")
    for method in ("sum", "mean", "min", "max", "count", "stddev"):
        short = df.groupby("k").__getattribute__(method)().sort("k").to_pydict()
        explicit = (
            df.groupby("k")
            .agg(getattr(col("i"), method)(), getattr(col("f"), method)())
            .sort("k")
            .to_pydict()
        )
        assert short.keys() == explicit.keys()
        assert short["k"] == explicit["k"]
        for name in ("i", "f"):
            for a, b in zip(short[name], explicit[name], strict=True):
                assert close(a, b, 1e3), (method, name, a, b)
    # shortcut restricted to named columns
    assert df.groupby("k").sum("i").column_names == ["k", "i"]


# -- global aggregation ----------------------------------------------------------------------------
@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("seed,shape", CASES)
@pytest.mark.parametrize("split", [False, True], ids=["combined", "split"])
def test_global_agg_matches_pandas(seed, shape, small, split):
    table, pdf = make_data(seed, shape, "int")
    df = ketch.from_arrow(table)
    with morsels(small):
        if split:  # mergeable aggregations alone take the two-phase path
            a = df.agg([e for e in all_aggs() if e.name() not in COLLECTING]).to_arrow()
            b = df.agg([e for e in all_aggs() if e.name() in COLLECTING]).to_arrow()
            assert a.num_rows == 1 and b.num_rows == 1
            out = pa.Table.from_arrays(a.columns + b.columns, names=a.column_names + b.column_names)
        else:
            out = df.agg(all_aggs()).to_arrow()
    assert out.num_rows == 1
    for name, typ in EXPECTED_TYPES.items():
        assert out.schema.field(name).type in (typ if isinstance(typ, tuple) else (typ,)), name
    row = out.to_pylist()[0]
    if shape == "empty":
        for name in ("i_cnt", "i_all", "i_null", "f_cnt", "s_cnt", "i_ndv", "s_ndv"):
            assert row[name] == 0, (name, row[name])
        for name in (
            "i_sum",
            "i_mean",
            "i_min",
            "i_max",
            "i_std",
            "f_sum",
            "f_mean",
            "f_min",
            "f_max",
            "f_std",
            "f_any",
            "s_min",
            "s_max",
            "s_any",
        ):
            assert row[name] is None, (name, row[name])
        # Daft 0.7.26: string_agg() of no rows is '' and list_agg of no rows []
        assert row["c_cat"] == "", row["c_cat"]
        assert row["i_list"] in (None, []) and row["s_list"] in (None, [])
        return
    check_row(row, expected_groups(pdf.assign(_all=0), "_all")[0], "global")


def test_global_agg_empty_after_filter():
    df = ketch.from_pydict({"x": [1, 2, 3], "s": ["a", "b", "c"]}).where(col("x") > 10)
    out = df.agg(
        col("x").count().alias("n"),
        col("x").count(mode="all").alias("na"),
        col("x").sum().alias("sum"),
        col("x").mean().alias("mean"),
        col("s").min().alias("smin"),
    ).to_pydict()
    assert out == {"n": [0], "na": [0], "sum": [None], "mean": [None], "smin": [None]}


# -- distinct ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed,shape", CASES)
def test_distinct_matches_pandas(seed, shape, kind, small):
    table, pdf = make_data(seed, shape, kind)
    df = ketch.from_arrow(table)
    with morsels(small):
        full = df.select("k", "k2").distinct().to_arrow().to_pylist()
        subset = df.select("k", "k2", "s").distinct("k").to_arrow().to_pylist()
        uniq = df.select("k2").unique().to_arrow().to_pylist()
    got = sorted(((r["k"], r["k2"]) for r in full), key=lambda t: tuple(map(null_last, t)))
    exp = sorted(
        (tuple(norm(v) for v in t) for t in pdf[["k", "k2"]].drop_duplicates().itertuples(index=False)),
        key=lambda t: tuple(map(null_last, t)),
    )
    assert got == exp
    assert sorted((r["k2"] for r in uniq), key=null_last) == sorted(
        {norm(v) for v in pdf["k2"]}, key=null_last
    )
    # distinct on a subset: one row per key, the other columns hold a value of that key's rows
    assert list(subset[0]) if subset else True
    keys = [r["k"] for r in subset]
    assert len(keys) == len(set(keys))
    allowed: dict = {}
    for k, k2, s in zip(pdf["k"], pdf["k2"], pdf["s"], strict=True):
        entry = allowed.setdefault(norm(k), (set(), set()))
        entry[0].add(norm(k2))
        entry[1].add(norm(s))
    assert set(keys) == set(allowed)
    for r in subset:
        assert list(r) == ["k", "k2", "s"]
        assert r["k2"] in allowed[r["k"]][0] and r["s"] in allowed[r["k"]][1]


# -- plan-time type errors -----------------------------------------------------------------------------
def test_sum_of_string_fails_at_plan_time():
    df = ketch.from_pydict({"g": [1, 2], "name": ["a", "b"]})
    with pytest.raises(KetchTypeError) as info:
        df.groupby("g").agg(col("name").sum())
    msg = str(info.value)
    assert "sum" in msg and "string" in msg and "name" in msg
    with pytest.raises(KetchTypeError, match="sum"):
        df.agg(col("name").sum())
    with pytest.raises(KetchTypeError, match="string"):
        df.groupby("g").sum("name")


@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
def test_agg_concat_skips_nulls(small):
    rng = np.random.default_rng(5)
    n = 200
    keys = [int(x) for x in rng.integers(0, 10, n)]
    vals = with_nulls(rng, fixed_width_strings(rng, n), 0.2)
    df = ketch.from_pydict({"k": keys, "c": vals})
    with morsels(small):
        got = {r["k"]: r["c"] for r in df.groupby("k").agg(col("c").agg_concat()).to_arrow().to_pylist()}
        total = df.agg(col("c").agg_concat()).to_arrow().to_pylist()[0]["c"]
    for k in set(keys):
        members = [v for kk, v in zip(keys, vals, strict=True) if kk == k and v is not None]
        assert got[k] is not None and chunks(got[k]) == sorted(members), k
    assert total is not None and chunks(total) == sorted(v for v in vals if v is not None)


@pytest.mark.parametrize("offset", [1e6, 1.7e9])
def test_stddev_is_numerically_stable(offset):
    rng = np.random.default_rng(11)
    keys = [int(x) for x in rng.integers(0, 4, 400)]
    vals = [offset + float(x) for x in rng.normal(0, 3, 400)]
    pdf = pd.DataFrame({"k": keys, "x": vals})
    exp = pdf.groupby("k")["x"].std(ddof=1)
    df = ketch.from_pydict({"k": keys, "x": vals})
    got = {r["k"]: r["x"] for r in df.groupby("k").agg(col("x").stddev()).to_arrow().to_pylist()}
    for k, e in exp.items():
        assert math.isclose(got[k], e, rel_tol=1e-6), (k, got[k], e)
    total = df.agg(col("x").stddev()).to_arrow().to_pylist()[0]["x"]
    assert math.isclose(total, float(np.std(vals, ddof=1)), rel_tol=1e-6)


def test_groupby_and_distinct_float_keys_negative_zero():
    pdf = pd.DataFrame({"f": [0.0, -0.0, 1.5, None, 1.5, -0.0], "v": [1, 2, 3, 4, 5, 6]})
    exp = {norm(k): int(v) for k, v in pdf.groupby("f", dropna=False)["v"].sum().items()}
    df = ketch.from_pandas(pdf)
    got = {r["f"]: r["v"] for r in df.groupby("f").agg(col("v").sum()).to_arrow().to_pylist()}
    assert got == exp == {0.0: 9, 1.5: 8, None: 4}
    assert df.select("f").distinct().count_rows() == len(pdf["f"].drop_duplicates()) == 3


# -- global aggregation as a plain reduction ------------------------------------------------------------
# Without group keys both phases reduce with Arrow's scalar kernels (no hashing); the result must be
# what the hash aggregate over a constant key gives, for every type and aggregation, with nulls, all
# nulls, no rows, several partitions and tiny morsels.
def _reduction_column(rng, kind: str, n: int, shape: str) -> pa.Array:
    values = {
        "int8": lambda: [int(x) for x in rng.integers(-100, 100, n)],
        "uint64": lambda: [int(x) for x in rng.integers(0, 2**40, n)],
        "int64": lambda: [int(x) for x in rng.integers(-(2**40), 2**40, n)],
        "float32": lambda: [float(x) for x in rng.normal(0, 10, n)],
        "float64": lambda: [float(x) for x in rng.normal(1e6, 3, n)],
        "bool": lambda: [bool(x) for x in rng.integers(0, 2, n)],
        "string": lambda: fixed_width_strings(rng, n),
        "date32": lambda: [int(x) for x in rng.integers(0, 20000, n)],
        "timestamp": lambda: [int(x) for x in rng.integers(0, 2**50, n)],
        "decimal": lambda: [int(x) for x in rng.integers(-(10**6), 10**6, n)],
    }[kind]()
    if shape == "nulls":
        values = with_nulls(rng, values, 0.3)
    elif shape == "allnull":
        values = [None] * n
    types = {
        "int8": pa.int8(),
        "uint64": pa.uint64(),
        "int64": pa.int64(),
        "float32": pa.float32(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "string": pa.string(),
        "date32": pa.date32(),
        "timestamp": pa.timestamp("us", "UTC"),
    }
    if kind == "decimal":
        import decimal

        return pa.array(
            [None if v is None else decimal.Decimal(v).scaleb(-2) for v in values], pa.decimal128(10, 2)
        )
    return pa.array(values, types[kind])


REDUCTION_KINDS = [
    "int8",
    "uint64",
    "int64",
    "float32",
    "float64",
    "bool",
    "string",
    "date32",
    "timestamp",
    "decimal",
]
NUMERIC_KINDS = {"int8", "uint64", "int64", "float32", "float64"}
ORDERED_KINDS = NUMERIC_KINDS | {"bool", "string", "date32", "timestamp"}


def _reduction_aggs(kind: str) -> tuple[list, list]:
    """(mergeable aggregations, value-collecting ones) that `kind` takes."""
    x = col("x")
    mergeable = [
        x.count().alias("cnt"),
        x.count(mode="all").alias("all"),
        x.count(mode="null").alias("null"),
        x.any_value(ignore_nulls=True).alias("any_nn"),
        x.any_value().alias("any"),
    ]
    collecting = [x.agg_list().alias("list"), x.approx_count_distinct().alias("ndv")]
    if kind in ORDERED_KINDS:
        mergeable += [x.min().alias("min"), x.max().alias("max")]
    if kind in NUMERIC_KINDS:
        mergeable += [x.sum().alias("sum"), x.mean().alias("mean")]
        collecting.append(x.stddev().alias("std"))
    if kind == "string":
        collecting.append(x.agg_concat().alias("cat"))
    return mergeable, collecting


def _same(name: str, got, want, values: list) -> None:
    if name == "any":  # hash_one's pick: some non-null value, null only when there is none
        non_null = [v for v in values if v is not None]
        assert (got in non_null) if non_null else got is None, (name, got)
    elif name == "list":
        assert sorted(got, key=null_last) == sorted(want, key=null_last), name
    elif name == "cat":
        assert (got is None and want is None) or chunks(got) == chunks(want), (name, got, want)
    elif isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9), (name, got, want)
    else:
        assert got == want, (name, got, want)


@pytest.mark.ray_subset(shape=["nulls", "empty"], parts=[3])
@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize("shape", ["nonull", "nulls", "allnull", "empty"])
@pytest.mark.parametrize("kind", REDUCTION_KINDS)
def test_global_reduction_equals_constant_key_hash_aggregate(kind, shape, parts):
    rng = np.random.default_rng(len(kind) * 7 + len(shape))
    n = 0 if shape == "empty" else 300
    values = _reduction_column(rng, kind, n, shape)
    df = ketch.from_arrow(pa.table({"x": values}))
    if parts > 1:
        df = df.into_partitions(parts)
    mergeable, collecting = _reduction_aggs(kind)
    keyed = df.with_column("__k", ketch.lit(0)).groupby("__k")
    for small in (False, True):
        with morsels(small):
            # mergeable alone: two phases (partial states per morsel / partition, then a merge);
            # with the collecting ones: one phase over the raw values
            for aggs in (mergeable, mergeable + collecting):
                got = df.agg(aggs).to_arrow()
                want = keyed.agg(aggs).exclude("__k").to_arrow()  # no rows: no group, no row
                assert got.num_rows == 1, (kind, shape)
                assert got.schema == want.schema, (kind, shape, got.schema, want.schema)
                row = got.to_pylist()[0]
                if n == 0:  # counts 0, the rest null (or an empty list)
                    for name, value in row.items():
                        expected = (
                            0 if name in ("cnt", "all", "null", "ndv") else "" if name == "cat" else None
                        )
                        assert value == expected or (name == "list" and value in (None, [])), (name, value)
                    continue
                for name, value in want.to_pylist()[0].items():
                    _same(name, row[name], value, values.to_pylist())


@pytest.mark.parametrize("parts", [1, 4])
def test_count_rows_and_global_sum_over_partitions(parts):
    n = 10_000
    df = ketch.from_pydict({"x": list(range(n))}).into_partitions(parts)
    assert df.count_rows() == n
    assert df.where(col("x") < 0).count_rows() == 0
    out = df.agg(
        col("x").sum().alias("s"), col("x").count().alias("c"), col("x").mean().alias("m")
    ).to_pydict()
    assert out == {"s": [n * (n - 1) // 2], "c": [n], "m": [(n - 1) / 2]}
    empty = df.where(col("x") < 0)
    assert empty.agg(col("x").sum()).to_pydict() == {"x": [None]}
    assert empty.agg(col("x").min().alias("lo"), col("x").count().alias("c")).to_pydict() == {
        "lo": [None],
        "c": [0],
    }


@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
def test_global_integer_sums_check_overflow_like_the_hash_aggregate(small):
    big = 2**62
    with morsels(small):
        for values, dtype in [([big] * 3, pa.int64()), ([-big] * 3, pa.int64()), ([2**63] * 2, pa.uint64())]:
            df = ketch.from_arrow(pa.table({"x": pa.array(values + [None], dtype)})).into_partitions(2)
            with pytest.raises(Exception, match="overflows"):
                df.agg(col("x").sum()).to_pydict()
        # at the limits, or leaving the range and coming back: exact
        for values, dtype in [
            ([2**63 - 1, 0, None], pa.int64()),
            ([-(2**63), 0], pa.int64()),
            ([2**64 - 1, 0], pa.uint64()),
            ([big, big, -big, None, 3], pa.int64()),
        ]:
            df = ketch.from_arrow(pa.table({"x": pa.array(values, dtype)})).into_partitions(2)
            assert df.agg(col("x").sum()).to_pydict() == {"x": [sum(v for v in values if v is not None)]}


def test_count_of_nested_columns_beside_an_any_value_of_them():
    # any_value/agg_list of nested values aggregate row positions; a count of a nested column in
    # the same aggregate used to lose its input ("aggregate input '__a0_v' is missing").
    structs = [{"a": 0}, {"a": 1}, {"a": 2}]
    table = pa.table({"g": [1, 1, 2], "t": structs, "l": [[1], None, [2, 3]], "x": [1, 2, 3]})
    df = ketch.from_arrow(table)

    def aggs():
        return [
            col("t").count().alias("tc"),
            col("l").count().alias("lc"),
            col("l").agg_list().alias("ll"),
            col("t").any_value().alias("ta"),
            col("x").sum().alias("s"),
        ]

    row = df.agg(*aggs()).to_arrow().to_pylist()[0]
    assert (row["tc"], row["lc"], row["s"]) == (3, 2, 6)
    assert row["ll"] == [[1], None, [2, 3]]
    assert row["ta"] in structs
    grouped = df.groupby("g").agg(*aggs()).sort("g").to_pydict()
    assert grouped["tc"] == [2, 1] and grouped["lc"] == [1, 1] and grouped["s"] == [3, 3]
    assert grouped["ll"] == [[[1], None], [[2, 3]]]
