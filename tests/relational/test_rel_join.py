"""Property tests: DataFrame.join (inner/left/right/outer/semi/anti) against pandas merge on
randomized inputs; plan-time key type errors; filter pushdown below a join in explain()."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from rel_data import KEY_TYPES, KINDS, SEEDS, key_values, morsels, norm, row_key, seed_shape_cases, with_nulls

import ketch
from ketch import col
from ketch.errors import KetchTypeError

# Each test runs on the native runner and, for seed 0 (every shape, kind and morsel size), on the Ray
# runner too (tests/conftest.py: runner, ray_subset).
pytestmark = [pytest.mark.usefixtures("runner"), pytest.mark.ray_subset(seed=[0])]

SHAPES = ["empty_left", "empty_right", "dup", "skewed", "distinct", "nullkeys"]
HOWS = ["inner", "left", "right", "outer", "semi", "anti"]
CASES = seed_shape_cases(SHAPES)
SIZES = {"dup": (30, 25), "skewed": (40, 30)}  # n_left, n_right; default below
DEFAULT_SIZE = (80, 60)


def sides(seed, shape, kind, key_names=("k", "k")):
    """Left (key, a: int, id) and right (key, b: string, id) as Arrow tables and pandas frames."""
    rng = np.random.default_rng(seed)
    n_left, n_right = SIZES.get(shape, DEFAULT_SIZE)
    if shape == "empty_left":
        n_left = 0
    if shape == "empty_right":
        n_right = 0
    ktype = KEY_TYPES[kind]
    kdtype = "Int64" if kind == "int" else object
    # keys: "skewed" has its rest from 100 codes; "distinct" is unique per side, ~half overlap between sides
    lkeys = key_values(rng, n_left, shape, kind, skew_range=100, distinct_ratio=2)
    rkeys = key_values(rng, n_right, shape, kind, skew_range=100, distinct_ratio=2)
    a = with_nulls(rng, [int(x) for x in rng.integers(-50, 50, n_left)])
    b = with_nulls(rng, [f"b{x}" for x in rng.integers(0, 30, n_right)])
    lk, rk = key_names
    left = pa.table(
        {lk: pa.array(lkeys, ktype), "a": pa.array(a, pa.int64()), "id": pa.array(range(n_left), pa.int64())}
    )
    right = pa.table(
        {
            rk: pa.array(rkeys, ktype),
            "b": pa.array(b, pa.string()),
            "id": pa.array(range(1000, 1000 + n_right), pa.int64()),
        }
    )
    lp = pd.DataFrame(
        {
            lk: pd.Series(lkeys, dtype=kdtype),
            "a": pd.Series(a, dtype="Int64"),
            "id": pd.Series(range(n_left), dtype="Int64"),
        }
    )
    rp = pd.DataFrame(
        {
            rk: pd.Series(rkeys, dtype=kdtype),
            "b": pd.Series(b, dtype=object),
            "id": pd.Series(range(1000, 1000 + n_right), dtype="Int64"),
        }
    )
    return left, right, lp, rp


def _rows(frame: pd.DataFrame, names: list[str]) -> list[tuple]:
    cols = [frame[c].astype(object).tolist() if c in frame.columns else [None] * len(frame) for c in names]
    return [tuple(norm(v) for v in row) for row in zip(*cols, strict=True)]


def expected_joins(lp, rp, lk, rk, prefix="right.", suffix=""):
    """{how: (column names, sorted rows)} from one pandas outer merge with indicator=True, with SQL
    null semantics (pandas would match null keys with each other): rows with a null key take part
    only as unmatched rows. semi/anti use isin on the right's non-null keys."""
    same = [x for x, y in zip(lk, rk, strict=True) if x == y]
    r_out = {c: (c if c in same else (prefix + c + suffix if c in lp.columns else c)) for c in rp.columns}
    # Daft's order (infer_join_schema): merged keys in key order, other left columns, right columns.
    names = same + [c for c in lp.columns if c not in same] + [r_out[c] for c in rp.columns if c not in same]
    lnn_mask = lp[lk].notna().all(axis=1)
    rnn_mask = rp[rk].notna().all(axis=1)
    lnn, lnull = lp[lnn_mask], lp[~lnn_mask]
    # rename right columns first so pandas' own suffixing never kicks in
    rnn, rnull = rp[rnn_mask].rename(columns=r_out), rp[~rnn_mask].rename(columns=r_out)
    rk_r = [r_out[c] for c in rk]
    merged = lnn.merge(rnn, left_on=lk, right_on=rk_r, how="outer", indicator="__side")
    side = merged["__side"].astype(str)
    both = _rows(merged[side == "both"], names)
    left_only = _rows(merged[side == "left_only"], names) + _rows(lnull, names)
    right_only = _rows(merged[side == "right_only"], names) + _rows(rnull, names)
    out = {
        "inner": both,
        "left": both + left_only,
        "right": both + right_only,
        "outer": both + left_only + right_only,
    }
    if len(lk) == 1:
        hit = lp[lk[0]].isin(rnn[rk_r[0]]) & lnn_mask
    else:
        right_keys = set(map(tuple, rnn[rk_r].astype(object).itertuples(index=False)))
        hit = pd.Series(
            [tuple(t) in right_keys for t in lp[lk].astype(object).itertuples(index=False)], index=lp.index
        )
        hit &= lnn_mask
    left_names = list(lp.columns)
    result = {how: (names, sorted(rows, key=row_key)) for how, rows in out.items()}
    result["semi"] = (left_names, sorted(_rows(lp[hit], left_names), key=row_key))
    result["anti"] = (left_names, sorted(_rows(lp[~hit], left_names), key=row_key))
    return result


def got_rows(df):
    data = df.to_pydict()
    names = list(data)
    rows = list(zip(*[data[n] for n in names], strict=True)) if names and data[names[0]] else []
    return names, sorted(rows, key=row_key)


# -- randomized joins ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed,shape", CASES)
def test_join_on_same_name_matches_pandas(seed, shape, kind):
    left, right, lp, rp = sides(seed, shape, kind)
    L, R = ketch.from_arrow(left), ketch.from_arrow(right)
    expected = expected_joins(lp, rp, ["k"], ["k"])
    for how in HOWS:
        exp_names, exp_rows = expected[how]
        for small in (False, True):  # one morsel, then ~15 morsels a side
            with morsels(small):
                names, rows = got_rows(L.join(R, on="k", how=how))
            assert names == exp_names, (how, small)
            assert len(rows) == len(exp_rows), (how, small, len(rows), len(exp_rows))
            assert rows == exp_rows, (how, small)


@pytest.mark.parametrize("kind", ["int", "str"])
@pytest.mark.parametrize(
    "seed,shape", [c for c in CASES if c[1] in ("empty_right", "skewed", "nullkeys", "distinct")]
)
def test_join_left_on_right_on_matches_pandas(seed, shape, kind):
    small = seed % 2 == 0  # alternate morsel sizes across seeds (keeps the suite fast)
    left, right, lp, rp = sides(seed, shape, kind, key_names=("lk", "rk"))
    L, R = ketch.from_arrow(left), ketch.from_arrow(right)
    expected = expected_joins(lp, rp, ["lk"], ["rk"])
    for how in HOWS:
        with morsels(small):
            names, rows = got_rows(L.join(R, left_on="lk", right_on="rk", how=how))
        exp_names, exp_rows = expected[how]
        assert names == exp_names, how
        assert rows == exp_rows, how


@pytest.mark.parametrize("small", [False, True], ids=["bigmorsel", "morsel7"])
@pytest.mark.parametrize("seed", SEEDS)
def test_join_two_keys_matches_pandas(seed, small):
    left, right, lp, rp = sides(seed, "nullkeys", "str")
    rng = np.random.default_rng(seed + 7)
    k2l = with_nulls(rng, [int(x) for x in rng.integers(0, 3, left.num_rows)], 0.1)
    k2r = with_nulls(rng, [int(x) for x in rng.integers(0, 3, right.num_rows)], 0.1)
    left = left.append_column("k2", pa.array(k2l, pa.int64()))
    right = right.append_column("k2", pa.array(k2r, pa.int64()))
    lp = lp.assign(k2=pd.Series(k2l, dtype="Int64"))
    rp = rp.assign(k2=pd.Series(k2r, dtype="Int64"))
    L, R = ketch.from_arrow(left), ketch.from_arrow(right)
    expected = expected_joins(lp, rp, ["k", "k2"], ["k", "k2"])
    for how in HOWS:
        with morsels(small):
            names, rows = got_rows(L.join(R, on=["k", "k2"], how=how))
        exp_names, exp_rows = expected[how]
        assert names == exp_names, how
        assert rows == exp_rows, how


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_join_int32_with_int64_keys(seed):
    """int32 left key vs int64 right key, values that fit both types."""
    left, right, lp, rp = sides(seed, "nullkeys", "int")
    small_keys = pa.array([None if v is None else v % 1000 for v in left.column("k").to_pylist()], pa.int32())
    right_keys = pa.array(
        [None if v is None else v % 1000 for v in right.column("k").to_pylist()], pa.int64()
    )
    left = left.set_column(0, "k", small_keys)
    right = right.set_column(0, "k", right_keys)
    lp = lp.assign(k=pd.Series(small_keys.to_pylist(), dtype="Int64"))
    rp = rp.assign(k=pd.Series(right_keys.to_pylist(), dtype="Int64"))
    L, R = ketch.from_arrow(left), ketch.from_arrow(right)
    for flip in (False, True):
        a, b, ap, bp = (R, L, rp, lp) if flip else (L, R, lp, rp)
        expected = expected_joins(ap, bp, ["k"], ["k"])
        for how in HOWS:
            with morsels(True):
                names, rows = got_rows(a.join(b, on="k", how=how))
            exp_names, exp_rows = expected[how]
            assert names == exp_names, (how, flip)
            assert rows == exp_rows, (how, flip)
    # different key names: both key columns kept, each with its own type
    Ld = L.select(col("k").alias("lk"), "a")
    Rd = R.select(col("k").alias("rk"), "b")
    out = Ld.join(Rd, left_on="lk", right_on="rk", how="inner").to_arrow()
    assert out.schema.field("lk").type == pa.int32() and out.schema.field("rk").type == pa.int64()
    assert out.column("lk").to_pylist() == out.column("rk").to_pylist()


@pytest.mark.parametrize("how", ["right", "outer"])
def test_join_int32_int64_key_output_uses_supertype(how):
    L = ketch.from_arrow(pa.table({"k": pa.array([1, 2, None], pa.int32()), "a": [1, 2, 3]}))
    R = ketch.from_arrow(pa.table({"k": pa.array([2, 2**40], pa.int64()), "b": [10, 20]}))
    out = L.join(R, on="k", how=how).to_arrow()
    assert out.schema.field("k").type == pa.int64()
    assert 2**40 in out.column("k").to_pylist()


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_join_with_aggregated_build_side(seed):
    """A join whose right input is a blocking aggregation (multi-pipeline plan)."""
    left, right, lp, rp = sides(seed, "nullkeys", "str")
    L, R = ketch.from_arrow(left), ketch.from_arrow(right)
    counts = R.groupby("k").agg(col("id").count(mode="all").alias("n"))
    with morsels(True):
        names, rows = got_rows(L.join(counts, on="k", how="left"))
    rc = rp.groupby("k", dropna=False).size().rename("n").reset_index()
    exp_names, exp_rows = expected_joins(lp, rc, ["k"], ["k"])["left"]
    assert names == exp_names
    assert rows == exp_rows


def test_join_prefix_and_suffix():
    L = ketch.from_pydict({"k": [1, 2], "v": [1, 2]})
    R = ketch.from_pydict({"k": [1, 2], "v": [3, 4]})
    assert L.join(R, on="k").column_names == ["k", "v", "right.v"]
    assert L.join(R, on="k", prefix="r_").column_names == ["k", "v", "r_v"]
    assert L.join(R, on="k", suffix="_x").column_names == ["k", "v", "v_x"]
    out = L.join(R, on="k", prefix="p_", suffix="_s").sort("k").to_pydict()
    assert out == {"k": [1, 2], "v": [1, 2], "p_v_s": [3, 4]}


# -- plan-time errors ----------------------------------------------------------------------------------
def test_join_incompatible_key_types_fail_at_plan_time():
    L = ketch.from_pydict({"lkey": [1, 2], "a": [1, 2]})
    R = ketch.from_pydict({"rkey": ["1", "2"], "b": [1, 2]})
    with pytest.raises(KetchTypeError) as info:
        L.join(R, left_on="lkey", right_on="rkey")  # no collect: fails while building the plan
    msg = str(info.value)
    assert "lkey" in msg and "rkey" in msg and "int64" in msg and "string" in msg, msg
    R2 = ketch.from_pydict({"lkey": ["x"], "b": [1]})
    for how in HOWS:
        with pytest.raises(KetchTypeError, match="lkey"):
            L.join(R2, on="lkey", how=how)


def test_join_argument_errors():
    L = ketch.from_pydict({"k": [1]})
    with pytest.raises(ValueError):
        L.join(L, on="k", left_on="k", right_on="k")
    with pytest.raises(ValueError):
        L.join(L, left_on="k")


# -- optimizer: filter pushdown through a join --------------------------------------------------------
def _optimized_section(text: str) -> list[str]:
    start = text.index("== Optimized Logical Plan ==")
    end = text.index("== Physical Plan ==")
    return [line for line in text[start:end].splitlines()[1:] if line.strip()]


def test_explain_filter_above_join_is_pushed_into_left_input(capsys):
    L = ketch.from_pydict({"k": [1, 2, 3, None], "a": [10, 20, 30, 40]})
    R = ketch.from_pydict({"k": [1, 2, 2, None], "b": ["x", "y", "z", "w"]})
    df = L.join(R, on="k", how="inner").where(col("a") > 15)
    df.explain(show_all=True)
    out = capsys.readouterr().out
    lines = _optimized_section(out)
    join_at = next(i for i, line in enumerate(lines) if "Join" in line)
    filter_at = [i for i, line in enumerate(lines) if "Filter" in line]
    assert filter_at, out
    assert all(i > join_at for i in filter_at), out  # nothing filters above the join any more
    left_at = next(i for i, line in enumerate(lines) if "input 0" in line)
    right_at = next(i for i, line in enumerate(lines) if "input 1" in line)
    assert any(left_at < i < right_at for i in filter_at), out  # the filter sits in the left input
    assert "(col(a) > lit(15))" in "\n".join(lines[left_at:right_at])
    # and the unoptimized plan still has it above the join
    unopt = out[: out.index("== Optimized Logical Plan ==")]
    assert unopt.index("Filter") < unopt.index("Join")
    # same answer as without pushdown
    got = sorted(zip(*df.to_pydict().values(), strict=True))
    assert got == [(2, 20, "y"), (2, 20, "z")]


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_filter_above_join_results_match_pandas(seed):
    left, right, lp, rp = sides(seed, "nullkeys", "int")
    L, R = ketch.from_arrow(left), ketch.from_arrow(right)
    expected = expected_joins(lp, rp, ["k"], ["k"])
    for how in HOWS:
        with morsels(True):
            names, rows = got_rows(L.join(R, on="k", how=how).where(col("a") > 0))
        exp_names, exp_rows = expected[how]
        a_at = exp_names.index("a")
        exp_rows = [r for r in exp_rows if r[a_at] is not None and r[a_at] > 0]
        assert names == exp_names, how
        assert rows == exp_rows, how


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_filters_on_right_and_key_columns_above_join(seed):
    """Filters that must NOT be pushed to one side for outer-ish joins: on a right column, on the
    (coalesced) key, and null checks that select the unmatched rows."""
    left, right, lp, rp = sides(seed, "nullkeys", "str")
    L, R = ketch.from_arrow(left), ketch.from_arrow(right)
    expected = expected_joins(lp, rp, ["k"], ["k"])
    filters = {
        "b_gt": (col("b") > "b15", lambda r, n: r[n.index("b")] is not None and r[n.index("b")] > "b15"),
        "b_null": (col("b").is_null(), lambda r, n: r[n.index("b")] is None),
        "a_null": (col("a").is_null(), lambda r, n: r[n.index("a")] is None),
        "rid_null": (col("right.id").is_null(), lambda r, n: r[n.index("right.id")] is None),
        "k_eq": (col("k") == "k3", lambda r, n: r[n.index("k")] == "k3"),
        "k_null": (col("k").is_null(), lambda r, n: r[n.index("k")] is None),
    }
    for how in ("inner", "left", "right", "outer"):
        exp_names, exp_rows = expected[how]
        for fname, (expr, keep) in filters.items():
            with morsels(seed % 2 == 0):
                names, rows = got_rows(L.join(R, on="k", how=how).where(expr))
            assert names == exp_names
            assert rows == [r for r in exp_rows if keep(r, exp_names)], (how, fname)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_projection_after_join(seed):
    left, right, lp, rp = sides(seed, "skewed", "int")
    L, R = ketch.from_arrow(left), ketch.from_arrow(right)
    expected = expected_joins(lp, rp, ["k"], ["k"])
    for how in ("inner", "left", "right", "outer"):
        exp_names, exp_rows = expected[how]
        picks = [exp_names.index(c) for c in ("b", "a")]
        with morsels(True):
            names, rows = got_rows(L.join(R, on="k", how=how).select("b", "a"))
        assert names == ["b", "a"]
        assert rows == sorted((tuple(r[i] for i in picks) for r in exp_rows), key=row_key), how
        with morsels(True):
            assert L.join(R, on="k", how=how).count_rows() == len(exp_rows)


@pytest.mark.parametrize("how", HOWS)
def test_join_string_with_large_string_keys(how):
    left, right, lp, rp = sides(1, "nullkeys", "str")
    right = right.set_column(0, "k", right.column("k").cast(pa.large_string()))
    names, rows = got_rows(ketch.from_arrow(left).join(ketch.from_arrow(right), on="k", how=how))
    exp_names, exp_rows = expected_joins(lp, rp, ["k"], ["k"])[how]
    assert names == exp_names
    assert rows == exp_rows


def test_join_uint64_with_uint32_keys():
    L = ketch.from_arrow(pa.table({"k": pa.array([2**63 + 5, 1, 7], pa.uint64()), "a": [1, 2, 3]}))
    R = ketch.from_arrow(pa.table({"k": pa.array([1, 7, 9], pa.uint32()), "b": [10, 20, 30]}))
    out = L.join(R, on="k", how="left").to_pydict()
    assert sorted(zip(out["k"], out["b"], strict=True), key=row_key) == sorted(
        [(2**63 + 5, None), (1, 10), (7, 20)], key=row_key
    )


def test_join_float_keys_negative_zero():
    lp = pd.DataFrame({"k": [1.0, 2.0, -0.0, None], "a": [1, 2, 3, 4]})
    rp = pd.DataFrame({"k": [0.0, 2.0, None], "b": [10, 20, 30]})
    exp = sorted(
        zip(*lp.dropna().merge(rp.dropna(), on="k").drop(columns="k").to_dict("list").values(), strict=True)
    )
    out = ketch.from_pandas(lp).join(ketch.from_pandas(rp), on="k").to_pydict()
    assert sorted(zip(out["a"], out["b"], strict=True)) == exp == [(2, 20), (3, 10)]


@pytest.mark.native_only  # the native executor's operator stats; the Ray runner reports stages instead
def test_join_after_small_morsel_udf_streams_through_one_hash_table():
    # A row-wise UDF before the join makes small morsels; they stream through the probe of a hash
    # table built once over the build side (checked by the result and the operators reported).
    import io

    import numpy as np

    n = 50_000
    build = ketch.from_pydict({"k": np.arange(n), "w": np.arange(n) * 2})
    probe = ketch.from_pydict({"k": np.arange(n)}).with_column(
        "k", col("k").apply(lambda x: x, return_dtype=ketch.DataType.int64())
    )
    df = probe.join(build, on="k")
    stats = df.explain_analyze(file=io.StringIO())
    names = [op["name"] for op in stats.operators()]
    assert "HashJoinProbe" in names and "HashJoin" not in names  # streamed, the build side hashed once
    assert sorted(df.to_pydict()["w"]) == list(range(0, 2 * n, 2))
