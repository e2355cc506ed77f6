"""String distances and similarities against textbook Python implementations (Wagner–Fischer,
optimal string alignment, Jaro 1989, Winkler 1990) on random Unicode strings with nulls and empty
strings; both arguments as columns or literals; both of Daft's spellings (the ``ketch.functions``
free function and the Expression method). Values from Daft's own docstring examples too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import ketch
import ketch.functions as F
from ketch import col, lit
from ketch.errors import KetchTypeError

# A small alphabet so random pairs share characters: multi-byte, combining, astral, CJK.
ALPHABET = list("abcAB ") + ["é", "ß", "\u0301", "😉", "中"]


def random_strings(rng: np.random.Generator, n: int) -> list[str | None]:
    out: list[str | None] = []
    for _ in range(n):
        if rng.random() < 0.1:
            out.append(None)
        else:
            k = int(rng.integers(0, 9))
            out.append("".join(ALPHABET[int(i)] for i in rng.integers(0, len(ALPHABET), k)))
    return out


def levenshtein(a: str, b: str) -> int:
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    return d[len(a)][len(b)]


def osa(a: str, b: str) -> int:
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def hamming(a: str, b: str) -> int | None:
    return sum(x != y for x, y in zip(a, b, strict=True)) if len(a) == len(b) else None


def jaro(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    window = max(max(len(a), len(b)) // 2 - 1, 0)
    a_hit, b_hit = [False] * len(a), [False] * len(b)
    m = 0
    for i, ch in enumerate(a):
        for j in range(max(0, i - window), min(len(b), i + window + 1)):
            if not b_hit[j] and b[j] == ch:
                a_hit[i] = b_hit[j] = True
                m += 1
                break
    if m == 0:
        return 0.0
    a_matched = [ch for ch, hit in zip(a, a_hit, strict=True) if hit]
    b_matched = [ch for ch, hit in zip(b, b_hit, strict=True) if hit]
    t = sum(x != y for x, y in zip(a_matched, b_matched, strict=True))
    return (m / len(a) + m / len(b) + (m - t / 2) / m) / 3


def jaro_winkler(a: str, b: str) -> float:
    j = jaro(a, b)
    prefix = 0
    for x, y in zip(a[:4], b[:4], strict=False):
        if x != y:
            break
        prefix += 1
    return j + prefix * 0.1 * (1 - j)


# (name, free function, reference)
FUNCTIONS: list[tuple[str, Callable[..., ketch.Expression], Callable[[str, str], Any]]] = [
    ("levenshtein_distance", F.levenshtein_distance, levenshtein),
    ("damerau_levenshtein_distance", F.damerau_levenshtein_distance, osa),
    ("hamming_distance_str", F.hamming_distance_str, hamming),
    ("jaro_similarity", F.jaro_similarity, jaro),
    ("jaro_winkler_similarity", F.jaro_winkler_similarity, jaro_winkler),
]
FLOATS = {"jaro_similarity", "jaro_winkler_similarity"}


def expected(fn: Callable[[str, str], Any], a: list[str | None], b: list[str | None]) -> list[Any]:
    return [None if x is None or y is None else fn(x, y) for x, y in zip(a, b, strict=True)]


def check(name: str, got: list[Any], want: list[Any]) -> None:
    if name in FLOATS:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12, nan_ok=False)
    else:
        assert got == want


@pytest.mark.parametrize(("name", "function", "reference"), FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_columns_against_reference(
    name: str, function: Any, reference: Any, rng: np.random.Generator
) -> None:
    a = random_strings(rng, 400) + ["", "", "abc", None, "😉é", "ab"]
    b = random_strings(rng, 400) + ["", "x", "abc", "abc", "é😉", "ba"]
    # Equal-length pairs for Hamming: the reverse of each left string.
    a += [s for s in a[:100] if s is not None]
    b += [s[::-1] for s in a[406:]]
    df = ketch.from_pydict({"a": a, "b": b})
    out = df.select(function(col("a"), col("b")).alias("f"), getattr(col("a"), name)(col("b")).alias("m"))
    result = out.to_pydict()
    want = expected(reference, a, b)
    check(name, result["f"], want)
    check(name, result["m"], want)
    assert out.schema()["f"].dtype.to_arrow() == (pa.float64() if name in FLOATS else pa.int64())


@pytest.mark.parametrize(("name", "function", "reference"), FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_literal_arguments(name: str, function: Any, reference: Any, rng: np.random.Generator) -> None:
    a = random_strings(rng, 200) + ["abcé", "", None]
    df = ketch.from_pydict({"a": a})
    word = "abcé"
    out = df.select(
        function(col("a"), word).alias("right_lit"),
        function(lit(word), col("a")).alias("left_lit"),
        function(col("a"), lit(None).cast(pa.string())).alias("null_lit"),
        function(lit("kitten"), lit("sitting")).alias("both"),
    ).to_pydict()
    check(name, out["right_lit"], expected(reference, a, [word] * len(a)))
    check(name, out["left_lit"], expected(reference, [word] * len(a), a))
    assert out["null_lit"] == [None] * len(a)
    check(name, out["both"], [reference("kitten", "sitting")] * len(a))


def test_large_string_and_mixed_types(rng: np.random.Generator) -> None:
    a = random_strings(rng, 100)
    b = random_strings(rng, 100)
    table = pa.table({"a": pa.array(a, pa.large_string()), "b": pa.array(b, pa.string())})
    out = ketch.from_arrow(table).select(F.levenshtein_distance(col("a"), col("b")).alias("d")).to_pydict()
    assert out["d"] == expected(levenshtein, a, b)


def test_daft_docstring_examples() -> None:
    """The values Daft's own docstrings print for these pairs."""
    df = ketch.from_pydict(
        {
            "x": ["martha", "dwayne", "dixon", "kitten", "saturday", "", "abc", "abc", "CA"],
            "y": ["marhta", "duane", "dicksonx", "sitting", "sunday", "abc", "bac", "acb", "ABC"],
        }
    )
    out = df.select(
        F.jaro_similarity(col("x"), col("y")).alias("j"),
        F.jaro_winkler_similarity(col("x"), col("y")).alias("jw"),
        F.levenshtein_distance(col("x"), col("y")).alias("lev"),
        F.damerau_levenshtein_distance(col("x"), col("y")).alias("osa"),
    ).to_pydict()
    assert out["j"][:3] == [0.9444444444444445, 0.8222222222222223, 0.7666666666666666]
    assert out["jw"][:3] == [0.9611111111111111, 0.8400000000000001, 0.8133333333333332]
    assert out["lev"][3:6] == [3, 3, 3]
    assert out["osa"][5:9] == [3, 1, 1, 3]  # "CA" -> "ABC" is 3 under OSA (2 unrestricted)
    ham = ketch.from_pydict({"x": ["ronald"] * 3, "y": ["ronald", "renuld", "ronaldo"]})
    assert ham.select(F.hamming_distance_str(col("x"), col("y")).alias("h")).to_pydict()["h"] == [0, 2, None]


def test_type_errors_name_function_argument_and_type() -> None:
    df = ketch.from_pydict({"s": ["a"], "i": [1]})
    with pytest.raises(
        KetchTypeError,
        match=r"levenshtein_distance expects a string as its second argument, got col\(i\) of type int64",
    ):
        df.select(F.levenshtein_distance(col("s"), col("i"))).collect()
    with pytest.raises(KetchTypeError, match=r"jaro_similarity expects a string as its first argument"):
        df.select(col("i").jaro_similarity("a")).collect()
