"""DataFrame.join in full (Daft's surface): key expressions and aliases, keys of different numeric
types cast to their supertype at plan build, null-typed keys, how="cross", strategy=, prefix /
suffix, Daft's output columns, and the errors Daft raises. Results are compared with pandas
merge (SQL null semantics: a null key matches nothing) on data with nulls and duplicate keys,
on both runners."""

from __future__ import annotations

import io

import pandas as pd
import pyarrow as pa
import pytest
from rel_data import morsels, norm, row_key

import ketch
from ketch import col
from ketch.errors import KetchTypeError

pytestmark = pytest.mark.usefixtures("runner")

HOWS = ["inner", "left", "right", "outer", "semi", "anti"]
LEFT = {"k": [1, 2, 2, None, 4, 5, 5, 7], "a": [10, 20, 21, 30, None, 50, 51, 70]}
RIGHT = {"k": [2, 2, 4, None, 5, 8, 9], "b": ["x", "y", "z", "n", "w", None, "v"]}


def rows_of(df: ketch.DataFrame) -> tuple[list[str], list[tuple]]:
    data = df.to_pydict()
    names = list(data)
    rows = [tuple(norm(v) for v in row) for row in zip(*[data[n] for n in names], strict=True)]
    return names, sorted(rows, key=row_key)


def pandas_join(lp: pd.DataFrame, rp: pd.DataFrame, lk: list[str], rk: list[str], how: str) -> list[tuple]:
    """Rows of the SQL join of lp and rp on lk = rk (null keys never match), columns: lp's, then
    rp's (all of them; callers select what the join outputs)."""
    lmask = lp[lk].notna().all(axis=1)
    rmask = rp[rk].notna().all(axis=1)
    rp2 = rp.rename(columns={c: f"r_{c}" for c in rp.columns})
    rk2 = [f"r_{c}" for c in rk]
    if how == "semi":
        keys = set(map(tuple, rp[rmask][rk].astype(object).itertuples(index=False)))
        hit = pd.Series(
            [tuple(t) in keys for t in lp[lk].astype(object).itertuples(index=False)], index=lp.index
        )
        hit &= lmask
        out = lp[hit]
    elif how == "anti":
        keys = set(map(tuple, rp[rmask][rk].astype(object).itertuples(index=False)))
        hit = pd.Series(
            [tuple(t) in keys for t in lp[lk].astype(object).itertuples(index=False)], index=lp.index
        )
        hit &= lmask
        out = lp[~hit]
    else:
        merged = lp[lmask].merge(rp2[rmask], left_on=lk, right_on=rk2, how="inner")
        parts = [merged]
        if how in ("left", "outer"):
            unmatched = lp[lmask].merge(rp2[rmask], left_on=lk, right_on=rk2, how="left", indicator=True)
            parts.append(unmatched[unmatched["_merge"] == "left_only"].drop(columns="_merge"))
            parts.append(lp[~lmask])
        if how in ("right", "outer"):
            unmatched = lp[lmask].merge(rp2[rmask], left_on=lk, right_on=rk2, how="right", indicator=True)
            parts.append(unmatched[unmatched["_merge"] == "right_only"].drop(columns="_merge"))
            parts.append(rp2[~rmask])
        out = (
            pd.concat([p for p in parts if len(p)], ignore_index=True)
            if any(len(p) for p in parts)
            else merged
        )
        for c in list(lp.columns) + list(rp2.columns):
            if c not in out.columns:
                out[c] = None
        out = out[list(lp.columns) + list(rp2.columns)]
    return [tuple(norm(v) for v in row) for row in out.astype(object).itertuples(index=False)]


def frames(ltype: pa.DataType | None = None, rtype: pa.DataType | None = None):
    ltype, rtype = ltype or pa.int64(), rtype or pa.int64()
    left = pa.table({"k": pa.array(LEFT["k"], ltype), "a": pa.array(LEFT["a"], pa.int64())})
    right = pa.table({"k": pa.array(RIGHT["k"], rtype), "b": pa.array(RIGHT["b"], pa.string())})
    lp = pd.DataFrame({"k": pd.Series(LEFT["k"], dtype="Float64"), "a": pd.Series(LEFT["a"], dtype="Int64")})
    rp = pd.DataFrame({"k": pd.Series(RIGHT["k"], dtype="Float64"), "b": pd.Series(RIGHT["b"], dtype=object)})
    return ketch.from_arrow(left), ketch.from_arrow(right), lp, rp


def expected_same_name(lp, rp, how):
    """Daft's output of join(on="k"): k (merged: the non-null of both sides for outer/right), a, b."""
    rows = pandas_join(lp, rp, ["k"], ["k"], how)
    if how in ("semi", "anti"):
        return sorted(rows, key=row_key)
    out = []
    for k, a, rk, b in rows:
        key = rk if how == "right" else (k if k is not None else rk if how == "outer" else k)
        out.append((key, a, b))
    return sorted([tuple(norm(v) for v in r) for r in out], key=row_key)


def as_int(rows):
    return [tuple(int(v) if isinstance(v, float) else v for v in r) for r in rows]


# -- keys of different numeric types ----------------------------------------------------------------
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("small", [False, True])
def test_mixed_int_key_types_keep_the_preserved_sides_type(how, small):
    L, R, lp, rp = frames(pa.int32(), pa.int64())
    joined = L.join(R, on="k", how=how)
    expected_names = ["k", "a"] if how in ("semi", "anti") else ["k", "a", "b"]
    assert joined.column_names == expected_names
    # Daft: the preserved side's key type (inner/left/semi/anti the left's, right the right's),
    # the common type for outer.
    want = {"right": pa.int64(), "outer": pa.int64()}.get(how, pa.int32())
    assert joined.schema().field("k").type == want
    with morsels(small):
        names, rows = rows_of(joined)
    assert names == expected_names
    assert rows == as_int(expected_same_name(lp, rp, how))


@pytest.mark.parametrize("how", ["inner", "left", "outer"])
def test_int_with_float_keys_of_different_names_keep_their_types(how):
    left = ketch.from_pydict({"id": [1, 2, 3, None], "a": ["p", "q", "r", "s"]})
    right = ketch.from_arrow(
        pa.table({"key": pa.array([1.0, 3.0, 3.0, 4.5], pa.float64()), "b": [1, 2, 3, 4]})
    )
    joined = left.join(right, left_on="id", right_on="key", how=how)
    assert joined.column_names == ["id", "a", "key", "b"]
    assert joined.schema().field("id").type == pa.int64()
    assert joined.schema().field("key").type == pa.float64()
    lp = pd.DataFrame({"id": pd.Series([1, 2, 3, None], dtype="Float64"), "a": ["p", "q", "r", "s"]})
    rp = pd.DataFrame({"key": [1.0, 3.0, 3.0, 4.5], "b": [1, 2, 3, 4]})
    expected = [
        (int(i) if i is not None else None, a, k, b)
        for i, a, k, b in pandas_join(lp, rp, ["id"], ["key"], how)
    ]
    names, rows = rows_of(joined)
    assert rows == sorted(expected, key=row_key)


def test_float_key_merged_with_int_key_is_float64():
    left = ketch.from_pydict({"k": [1, 2, 3], "a": [1, 2, 3]})
    right = ketch.from_arrow(pa.table({"k": pa.array([2.0, 3.0, 3.5], pa.float32()), "b": [20, 30, 35]}))
    joined = left.join(right, on="k", how="outer")
    assert joined.schema().field("k").type == pa.float64()
    assert rows_of(joined)[1] == [(1.0, 1, None), (2.0, 2, 20), (3.0, 3, 30), (3.5, None, 35)]


# -- key expressions -----------------------------------------------------------------------------------
@pytest.mark.parametrize("how", HOWS)
def test_computed_keys_match_pandas(how):
    L, R, lp, rp = frames()
    joined = L.join(R, left_on=col("k") + 1, right_on=col("k"), how=how)
    # Not plain columns of one name: nothing is merged; the right k clashes and is renamed.
    expected_names = ["k", "a"] if how in ("semi", "anti") else ["k", "a", "right.k", "b"]
    assert joined.column_names == expected_names
    lp2 = lp.assign(k1=lp["k"] + 1)
    rows = pandas_join(lp2, rp, ["k1"], ["k"], how)
    expected = [r[:2] if how in ("semi", "anti") else (r[0], r[1], r[3], r[4]) for r in rows]
    assert rows_of(joined)[1] == sorted(as_int(expected), key=row_key)


def test_aliased_keys_are_not_merged():
    L, R, lp, rp = frames()
    joined = L.join(R, left_on=col("k").alias("key"), right_on=col("k").alias("key"))
    assert joined.column_names == ["k", "a", "right.k", "b"]
    rows = pandas_join(lp, rp, ["k"], ["k"], "inner")
    assert rows_of(joined)[1] == sorted(as_int(rows), key=row_key)


def test_key_expression_mixed_types_and_columns_after_join():
    L, R, lp, rp = frames(pa.int32(), pa.int64())
    joined = L.join(R, left_on=[col("k") * 2], right_on=[col("k") * 2], how="inner")
    # col() references to both sides' columns by their output names, as in Daft.
    out = joined.select(col("k"), col("right.k").alias("rk"), (col("a") + 1).alias("a1")).sort(["a1", "k"])
    data = out.to_pydict()
    pairs = sorted(as_int(pandas_join(lp, rp, ["k"], ["k"], "inner")), key=lambda r: row_key((r[1], r[0])))
    assert data["k"] == [r[0] for r in pairs]
    assert data["rk"] == [r[2] for r in pairs]
    assert data["a1"] == [None if r[1] is None else r[1] + 1 for r in pairs]


# -- null-typed keys -----------------------------------------------------------------------------------
@pytest.mark.parametrize("how", HOWS)
def test_null_typed_key_side(how):
    left = ketch.from_arrow(pa.table({"k": pa.array([None, None, None], pa.null()), "a": [1, 2, 3]}))
    right = ketch.from_pydict({"k": [1, 2], "b": ["x", "y"]})
    joined = left.join(right, on="k", how=how)
    names, rows = rows_of(joined)
    expected = {
        "inner": [],
        "left": [(None, 1, None), (None, 2, None), (None, 3, None)],
        "right": [(1, None, "x"), (2, None, "y")],
        "outer": [(None, 1, None), (None, 2, None), (None, 3, None), (1, None, "x"), (2, None, "y")],
        "semi": [],
        "anti": [(None, 1), (None, 2), (None, 3)],
    }[how]
    assert rows == sorted(expected, key=row_key)


@pytest.mark.parametrize("how", ["inner", "left", "outer", "anti"])
def test_empty_and_all_null_sides(how):
    left = ketch.from_pydict({"k": [1, 2], "a": [1, 2]})
    empty = ketch.from_arrow(pa.table({"k": pa.array([], pa.null()), "b": pa.array([], pa.string())}))
    names, rows = rows_of(left.join(empty, on="k", how=how))
    expected = {"inner": [], "left": [(1, 1, None), (2, 2, None)], "outer": [(1, 1, None), (2, 2, None)]}
    assert rows == expected.get(how, [(1, 1), (2, 2)])
    both_null = ketch.from_arrow(pa.table({"k": pa.array([None], pa.null()), "c": [5]}))
    names, rows = rows_of(both_null.join(empty, on="k", how=how))
    assert rows == ([] if how == "inner" else [(None, 5, None)] if how != "anti" else [(None, 5)])


# -- cross join ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("small", [False, True])
@pytest.mark.parametrize("sizes", [(8, 7), (3, 40), (40, 3), (0, 5), (5, 0)])
def test_cross_join_matches_pandas(sizes, small):
    n, m = sizes
    left = {"x": list(range(n)), "a": [None if i % 3 == 0 else f"a{i}" for i in range(n)]}
    right = {"x": [100 + j for j in range(m)], "b": [float(j) if j % 4 else None for j in range(m)]}
    L = ketch.from_arrow(
        pa.table({"x": pa.array(left["x"], pa.int64()), "a": pa.array(left["a"], pa.string())})
    )
    R = ketch.from_arrow(
        pa.table({"x": pa.array(right["x"], pa.int64()), "b": pa.array(right["b"], pa.float64())})
    )
    joined = L.join(R, how="cross")
    assert joined.column_names == ["x", "a", "right.x", "b"]
    with morsels(small):
        names, rows = rows_of(joined)
    expected = pd.DataFrame(left).merge(pd.DataFrame(right), how="cross")
    exp_rows = sorted(
        [tuple(norm(v) for v in r) for r in expected.astype(object).itertuples(index=False)], key=row_key
    )
    assert len(rows) == n * m
    assert rows == exp_rows


def test_cross_join_with_filter_projection_and_count():
    L = ketch.from_pydict({"x": [1, 2, 3, 4]})
    R = ketch.from_pydict({"y": [10, 20, 30]})
    joined = L.join(R, how="cross", prefix="r_")
    assert joined.count_rows() == 12
    assert sorted(joined.select("y").to_pydict()["y"]) == sorted([10, 20, 30] * 4)
    picked = joined.where((col("x") > 2) & (col("y") < 30)).sort(["x", "y"]).to_pydict()
    assert picked == {"x": [3, 3, 4, 4], "y": [10, 20, 10, 20]}
    both = L.join(L, how="cross", prefix="r_").sort(["x", "r_x"]).to_pydict()
    assert both["r_x"] == [1, 2, 3, 4] * 4
    assert both["x"] == [v for v in [1, 2, 3, 4] for _ in range(4)]


def test_cross_join_plan_names_the_operator(runner):
    out = io.StringIO()
    joined = ketch.from_pydict({"x": [1]}).join(ketch.from_pydict({"y": [1, 2]}), how="cross")
    joined.explain(True, file=out)
    assert rows_of(joined) == (["x", "y"], [(1, 1), (1, 2)])
    assert "Join: Type = cross" in out.getvalue()
    assert "CrossJoin (materialized: left input, estimated smaller; right input streams)" in out.getvalue()
    if runner == "ray":
        plan = out.getvalue().split("== Distributed Plan ==")[-1]
        assert "cross Join: the side with fewer rows is broadcast" in plan
        assert "driver: Join" not in plan


def test_strategy_shows_in_plans(runner):
    L, R, lp, rp = frames()
    for how in ("inner", "right"):
        assert rows_of(L.join(R, on="k", how=how, strategy="broadcast"))[1] == expected_same_name(lp, rp, how)
    out = io.StringIO()
    L.join(R, on="k", strategy="broadcast").explain(True, file=out)
    assert "Join: Type = inner, On = [k] = [k], Strategy = broadcast" in out.getvalue()
    if runner == "ray":
        assert "strategy broadcast: the right side is broadcast" in out.getvalue()
    out = io.StringIO()
    L.join(R, on="k", how="right", strategy="broadcast").explain(True, file=out)
    assert "Join: Type = right, On = [k] = [k], Strategy = broadcast" in out.getvalue()
    if runner == "ray":
        assert "strategy broadcast: the left side is broadcast" in out.getvalue()
        from ketch.runners import get_runner

        L.join(R, on="k", how="right", strategy="broadcast").collect()
        assert any("broadcast Join (left side)" in stage.name for stage in get_runner().last_stages)


# -- strategy, errors, names -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "strategy,how",
    [
        ("hash", "inner"),
        ("hash", "outer"),
        ("sort_merge", "inner"),
        ("broadcast", "left"),
        ("broadcast", "inner"),
        ("broadcast", "semi"),
        ("broadcast", "right"),
        ("hash", "anti"),
    ],
)
def test_strategies_give_the_same_rows(strategy, how):
    L, R, lp, rp = frames()
    assert rows_of(L.join(R, on="k", how=how, strategy=strategy)) == rows_of(L.join(R, on="k", how=how))


def test_bad_arguments_raise_daft_errors_at_plan_build():
    L, R, _, _ = frames()
    with pytest.raises(ValueError, match="strategy"):
        L.join(R, on="k", strategy="nested_loop")
    with pytest.raises(ValueError, match="Sort merge join only supports inner joins"):
        L.join(R, on="k", how="left", strategy="sort_merge")
    with pytest.raises(ValueError, match="Broadcast join does not support outer joins"):
        L.join(R, on="k", how="outer", strategy="broadcast")
    with pytest.raises(ValueError, match="In a cross join, `on`, `left_on`, and `right_on` cannot be set"):
        L.join(R, on="k", how="cross")
    with pytest.raises(ValueError, match="In a cross join, `strategy` cannot be set"):
        L.join(R, how="cross", strategy="hash")
    with pytest.raises(ValueError, match="If `on` is not None"):
        L.join(R, on="k", left_on="k")
    with pytest.raises(ValueError, match="If `on` is None"):
        L.join(R, left_on="k")
    with pytest.raises(ValueError, match="Unsupported join type"):
        L.join(R, on="k", how="full")
    with pytest.raises(ValueError, match="length of left_on to match length of right_on"):
        L.join(R, left_on=["k", "a"], right_on=["k"])


def test_incompatible_key_types_name_both_keys():
    left = ketch.from_pydict({"name": ["a", "b"]})
    right = ketch.from_pydict({"id": [1, 2]})
    with pytest.raises(KetchTypeError) as info:
        left.join(right, left_on="name", right_on=col("id") + 1)
    message = str(info.value)
    assert "col(name)" in message or "name" in message
    assert "id" in message and "string" in message and "int64" in message


@pytest.mark.parametrize("how", ["inner", "left", "right", "outer", "semi"])
def test_merged_keys_come_first_in_key_order(how):
    L = ketch.from_pydict({"a": [1, 2, 3], "k2": ["x", "y", "z"], "k1": [1, 2, 2]})
    R = ketch.from_pydict({"b": [7, 8], "k1": [2, 2], "k2": ["y", "q"]})
    joined = L.join(R, on=["k2", "k1"], how=how)
    expected = ["a", "k2", "k1"] if how == "semi" else ["k2", "k1", "a", "b"]
    assert joined.column_names == expected
    rows = rows_of(joined)[1]
    want = {
        "inner": [("y", 2, 2, 7)],
        "left": [("x", 1, 1, None), ("y", 2, 2, 7), ("z", 2, 3, None)],
        "right": [("q", 2, None, 8), ("y", 2, 2, 7)],
        "outer": [("q", 2, None, 8), ("x", 1, 1, None), ("y", 2, 2, 7), ("z", 2, 3, None)],
        "semi": [(2, "y", 2)],
    }[how]
    assert rows == sorted(want, key=row_key)


def test_renamed_again_until_new_as_daft():
    L = ketch.from_pydict({"k": [1, 2], "x": [10, 20], "right.x": [100, 200]})
    R = ketch.from_pydict({"k": [1, 2], "x": [5, 6], "y": [7, 8]})
    joined = L.join(R, on="k")
    assert joined.column_names == ["k", "x", "right.x", "right.right.x", "y"]
    # Projection pushdown keeps the columns the renaming depends on.
    assert joined.select("right.right.x", "k").sort("k").to_pydict() == {"right.right.x": [5, 6], "k": [1, 2]}
    crossed = R.join(R.join(R, how="cross"), how="cross")
    assert crossed.column_names[3:] == [
        "right.k",
        "right.x",
        "right.y",
        "right.right.k",
        "right.right.x",
        "right.right.y",
    ]
    picked = crossed.select("right.right.y").to_pydict()["right.right.y"]
    assert sorted(picked) == sorted([7, 8] * 4)


def test_prefix_and_suffix():
    L = ketch.from_pydict({"k": [1, 2], "v": [1, 2], "w": [0, 0]})
    R = ketch.from_pydict({"k": [2, 3], "v": [20, 30], "w": [9, 9]})
    assert L.join(R, on="k").column_names == ["k", "v", "w", "right.v", "right.w"]
    assert L.join(R, on="k", suffix="_r").column_names == ["k", "v", "w", "v_r", "w_r"]
    assert L.join(R, on="k", prefix="p_", suffix="_s").column_names == ["k", "v", "w", "p_v_s", "p_w_s"]
    assert L.join(R, on="k", prefix="p_").to_pydict() == {
        "k": [2],
        "v": [2],
        "w": [0],
        "p_v": [20],
        "p_w": [9],
    }
    # Different key names: both keys stay.
    R2 = ketch.from_pydict({"kk": [2, 3], "z": [7, 8]})
    assert L.join(R2, left_on="k", right_on="kk", how="left").sort("k").to_pydict() == {
        "k": [1, 2],
        "v": [1, 2],
        "w": [0, 0],
        "kk": [None, 2],
        "z": [None, 7],
    }


def test_mixed_int_join_is_a_hash_exchange_on_ray(runner):
    L, R, lp, rp = frames(pa.int32(), pa.int64())
    assert as_int(rows_of(L.join(R, on="k", how="outer"))[1]) == as_int(expected_same_name(lp, rp, "outer"))
    out = io.StringIO()
    L.join(R, on="k", how="outer").explain(True, file=out)
    text = out.getvalue()
    if runner == "ray":
        plan = text.split("== Distributed Plan ==")[-1]
        assert "hash shuffle by" in plan
        assert "driver: Join" not in plan
    assert "Join: Type = outer" in text
