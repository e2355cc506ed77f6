"""Set operations (Daft's union / intersect / except families, ketch.concat): results checked
against multiset arithmetic in plain Python (collections.Counter, SQL's definitions) on randomized
data with nulls and duplicates, on both runners; Daft's documented examples; schema errors."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch.errors import KetchValueError


def _rows(df: ketch.DataFrame) -> Counter:
    data = df.to_pydict()
    names = list(data)
    return Counter(zip(*[data[n] for n in names], strict=True))


def _random_frame(rng: np.random.Generator, n: int) -> tuple[ketch.DataFrame, list[tuple]]:
    """Two columns drawn from a small domain (so rows repeat across and within sides), ~20% nulls."""
    a = [None if rng.random() < 0.2 else int(v) for v in rng.integers(0, 4, n)]
    b = [None if rng.random() < 0.2 else ["x", "y", "z"][int(v)] for v in rng.integers(0, 3, n)]
    return ketch.from_pydict({"a": pa.array(a, pa.int64()), "b": pa.array(b, pa.string())}), list(
        zip(a, b, strict=True)
    )


@pytest.fixture
def sides(rng):
    left, lrows = _random_frame(rng, 300)
    right, rrows = _random_frame(rng, 200)
    # Several partitions on each side: the counts must combine across them.
    return left.into_partitions(3), right.into_partitions(2), Counter(lrows), Counter(rrows)


def test_set_operations_match_multiset_arithmetic(sides, runner):
    left, right, lc, rc = sides
    assert _rows(left.union_all(right)) == lc + rc
    assert _rows(left.union(right)) == Counter(set(lc) | set(rc))
    assert _rows(left.intersect(right)) == Counter(set(lc) & set(rc))
    assert _rows(left.intersect_all(right)) == lc & rc  # min(l, r) copies
    assert _rows(left.except_distinct(right)) == Counter(set(lc) - set(rc))
    assert _rows(left.except_all(right)) == lc - rc  # max(l - r, 0) copies
    # Rows with nulls take part as values (IS NOT DISTINCT FROM): the data has them on both sides.
    assert any(None in row for row in (lc & rc))


def test_nulls_compare_equal():
    left = ketch.from_pydict({"a": pa.array([None, None, 1], pa.int64())})
    right = ketch.from_pydict({"a": pa.array([None], pa.int64())})
    assert left.intersect(right).to_pydict() == {"a": [None]}
    assert sorted(left.except_all(right).to_pydict()["a"], key=str) == [1, None]
    assert left.except_distinct(right).to_pydict() == {"a": [1]}
    assert sorted(left.union(right).to_pydict()["a"], key=str) == [1, None]


def test_daft_examples():
    df1 = ketch.from_pydict({"x": [1, 2, 3], "y": [4, 5, 6]})
    df2 = ketch.from_pydict({"x": [3, 4, 5], "y": [6, 7, 8]})
    assert df1.union(df2).sort("x").to_pydict() == {"x": [1, 2, 3, 4, 5], "y": [4, 5, 6, 7, 8]}
    df3 = ketch.from_pydict({"x": [3, 2, 1], "y": [6, 5, 4]})
    assert df1.union_all(df3).sort("x").to_pydict() == {"x": [1, 1, 2, 2, 3, 3], "y": [4, 4, 5, 5, 6, 6]}

    a = ketch.from_pydict({"a": [1, 2, 3], "b": [4, 5, 6]})
    b = ketch.from_pydict({"a": [1, 2, 3], "b": [4, 8, 6]})
    assert a.intersect(b).sort("a").to_pydict() == {"a": [1, 3], "b": [4, 6]}
    assert a.except_distinct(b).to_pydict() == {"a": [2], "b": [5]}

    c = ketch.from_pydict({"a": [1, 2, 2], "b": [4, 6, 6]})
    d = ketch.from_pydict({"a": [1, 1, 2, 2], "b": [4, 4, 6, 6]})
    assert c.intersect_all(d).sort("a").to_pydict() == {"a": [1, 2, 2], "b": [4, 6, 6]}
    assert d.except_all(c).to_pydict() == {"a": [1], "b": [4]}


def test_union_by_name_daft_examples(runner):
    df1 = ketch.from_pydict({"x": [1, 2], "y": [4, 5], "w": [9, 10]})
    df2 = ketch.from_pydict({"y": [6, 7], "z": ["a", "b"]})
    out = df1.union_by_name(df2).sort("y")
    assert out.column_names == ["x", "y", "w", "z"]  # left's columns, then the right-only ones
    assert out.to_pydict() == {
        "x": [1, 2, None, None],
        "y": [4, 5, 6, 7],
        "w": [9, 10, None, None],
        "z": [None, None, "a", "b"],
    }
    assert out.schema().field("x").type == pa.int64()
    df3 = ketch.from_pydict({"y": [6, 6, 7, 7], "z": ["a", "a", "b", "b"]})
    all_rows = df1.union_all_by_name(df3).sort("y").to_pydict()
    assert all_rows["y"] == [4, 5, 6, 6, 7, 7]
    assert all_rows["z"] == [None, None, "a", "a", "b", "b"]
    assert df1.union_by_name(df3).count_rows() == 4  # duplicates dropped


def test_union_by_position_casts_to_supertype():
    ints = ketch.from_pydict({"a": [1, 2]})
    floats = ketch.from_pydict({"b": [2.5, 2.0]})
    out = ints.union_all(floats)
    assert out.column_names == ["a"]  # names from the left, columns matched by position
    assert out.schema().field("a").type == pa.float64()
    assert sorted(out.to_pydict()["a"]) == [1.0, 2.0, 2.0, 2.5]
    assert sorted(ints.union(floats).to_pydict()["a"]) == [1.0, 2.0, 2.5]
    # Daft's rule: a number meets a string as a string.
    words = ketch.from_pydict({"a": ["x"]})
    mixed = ints.union_all(words)
    assert mixed.schema().field("a").type == pa.string()
    assert sorted(mixed.to_pydict()["a"]) == ["1", "2", "x"]
    # Null-typed columns take the other side's type.
    nulls = ketch.from_pydict({"a": [None]})
    assert ints.union_all(nulls).schema().field("a").type == pa.int64()


def test_union_by_name_casts_shared_columns():
    left = ketch.from_pydict({"k": [1], "v": [1]})
    right = ketch.from_pydict({"v": [0.5], "k": [2]})
    out = left.union_all_by_name(right).sort("k").to_pydict()
    assert out == {"k": [1, 2], "v": [1.0, 0.5]}


def test_set_operation_schema_errors():
    two = ketch.from_pydict({"a": [1], "b": [2]})
    one = ketch.from_pydict({"a": [1]})
    floats = ketch.from_pydict({"a": [1.0], "b": [2.0]})
    binary = ketch.from_pydict({"a": [b"x"]})
    for op in ("union", "union_all", "intersect", "intersect_all", "except_distinct", "except_all"):
        with pytest.raises(KetchValueError, match="same number of columns"):
            getattr(two, op)(one)
    # intersect / except: Daft requires the same type at each position (no implicit cast).
    for op in ("intersect", "intersect_all", "except_distinct", "except_all"):
        with pytest.raises(ValueError, match="same type at each position"):
            getattr(two, op)(floats)
    with pytest.raises(ValueError, match="no common supertype"):
        one.union(binary)
    with pytest.raises(ValueError, match="no common supertype for column 'a'"):
        one.union_by_name(binary)


def test_intersect_matches_by_position_with_left_names():
    left = ketch.from_pydict({"a": [1, 2, 3]})
    right = ketch.from_pydict({"other": [3, 1, 9]})
    assert left.intersect(right).sort("a").to_pydict() == {"a": [1, 3]}
    assert left.except_all(right).to_pydict() == {"a": [2]}


def test_top_level_concat(runner):
    parts = [ketch.from_pydict({"a": [i, i + 10]}) for i in range(3)]
    out = ketch.concat(parts)
    assert sorted(out.to_pydict()["a"]) == [0, 1, 2, 10, 11, 12]
    assert ketch.concat(iter(parts[:1])).to_pydict() == {"a": [0, 10]}
    with pytest.raises(ValueError, match="at least one"):
        ketch.concat([])
    with pytest.raises(TypeError, match="item 1"):
        ketch.concat([parts[0], {"a": [1]}])
    # Daft's class: a schema mismatch is a ValueError, for DataFrame.concat and ketch.concat.
    floats = ketch.from_pydict({"a": [1.5]})
    with pytest.raises(KetchValueError, match="exactly the same schema"):
        parts[0].concat(floats)
    with pytest.raises(ValueError, match="exactly the same schema"):
        ketch.concat([parts[0], parts[1], floats])
