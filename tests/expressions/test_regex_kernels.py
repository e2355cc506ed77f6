"""Ketch's RE2 regex kernels (regexp, regexp_count, regexp_replace, regexp_extract,
regexp_extract_all) against Python's ``re`` on random strings and random RE2-compatible patterns,
with a constant pattern and with a pattern per row (one pass, each distinct pattern compiled once).

The oracle iterates matches as RE2, Rust's regex crate (Daft) and Go do: each search starts where
the previous match ended, with the whole string as context (``^``, ``\\A``, ``\\b`` see the real
string), and an empty match right where the previous match ended is skipped by one character.
Python's ``re.findall`` agrees except there (it also reports an empty match right after a non-empty
one): it is the oracle itself for patterns that cannot match the empty string."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import ketch
import ketch.functions as F
from ketch import col
from ketch.errors import KetchError, KetchValueError

TEXT_ALPHABET = ["a", "b", "c", "A", " ", "1", "2", "é", "日", "😀", "\n", "_", "-"]


def random_text(rng: np.random.Generator) -> str:
    picks = rng.integers(0, len(TEXT_ALPHABET), int(rng.integers(0, 14)))
    return "".join(TEXT_ALPHABET[int(i)] for i in picks)


class PatternMaker:
    """Random patterns in the syntax RE2 and Python's ``re`` read alike: ``(re2, python, groups,
    can_be_empty)``. Only items that cannot match the empty string are repeated, and repeated items
    hold no capturing group (the two engines agree on the rest)."""

    LITERALS = ["a", "b", "c", " ", "1", "é", "日", "😀", "_", "\n"]
    CLASSES = ["[ab]", "[^a ]", "[a-c]", r"\d", r"\w", r"\s", r"\W", ".", "[é😀]", "[0-9]"]
    ANCHORS = [("^", "^"), ("$", r"\Z"), (r"\A", r"\A"), (r"\z", r"\Z"), (r"\b", r"\b")]
    QUANTIFIERS = ["*", "+", "?", "{1,2}", "*?", "+?", "??", "{2}"]

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def pick(self, items: list[Any]) -> Any:
        return items[int(self.rng.integers(0, len(items)))]

    def pattern(self) -> tuple[str, str, int, bool]:
        self.groups = 0
        r2, py, empty = self.alternation(depth=0, capture=True)
        return r2, py, self.groups, empty

    def alternation(self, depth: int, capture: bool) -> tuple[str, str, bool]:
        branches = [self.sequence(depth, capture) for _ in range(1 if self.rng.random() < 0.7 else 2)]
        return (
            "|".join(b[0] for b in branches),
            "|".join(b[1] for b in branches),
            any(b[2] for b in branches),
        )

    def sequence(self, depth: int, capture: bool) -> tuple[str, str, bool]:
        items = [self.item(depth, capture) for _ in range(int(self.rng.integers(1, 4)))]
        return "".join(i[0] for i in items), "".join(i[1] for i in items), all(i[2] for i in items)

    def item(self, depth: int, capture: bool) -> tuple[str, str, bool]:
        roll = self.rng.random()
        if roll < 0.35:
            text = self.pick(self.LITERALS)
            atom = (text, text, False)
        elif roll < 0.65:
            text = self.pick(self.CLASSES)
            atom = (text, text, False)
        elif roll < 0.78:
            r2, py = self.pick(self.ANCHORS)
            return r2, py, True
        elif depth < 2:
            quantified = self.rng.random() < 0.5
            grouping = capture and not quantified and self.rng.random() < 0.7
            if grouping:
                self.groups += 1
            r2, py, empty = self.alternation(depth + 1, capture and not quantified)
            open_ = "(" if grouping else "(?:"
            atom = (open_ + r2 + ")", open_ + py + ")", empty)
            if quantified and not empty:
                q = self.pick(self.QUANTIFIERS)
                return atom[0] + q, atom[1] + q, q[0] in "*?"
            return atom
        else:
            atom = ("a", "a", False)
        if self.rng.random() < 0.35:
            q = self.pick(self.QUANTIFIERS)
            return atom[0] + q, atom[1] + q, q[0] in "*?"
        return atom


def re2_matches(rx: re.Pattern[str], s: str) -> list[re.Match[str]]:
    """Non-overlapping matches as RE2 / Rust / Go iterate them (see the module docstring)."""
    out: list[re.Match[str]] = []
    pos, last_end = 0, -1
    while pos <= len(s):
        m = rx.search(s, pos)
        if m is None:
            break
        if m.start() == m.end() == last_end:
            pos += 1
            continue
        out.append(m)
        last_end = pos = m.end()
    return out


def expected_replace(rx: re.Pattern[str], s: str, replacement: Callable[[re.Match[str]], str]) -> str:
    out, copied = [], 0
    for m in re2_matches(rx, s):
        out.append(s[copied : m.start()] + replacement(m))
        copied = m.end()
    return "".join(out) + s[copied:]


def run(values: list[Any], build: Callable[[Any], Any], **columns: list[Any]) -> list[Any]:
    df = ketch.from_pydict({"s": values, **columns})
    return df.select(build(col("s")).alias("r")).to_pydict()["r"]


def texts(rng: np.random.Generator, n: int) -> list[str | None]:
    out: list[str | None] = [None if rng.random() < 0.08 else random_text(rng) for _ in range(n)]
    out[:4] = ["", "aab", "ab ab\nab", "😀é日"]
    return out


def group_or_none(m: re.Match[str] | None, index: int) -> str | None:
    """Daft's regexp_extract: null when nothing matches or the group took no part in the match."""
    return None if m is None else m.group(index)


def taking_part(matches: list[re.Match[str]], index: int) -> list[str]:
    """Daft's regexp_extract_all: the group of each match it took part in."""
    return [m.group(index) for m in matches if m.group(index) is not None]


def test_anchors_and_empty_matches_are_counted_once() -> None:
    values = ["aab", "abc", "", "ab ab", None]
    assert run(values, lambda c: F.regexp_count(c, "^a")) == [1, 1, 0, 1, None]
    assert run(values, lambda c: F.regexp_count(c, r"\Aa")) == [1, 1, 0, 1, None]
    assert run(values, lambda c: F.regexp_count(c, r"\bab")) == [0, 1, 0, 2, None]
    assert run(values, lambda c: F.regexp_count(c, "b$")) == [1, 0, 0, 1, None]
    # the empty pattern matches before each character and at the end, as Python's findall
    assert run(values, lambda c: F.regexp_count(c, "")) == [
        None if s is None else len(re.findall("", s)) for s in values
    ]
    assert run(["abc"], lambda c: F.regexp_count(c, "")) == [4]
    assert run(values, lambda c: F.regexp_replace(c, "^a", "-")) == [
        None if s is None else re.sub("^a", "-", s) for s in values
    ]
    assert run(values, lambda c: F.regexp_extract_all(c, r"\bab")) == [[], ["ab"], [], ["ab", "ab"], None]
    # an empty match right after a match is skipped (RE2, Rust, Go; Python's findall counts it)
    assert run(["abxd"], lambda c: F.regexp_count(c, "x*")) == [4]
    assert run(["abxd"], lambda c: F.regexp_replace(c, "x*", "-")) == ["-a-b-d-"]


def test_a_group_that_takes_no_part_gives_null_or_no_item_as_in_daft() -> None:
    """Daft 0.7.26's answers: ``(a)?b`` on "b" matches without group 1."""
    values = ["ab", "b", None, "xyz", "ab b ab", ""]
    assert run(values, lambda c: F.regexp_extract(c, r"(a)?b", 1)) == ["a", None, None, None, "a", None]
    assert run(values, lambda c: F.regexp_extract(c, r"(a)?b", 0)) == ["ab", "b", None, None, "ab", None]
    every = [["a"], [], None, [], ["a", "a"], []]
    assert run(values, lambda c: F.regexp_extract_all(c, r"(a)?b", 1)) == every
    assert run(values, lambda c: F.regexp_extract(c, r"(a*)b", 1)) == ["a", "", None, None, "a", None]


@pytest.mark.parametrize("seed", range(12))
def test_constant_patterns_match_python_re(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    maker = PatternMaker(rng)
    values = texts(rng, 60)
    for _ in range(6):
        r2, py, groups, can_be_empty = maker.pattern()
        rx = re.compile(py, re.ASCII)
        index = int(rng.integers(0, groups + 1))
        where = f"pattern {r2!r} (python {py!r}), index {index}"
        assert run(values, lambda c, p=r2: F.regexp(c, p)) == [
            None if s is None else rx.search(s) is not None for s in values
        ], where
        counts = run(values, lambda c, p=r2: F.regexp_count(c, p))
        assert counts == [None if s is None else len(re2_matches(rx, s)) for s in values], where
        if not can_be_empty:
            assert counts == [None if s is None else len(rx.findall(s)) for s in values], where
        assert run(values, lambda c, p=r2, i=index: F.regexp_extract(c, p, i)) == [
            None if s is None else group_or_none(rx.search(s), index) for s in values
        ], where
        assert run(values, lambda c, p=r2, i=index: F.regexp_extract_all(c, p, i)) == [
            None if s is None else taking_part(re2_matches(rx, s), index) for s in values
        ], where
        rewrite = "<\\0|\\\\|" + (f"\\{index}" if index else "") + ">"

        def rewritten(m: re.Match[str], i: int = index) -> str:
            return f"<{m.group(0)}|\\|{(m.group(i) or '') if i else ''}>"

        assert run(values, lambda c, p=r2, w=rewrite: F.regexp_replace(c, p, w)) == [
            None if s is None else expected_replace(rx, s, rewritten) for s in values
        ], where


def test_ten_thousand_distinct_patterns_per_row_match_python_re() -> None:
    rng = np.random.default_rng(7)
    maker = PatternMaker(rng)
    n = 10_000
    values = texts(rng, n)
    made = [maker.pattern() for _ in range(n)]
    # distinct: each pattern gets an alternative that never matches the alphabet
    patterns: list[str | None] = [f"{r2}|Q{i}Q" for i, (r2, _, _, _) in enumerate(made)]
    python = [re.compile(f"{py}|Q{i}Q", re.ASCII) for i, (_, py, _, _) in enumerate(made)]
    patterns[5] = None
    assert len(set(patterns)) == n
    df = ketch.from_pydict({"s": values, "p": patterns})
    out = df.select(
        F.regexp(col("s"), col("p")).alias("m"),
        F.regexp_count(col("s"), col("p")).alias("n"),
        F.regexp_extract(col("s"), col("p"), 0).alias("e"),
        F.regexp_extract_all(col("s"), col("p")).alias("a"),
        F.regexp_replace(col("s"), col("p"), "<\\0>").alias("r"),
    ).to_pydict()
    for i, (s, rx) in enumerate(zip(values, python, strict=True)):
        if s is None or patterns[i] is None:
            assert [out[k][i] for k in "mnear"] == [None] * 5
            continue
        found = re2_matches(rx, s)
        assert out["m"][i] == (rx.search(s) is not None), patterns[i]
        assert out["n"][i] == len(found), patterns[i]
        assert out["e"][i] == group_or_none(rx.search(s), 0), patterns[i]
        assert out["a"][i] == [m.group(0) for m in found], patterns[i]
        assert out["r"][i] == expected_replace(rx, s, lambda m: f"<{m.group(0)}>"), patterns[i]


def test_few_patterns_per_row_and_large_string_input() -> None:
    rng = np.random.default_rng(3)
    values = texts(rng, 500)
    choices = [r"(\d+)", "^(a)", r"\b(ab)", "(é)|日", "()", "(a)(b)?"]
    patterns = [choices[int(i)] for i in rng.integers(0, len(choices), len(values))]
    df = ketch.from_arrow(pa.table({"s": pa.array(values, pa.large_string()), "p": patterns}))
    out = df.select(
        F.regexp_count(col("s"), col("p")).alias("n"),
        F.regexp_extract(col("s"), col("p"), 1).alias("e"),
    )
    table = out.to_arrow()
    assert table.schema.field("e").type == pa.large_string()
    result = table.to_pydict()
    for s, p, n, e in zip(values, patterns, result["n"], result["e"], strict=True):
        if s is None:
            assert n is None and e is None
            continue
        rx = re.compile(p, re.ASCII)
        assert n == len(re2_matches(rx, s))
        assert e == group_or_none(rx.search(s), 1)


def test_replacement_per_row_and_max_replacements() -> None:
    values = ["a1b22", "x", None, "333"]
    replacements = ["<\\0>", "-", "z", None]
    df = ketch.from_pydict({"s": values, "w": replacements})
    out = df.select(F.regexp_replace(col("s"), r"\d+", col("w")).alias("r")).to_pydict()["r"]
    assert out == ["a<1>b<22>", "x", None, None]
    first = ketch.Expression._call(
        "regexp_replace", col("s"), pattern=r"\d", replacement="#", max_replacements=1
    )
    assert ketch.from_pydict({"s": values}).select(first.alias("r")).to_pydict()["r"] == [
        None if s is None else re.sub(r"\d", "#", s, count=1) for s in values
    ]


def test_errors_name_the_function_and_the_pattern() -> None:
    df = ketch.from_pydict({"s": ["a", "b"], "p": ["(a)", "(b"]})
    with pytest.raises(KetchValueError, match=r"regexp_count: invalid regular expression 'a\(b'"):
        df.select(F.regexp_count(col("s"), "a(b"))
    with pytest.raises(KetchValueError, match=r"regexp_extract.*group index 2.*'\(a\)' has 1 capturing"):
        df.select(F.regexp_extract(col("s"), "(a)", 2))
    with pytest.raises(KetchValueError, match=r"regexp_extract_all.*group index 3"):
        df.select(F.regexp_extract_all(col("s"), "(a)", 3))
    with pytest.raises(KetchValueError, match=r"regexp_replace.*invalid replacement '\\2'"):
        df.select(F.regexp_replace(col("s"), "(a)", "\\2"))
    with pytest.raises(KetchError, match=r"regexp_count with pattern '\(b' \(a per-row value\).*missing \)"):
        df.select(F.regexp_count(col("s"), col("p"))).collect()
    with pytest.raises(KetchError, match=r"regexp_extract with pattern '\(b'"):
        df.select(F.regexp_extract(col("s"), col("p"), 1)).collect()
