"""String functions whose pattern, substring or count comes from a column (one value per row), as
Daft allows: each result is checked against Python's own string operations row by row."""

from __future__ import annotations

import re

import pytest

import ketch
from ketch import col, lit
from ketch.errors import KetchError
from ketch.functions import endswith, left, like, regexp, right, split, startswith

TEXT = ["apple pie", "banana split", None, "cherry", "apple", "", "date", "banana"]
PATS = ["pie", "an", "x", None, "app", "", "z", "an"]


def _df():
    return ketch.from_pydict({"s": TEXT, "p": PATS, "n": [1, 3, 2, 0, None, 4, 10, 2]})


def _py(fn, *columns):
    return [None if any(v is None for v in vs) else fn(*vs) for vs in zip(*columns, strict=True)]


def test_contains_startswith_endswith_with_a_pattern_column():
    out = (
        _df()
        .select(
            col("s").str.contains(col("p")).alias("c"),
            startswith(col("s"), col("p")).alias("sw"),
            endswith(col("s"), col("p")).alias("ew"),
            col("s").contains(col("p")).alias("flat"),
        )
        .to_pydict()
    )
    assert out["c"] == _py(lambda s, p: p in s, TEXT, PATS)
    assert out["flat"] == out["c"]
    assert out["sw"] == _py(str.startswith, TEXT, PATS)
    assert out["ew"] == _py(str.endswith, TEXT, PATS)


def test_left_right_with_a_count_column():
    df = _df()
    counts = df.to_pydict()["n"]
    out = df.select(left(col("s"), col("n")).alias("l"), right(col("s"), col("n")).alias("r")).to_pydict()
    assert out["l"] == _py(lambda s, n: s[:n], TEXT, counts)
    assert out["r"] == _py(lambda s, n: s[len(s) - n :] if n else "", TEXT, counts)


def test_regex_and_like_with_a_pattern_column(rng):
    words = ["".join(rng.choice(list("abc"), size=int(rng.integers(0, 7)))) for _ in range(500)]
    patterns = [str(p) for p in rng.choice(["a+", "b+c", "c$", "(ab)+", "^$", "a.b"], size=500)]
    df = ketch.from_pydict({"w": words, "p": patterns})
    out = df.select(
        regexp(col("w"), col("p")).alias("m"),
        col("w").regexp_count(col("p")).alias("n"),
    ).to_pydict()
    assert out["m"] == [re.search(p, w) is not None for w, p in zip(words, patterns, strict=True)]
    assert out["n"] == [len(re.findall(p, w)) for w, p in zip(words, patterns, strict=True)]
    likes = ["a%", "%b%", "_c", "%"]
    df2 = ketch.from_pydict({"w": words[:8], "p": [likes[i % 4] for i in range(8)]})
    got = df2.select(like(col("w"), col("p")).alias("l")).to_pydict()["l"]

    def sql_like(w: str, p: str) -> bool:
        return re.fullmatch(re.escape(p).replace("%", ".*").replace("_", "."), w, re.S) is not None

    assert got == [sql_like(w, likes[i % 4]) for i, w in enumerate(words[:8])]


def test_split_and_replace_with_a_column():
    df = ketch.from_pydict({"s": ["a,b,c", "a;b", None, "x"], "sep": [",", ";", ",", None]})
    out = df.select(
        split(col("s"), col("sep")).alias("parts"),
        col("s").replace(col("sep"), "|").alias("r"),
    ).to_pydict()
    assert out["parts"] == [["a", "b", "c"], ["a", "b"], None, None]
    assert out["r"] == ["a|b|c", "a|b", None, None]


def test_literal_expression_and_many_morsels():
    n = 20_000
    text = [f"row{i}" for i in range(n)]
    pats = [str(i % 7) for i in range(n)]
    with ketch.execution_config_ctx(morsel_size_rows=1000):
        df = ketch.from_pydict({"s": text, "p": pats})
        got = df.select(
            col("s").str.endswith(col("p")).alias("e"), col("s").str.contains(lit("row1")).alias("c")
        )
        out = got.to_pydict()
    assert out["e"] == [t.endswith(p) for t, p in zip(text, pats, strict=True)]
    assert out["c"] == ["row1" in t for t in text]


def test_bad_pattern_columns_fail_clearly():
    df = ketch.from_pydict({"s": ["a"], "x": [1.5], "bad": ["("]})
    with pytest.raises(KetchError, match=r"contains: the substr argument expects a string or integer column"):
        df.select(col("s").str.contains(col("x"))).collect()
    with pytest.raises(KetchError, match=r"regexp with pattern '\('"):
        df.select(regexp(col("s"), col("bad"))).collect()
    with pytest.raises(KetchError, match="only one of search and replacement"):
        df.select(col("s").replace(col("s"), col("bad"))).collect()
