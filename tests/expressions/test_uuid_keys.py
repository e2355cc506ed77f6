"""UUID columns as keys: group-by, distinct, sort and top-N, joins, is_in, window partition_by /
order_by and hash repartitioning look through the ``arrow.uuid`` extension type to its 16 bytes
(the storage view of key_storage.h) and give back UUID columns. Expected values come from pyarrow
on the fixed_size_binary(16) storage and from Python's ``uuid`` module (a UUID's order is the order
of its bytes). Other extension types whose storage cannot be hashed or ordered (images, files,
tensors) and Python objects are refused at plan time with an error naming the operator, the
column and the type."""

from __future__ import annotations

import io
import os
import random
import uuid
from collections import Counter, defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import ketch
from ketch import DataType, Window, col
from ketch.errors import KetchTypeError
from ketch.functions import rank, row_number

RNG = random.Random(17)
DISTINCT = [uuid.UUID(int=RNG.getrandbits(128)) for _ in range(40)]
# Two UUIDs that differ only in their last byte, and the smallest and largest.
DISTINCT += [uuid.UUID(int=2**64), uuid.UUID(int=2**64 + 1), uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)]


def uuid_rows(n: int, null_every: int = 7, seed: int = 3) -> tuple[list[uuid.UUID | None], list[int]]:
    rng = random.Random(seed)
    keys = [None if i % null_every == 0 else rng.choice(DISTINCT) for i in range(n)]
    values = [rng.randrange(1000) for _ in range(n)]
    return keys, values


def uuid_array(values: list[uuid.UUID | None]) -> pa.ExtensionArray:
    storage = pa.array([None if v is None else v.bytes for v in values], pa.binary(16))
    return pa.ExtensionArray.from_storage(pa.uuid(), storage)


def storage_table(keys: list[uuid.UUID | None], values: list[int]) -> pa.Table:
    """The reference: the same rows with the keys as plain fixed_size_binary(16)."""
    return pa.table({"u": uuid_array(keys).storage, "v": pa.array(values, pa.int64())})


def to_uuid(raw: bytes | None) -> uuid.UUID | None:
    return None if raw is None else uuid.UUID(bytes=raw)


def test_uuid_order_is_byte_order():
    # The premise of sorting UUIDs by their storage.
    assert sorted(DISTINCT) == sorted(DISTINCT, key=lambda u: u.bytes)


@pytest.mark.parametrize("morsel_rows", [None, 64])
def test_groupby_uuid_matches_pyarrow_on_bytes(morsel_rows):
    keys, values = uuid_rows(2_000)
    df = ketch.from_pydict({"u": keys, "v": values})
    assert df.schema()["u"].dtype == DataType.uuid()
    config = {} if morsel_rows is None else {"morsel_size_rows": morsel_rows}
    with ketch.execution_config_ctx(**config):
        got = df.groupby("u").agg(col("v").sum().alias("s"), col("v").count().alias("c")).to_arrow()
    assert got.schema.field("u").type == pa.uuid()
    expected = storage_table(keys, values).group_by("u").aggregate([("v", "sum"), ("v", "count")])
    want = {to_uuid(r["u"]): (r["v_sum"], r["v_count"]) for r in expected.to_pylist()}
    have = {r["u"]: (r["s"], r["c"]) for r in got.to_pylist()}
    assert have == want
    assert None in have  # nulls form one group, as in Daft


def test_groupby_uuid_with_a_second_key_and_partial_phases():
    keys, values = uuid_rows(600)
    tags = [("a", "b", "c")[i % 3] for i in range(600)]
    df = ketch.from_pydict({"u": keys, "t": tags, "v": values}).into_partitions(4)
    got = df.groupby("u", "t").agg(col("v").max().alias("m")).to_pylist()
    want: dict[tuple, int] = {}
    for k, t, v in zip(keys, tags, values, strict=True):
        want[(k, t)] = max(want.get((k, t), -1), v)
    assert {(r["u"], r["t"]): r["m"] for r in got} == want


def test_distinct_uuid():
    keys, _ = uuid_rows(500)
    got = ketch.from_pydict({"u": keys}).distinct().to_arrow()
    assert got.schema.field("u").type == pa.uuid()
    assert Counter(got.column("u").to_pylist()) == Counter(set(keys))
    # the reference on the bytes
    unique = pc.unique(uuid_array(keys).storage).to_pylist()
    have = got.column("u").combine_chunks().storage.to_pylist()
    assert sorted(have, key=lambda b: (b is None, b or b"")) == sorted(
        unique, key=lambda b: (b is None, b or b"")
    )


@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("nulls_first", [False, True])
def test_sort_uuid_by_bytes(desc, nulls_first):
    keys, values = uuid_rows(300)
    df = ketch.from_pydict({"u": keys, "v": values})
    got = df.sort("u", desc=desc, nulls_first=nulls_first).to_arrow()
    assert got.schema.field("u").type == pa.uuid()
    present = sorted((k for k in keys if k is not None), key=lambda u: u.bytes, reverse=desc)
    nulls = [None] * keys.count(None)
    assert got.column("u").to_pylist() == (nulls + present if nulls_first else present + nulls)
    # The same order as pyarrow's sort of the storage bytes.
    order = "descending" if desc else "ascending"
    placement = "at_start" if nulls_first else "at_end"
    ref = pc.sort_indices(storage_table(keys, values), [("u", order, placement)])
    assert [to_uuid(b) for b in storage_table(keys, values).take(ref).column("u").to_pylist()] == (
        got.column("u").to_pylist()
    )


def test_sort_uuid_runs_merged_across_morsels_and_spilled(tmp_path):
    keys, values = uuid_rows(20_000, seed=9)
    ids = list(range(len(keys)))
    with ketch.execution_config_ctx(
        memory_budget_bytes=200_000, morsel_size_rows=1_000, spill_dir=str(tmp_path)
    ):
        got = ketch.from_pydict({"u": keys, "id": ids}).sort(["u", "id"]).to_pydict()
    want = sorted(
        zip(keys, ids, strict=True), key=lambda r: (r[0] is None, r[0].bytes if r[0] else b"", r[1])
    )
    assert list(zip(got["u"], got["id"], strict=True)) == want
    assert os.listdir(tmp_path) == []


def test_top_n_by_uuid():
    keys, values = uuid_rows(1_000)
    ids = list(range(len(keys)))
    got = (
        ketch.from_pydict({"u": keys, "id": ids})
        .sort(["u", "id"], desc=[True, False], nulls_first=[False, False])
        .limit(5)
        .to_pydict()
    )
    present = sorted(
        ((k, i) for k, i in zip(keys, ids, strict=True) if k is not None), key=lambda r: (-r[0].int, r[1])
    )
    assert list(zip(got["u"], got["id"], strict=True)) == present[:5]


def join_reference(left, right, how):
    """Nested-loop join of (key, payload) rows; null keys never match."""
    out = []
    matched_right = set()
    for lk, lv in left:
        hits = [(j, rv) for j, (rk, rv) in enumerate(right) if lk is not None and rk == lk]
        if how == "anti":
            if not hits:
                out.append((lk, lv))
            continue
        if how == "semi":
            if hits:
                out.append((lk, lv))
            continue
        for j, rv in hits:
            matched_right.add(j)
            out.append((lk, lv, rv))
        if not hits and how in ("left", "outer"):
            out.append((lk, lv, None))
    if how in ("right", "outer"):
        for j, (rk, rv) in enumerate(right):
            if j not in matched_right:
                out.append((rk, None, rv))
    if how == "right":
        # right rows with matches, keyed by the right side's key
        out = [r for r in out if r[2] is not None or r[1] is None]
    return Counter(out)


@pytest.mark.parametrize("how", ["inner", "left", "right", "outer", "semi", "anti"])
def test_join_on_uuid(how):
    lk, lv = uuid_rows(200, null_every=9, seed=1)
    rk, rv = uuid_rows(120, null_every=5, seed=2)
    rk = rk + [uuid.UUID(int=12345)]  # a key only the right side has
    rv = rv + [7]
    left = ketch.from_pydict({"u": lk, "a": lv})
    right = ketch.from_pydict({"u": rk, "b": rv})
    got = left.join(right, on="u", how=how).to_arrow()
    assert got.schema.field("u").type == pa.uuid()
    rows = got.to_pylist()
    if how in ("semi", "anti"):
        have = Counter((r["u"], r["a"]) for r in rows)
    else:
        have = Counter((r["u"], r["a"], r["b"]) for r in rows)
    assert have == join_reference(list(zip(lk, lv, strict=True)), list(zip(rk, rv, strict=True)), how)


def test_join_on_uuid_matches_pyarrow_inner_join_on_bytes():
    lk, lv = uuid_rows(300, seed=4)
    rk, rv = uuid_rows(300, seed=5)
    got = (
        ketch.from_pydict({"u": lk, "a": lv}).join(ketch.from_pydict({"u": rk, "b": rv}), on="u").to_pylist()
    )
    ref = pa.table({"u": uuid_array(lk).storage, "a": lv}).join(
        pa.table({"u": uuid_array(rk).storage, "b": rv}), keys="u", join_type="inner"
    )
    want = Counter((to_uuid(r["u"]), r["a"], r["b"]) for r in ref.to_pylist())
    assert Counter((r["u"], r["a"], r["b"]) for r in got) == want


def test_join_uuid_spilled_under_small_budget(tmp_path):
    lk, lv = uuid_rows(30_000, seed=6)
    rk, rv = uuid_rows(30_000, seed=8)
    with ketch.execution_config_ctx(
        memory_budget_bytes=300_000, morsel_size_rows=2_000, spill_dir=str(tmp_path)
    ):
        got = (
            ketch.from_pydict({"u": lk, "a": lv})
            .join(ketch.from_pydict({"u": rk, "b": rv}), on="u", how="outer")
            .groupby("u")
            .agg(col("a").count().alias("n"))
            .to_pylist()
        )
    left_counts, right_counts = Counter(lk), Counter(rk)
    want = {}
    for key in set(lk) | set(rk):
        if key is None:
            continue
        on_left, on_right = left_counts.get(key, 0), right_counts.get(key, 0)
        want[key] = on_left * on_right if on_right else on_left  # non-null `a` values of this key
    want[None] = left_counts[None]  # null keys never match: the left ones keep their `a`
    assert {r["u"]: r["n"] for r in got} == want
    assert os.listdir(tmp_path) == []


def test_is_in_and_comparisons_on_uuid():
    keys, values = uuid_rows(100)
    df = ketch.from_pydict({"u": keys, "v": values})
    wanted = DISTINCT[:5]
    got = df.where(col("u").is_in(wanted)).to_pydict()
    assert got["u"] == [k for k in keys if k in wanted]
    mask = df.select(col("u").is_in(wanted).alias("m")).to_pydict()["m"]
    assert mask == [None if k is None else k in wanted for k in keys]
    pivot = DISTINCT[0]
    less = df.select((col("u") < pivot).alias("lt"), (col("u") == col("u")).alias("eq")).to_pydict()
    assert less["lt"] == [None if k is None else k.bytes < pivot.bytes for k in keys]
    assert less["eq"] == [None if k is None else True for k in keys]


def test_window_partition_by_and_order_by_uuid():
    keys, values = uuid_rows(400)
    ids = list(range(len(keys)))
    groups = [i % 4 for i in ids]
    df = ketch.from_pydict({"id": ids, "u": keys, "g": groups, "v": values})
    got = df.with_columns(
        {
            "total": col("v").sum().over(Window().partition_by("u")),
            "r": rank().over(Window().partition_by("g").order_by("u")),
            "n": row_number().over(Window().partition_by("u").order_by("id")),
        }
    ).sort("id")
    out = got.to_arrow()
    assert out.schema.field("u").type == pa.uuid()
    rows = out.to_pylist()
    totals: dict = defaultdict(int)
    for k, v in zip(keys, values, strict=True):
        totals[k] += v
    assert [r["total"] for r in rows] == [totals[k] for k in keys]

    # rank by uuid within g: 1 + the number of rows of g with a smaller key (nulls last)
    def sort_key(k):
        return (k is None, k.bytes if k is not None else b"")

    for r in rows:
        peers = [k for k, g in zip(keys, groups, strict=True) if g == r["g"]]
        assert r["r"] == 1 + sum(sort_key(k) < sort_key(r["u"]) for k in peers)
    seen: Counter = Counter()
    for r in rows:
        seen[r["u"]] += 1
        assert r["n"] == seen[r["u"]]


def test_window_partition_by_uuid_spilled(tmp_path):
    keys, values = uuid_rows(30_000, seed=12)
    ids = list(range(len(keys)))
    with ketch.execution_config_ctx(
        memory_budget_bytes=300_000, morsel_size_rows=2_000, spill_dir=str(tmp_path)
    ):
        got = (
            ketch.from_pydict({"id": ids, "u": keys, "v": values})
            .with_column("total", col("v").sum().over(Window().partition_by("u")))
            .to_pydict()
        )
    totals: dict = defaultdict(int)
    for k, v in zip(keys, values, strict=True):
        totals[k] += v
    assert sorted(zip(got["id"], got["total"], strict=True)) == [(i, totals[k]) for i, k in enumerate(keys)]
    assert os.listdir(tmp_path) == []


def test_repartition_by_uuid_keeps_equal_keys_together():
    keys, values = uuid_rows(1_000)
    df = ketch.from_pydict({"u": keys, "v": values}).repartition(4, "u")
    got = df.to_pylist()
    assert Counter((r["u"], r["v"]) for r in got) == Counter(zip(keys, values, strict=True))
    grouped = df.groupby("u").agg(col("v").sum().alias("s")).to_pylist()
    totals: dict = defaultdict(int)
    for k, v in zip(keys, values, strict=True):
        totals[k] += v
    assert {r["u"]: r["s"] for r in grouped} == totals


# -- extension types that cannot be keys ------------------------------------------------------


def image_frame() -> ketch.DataFrame:
    from PIL import Image

    blobs = []
    for value in (0, 255):
        buffer = io.BytesIO()
        Image.fromarray(np.full((2, 3, 3), value, np.uint8)).save(buffer, "PNG")
        blobs.append(buffer.getvalue())
    df = ketch.from_pydict({"b": blobs, "k": [1, 2]}).with_column("img", col("b").image.decode(mode="RGB"))
    return df.with_column("fixed", col("img").image.resize(2, 2))


def tensor_frame() -> ketch.DataFrame:
    values = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    return ketch.from_arrow(
        pa.table({"ten": pa.FixedShapeTensorArray.from_numpy_ndarray(values), "k": [1, 2]})
    )


def file_frame() -> ketch.DataFrame:
    return ketch.from_pydict({"p": ["/tmp/a", "/tmp/b"], "k": [1, 2]}).with_column(
        "f", col("p").url.to_file()
    )


class Opaque:
    """An object Arrow cannot represent: stored as a Python column."""


def python_frame() -> ketch.DataFrame:
    df = ketch.from_pydict({"o": [Opaque(), Opaque()], "k": [1, 2]})
    assert df.schema()["o"].dtype == DataType.python()
    return df


FRAMES = {
    "img": (image_frame, "Image"),
    "fixed": (image_frame, "FixedShapeImage"),
    "ten": (tensor_frame, "fixed_shape_tensor"),
    "f": (file_frame, "File"),
    "o": (python_frame, "python"),
}


@pytest.mark.parametrize("column", sorted(FRAMES))
def test_non_comparable_extension_keys_fail_at_plan_time(column):
    make, type_text = FRAMES[column]
    df = make()
    cases = [
        ("groupby", "group by", lambda: df.groupby(column).agg(col("k").sum())),
        ("distinct", "deduplicate by", lambda: df.select(column).distinct()),
        ("sort", "sort by", lambda: df.sort(column)),
        ("join", "join on", lambda: df.join(df.select(column), on=column)),
        (
            "window partition_by",
            "partition by",
            lambda: df.with_column("s", col("k").sum().over(Window().partition_by(column))),
        ),
        ("repartition()", "partition by", lambda: df.repartition(2, column)),
    ]
    for operation, action, build in cases:
        with pytest.raises(KetchTypeError) as info:
            build().collect()
        message = str(info.value)
        assert f"{operation}: cannot {action} column '{column}' of type" in message, message
        assert type_text.lower() in message.lower(), message


def test_embedding_keys_fail_naming_the_column():
    df = ketch.from_pydict({"e": [[1.0, 2.0], [3.0, 4.0]]}).with_column(
        "e", col("e").cast(DataType.embedding(DataType.float32(), 2))
    )
    with pytest.raises(KetchTypeError, match="groupby: cannot group by column 'e' of type fixed_size_list"):
        df.groupby("e").agg(col("e").count().alias("n")).collect()
    with pytest.raises(KetchTypeError, match="sort: cannot sort by column 'e'"):
        df.sort("e").collect()


def test_uuid_keys_on_both_runners(runner):
    """Group-by, distinct, join, window and sort over partitions: on Ray the shuffles hash UUIDs
    (RowHashes) and the sort cuts ranges (range_boundaries) through the same storage view."""
    keys, values = uuid_rows(3_000, seed=21)
    df = ketch.from_pydict({"u": keys, "v": values}).into_partitions(3)
    totals: dict = defaultdict(int)
    for k, v in zip(keys, values, strict=True):
        totals[k] += v
    grouped = df.groupby("u").agg(col("v").sum().alias("s")).to_arrow()
    assert grouped.schema.field("u").type == pa.uuid()
    assert {r["u"]: r["s"] for r in grouped.to_pylist()} == totals
    assert Counter(df.select("u").distinct().to_pydict()["u"]) == Counter(set(keys))
    other = ketch.from_pydict({"u": DISTINCT[:10], "w": list(range(10))}).into_partitions(2)
    joined = df.join(other, on="u", how="left").to_pylist()
    rank_of = {u: i for i, u in enumerate(DISTINCT[:10])}
    assert Counter((r["u"], r["v"], r["w"]) for r in joined) == Counter(
        (k, v, rank_of.get(k)) for k, v in zip(keys, values, strict=True)
    )
    windowed = df.with_column("t", col("v").sum().over(Window().partition_by("u"))).to_pylist()
    assert all(r["t"] == totals[r["u"]] for r in windowed)
    ordered = df.sort("u").to_pydict()["u"]
    present = sorted((k for k in keys if k is not None), key=lambda u: u.bytes)
    assert ordered == present + [None] * keys.count(None)
