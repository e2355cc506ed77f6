"""String kernels against Python's own str methods and ``re`` on random data with nulls, multi-byte
and combining characters and empty strings; each function in both of Daft's spellings (the free
function in ``ketch.functions`` and the ``.str`` / flat Expression method)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import ketch
import ketch.functions as F
from ketch import col
from ketch.errors import KetchTypeError, KetchValueError

# No characters whose case mapping changes the length (ß, İ) or that title-case differently.
ALPHABET = list("abcxyzABCXYZ019 .,-_%!") + ["é", "É", "ñ", "ü", "😉", "中", "\u0301", "\t", "\n", "  "]


def random_strings(rng: np.random.Generator, n: int = 300) -> list[str | None]:
    out: list[str | None] = []
    for _ in range(n):
        if rng.random() < 0.1:
            out.append(None)
            continue
        k = int(rng.integers(0, 12))
        out.append("".join(ALPHABET[int(i)] for i in rng.integers(0, len(ALPHABET), k)))
    out[:3] = ["", None, "😉é\u0301x"]
    return out


@pytest.fixture
def data(rng: np.random.Generator) -> list[str | None]:
    return random_strings(rng)


def run(values: list[Any], build: Callable[[ketch.Expression], ketch.Expression]) -> list[Any]:
    df = ketch.from_pydict({"s": values})
    return df.select(build(col("s")).alias("r")).to_pydict()["r"]


def ref(values: list[Any], fn: Callable[[str], Any]) -> list[Any]:
    return [None if v is None else fn(v) for v in values]


# (name, free function spelling, method spelling, Python reference)
UNARY = [
    ("lower", F.lower, lambda c: c.str.lower(), str.lower),
    ("upper", F.upper, lambda c: c.upper(), str.upper),
    ("capitalize", F.capitalize, lambda c: c.str.capitalize(), str.capitalize),
    ("reverse", F.reverse, lambda c: c.str.reverse(), lambda s: s[::-1]),
    ("lstrip", F.lstrip, lambda c: c.str.lstrip(), str.lstrip),
    ("rstrip", F.rstrip, lambda c: c.rstrip(), str.rstrip),
    ("strip", F.strip, lambda c: c.str.strip(), str.strip),
    ("length", F.length, lambda c: c.str.length(), len),
    ("length_bytes", F.length_bytes, lambda c: c.length_bytes(), lambda s: len(s.encode())),
]


@pytest.mark.parametrize("name,free,method,python", UNARY, ids=[u[0] for u in UNARY])
def test_unary_string_functions_match_python(data, name, free, method, python):
    expected = ref(data, python)
    assert run(data, free) == expected
    assert run(data, method) == expected


def test_lengths_are_uint64_as_daft():
    df = ketch.from_pydict({"s": ["a"]}).select(F.length(col("s")), col("s").str.length_bytes().alias("b"))
    assert df.to_arrow().schema.types == [pa.uint64(), pa.uint64()]


def test_length_takes_binary_and_lists():
    df = ketch.from_pydict({"b": [b"ab\x00", None, b""], "l": [[1, 2], [], None]})
    out = df.select(F.length(col("b")).alias("b"), col("l").length().alias("l")).to_pydict()
    assert out == {"b": [3, None, 0], "l": [2, 0, None]}


def needles(data: list[str | None], rng: np.random.Generator) -> list[str]:
    picked = ["", "a", "é", "😉", "zz", "\u0301"]
    for v in data[3:40]:
        if v:
            i = int(rng.integers(0, len(v)))
            picked.append(v[i : i + int(rng.integers(1, 3))])
    return picked


def test_contains_startswith_endswith_find_match_python(data, rng):
    for needle in needles(data, rng)[:12]:
        assert run(data, lambda c, n=needle: F.contains(c, n)) == ref(data, lambda s, n=needle: n in s)
        assert run(data, lambda c, n=needle: c.str.contains(n)) == ref(data, lambda s, n=needle: n in s)
        assert run(data, lambda c, n=needle: c.startswith(n)) == ref(
            data, lambda s, n=needle: s.startswith(n)
        )
        assert run(data, lambda c, n=needle: F.startswith(c, n)) == ref(
            data, lambda s, n=needle: s.startswith(n)
        )
        assert run(data, lambda c, n=needle: c.str.endswith(n)) == ref(
            data, lambda s, n=needle: s.endswith(n)
        )
        assert run(data, lambda c, n=needle: F.endswith(c, n)) == ref(data, lambda s, n=needle: s.endswith(n))
        # find counts characters, not bytes: "😉é" finds "x" at 2 where Arrow's bytes say 6.
        assert run(data, lambda c, n=needle: F.find(c, n)) == ref(data, lambda s, n=needle: s.find(n))
        assert run(data, lambda c, n=needle: c.str.find(n)) == ref(data, lambda s, n=needle: s.find(n))


def test_find_answers_in_characters():
    assert run(["😉éx", "abc", None], lambda c: c.find("x")) == [2, -1, None]


@pytest.mark.parametrize("n", [0, 1, 2, 5, 20])
def test_left_right_substr_match_python_slices(data, n):
    assert run(data, lambda c: F.left(c, n)) == ref(data, lambda s: s[:n])
    assert run(data, lambda c: c.str.left(n)) == ref(data, lambda s: s[:n])
    assert run(data, lambda c: F.right(c, n)) == ref(data, lambda s: s[-n:] if n else "")
    assert run(data, lambda c: c.right(n)) == ref(data, lambda s: s[-n:] if n else "")
    # Daft's substr gives null where the slice is empty.
    assert run(data, lambda c: F.substr(c, n, 3)) == ref(data, lambda s: s[n : n + 3] or None)
    assert run(data, lambda c: c.str.substr(n)) == ref(data, lambda s: s[n:] or None)


@pytest.mark.parametrize("n,pad", [(0, "*"), (3, "0"), (8, "é"), (12, "😉")])
def test_lpad_rpad_truncate_then_pad_as_daft(data, n, pad):
    assert run(data, lambda c: F.lpad(c, n, pad)) == ref(data, lambda s: s[:n].rjust(n, pad))
    assert run(data, lambda c: c.str.lpad(n, pad)) == ref(data, lambda s: s[:n].rjust(n, pad))
    assert run(data, lambda c: F.rpad(c, n, pad)) == ref(data, lambda s: s[:n].ljust(n, pad))
    assert run(data, lambda c: c.rpad(n, pad)) == ref(data, lambda s: s[:n].ljust(n, pad))
    assert run(["daft", "query", "engine"], lambda c: F.lpad(c, 6, "0")) == ["00daft", "0query", "engine"]


def test_pad_must_be_one_character():
    with pytest.raises(KetchValueError, match="lpad: pad must be a single character, got 'ab'"):
        run(["x"], lambda c: F.lpad(c, 3, "ab"))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_repeat_matches_python(data, n):
    assert run(data, lambda c: F.repeat(c, n)) == ref(data, lambda s: s * n)
    assert run(data, lambda c: c.str.repeat(n)) == ref(data, lambda s: s * n)


@pytest.mark.parametrize("search,replacement", [("a", "Ω"), ("é", ""), (" ", "__"), ("😉", "x")])
def test_replace_and_split_match_python(data, search, replacement):
    assert run(data, lambda c: F.replace(c, search, replacement)) == ref(
        data, lambda s: s.replace(search, replacement)
    )
    assert run(data, lambda c: c.str.replace(search, replacement)) == ref(
        data, lambda s: s.replace(search, replacement)
    )
    assert run(data, lambda c: F.split(c, search)) == ref(data, lambda s: s.split(search))
    assert run(data, lambda c: c.str.split(search)) == ref(data, lambda s: s.split(search))


REGEXES = ["a.c", "[0-9]+", "^é", "😉$", "[A-Z][a-z]*", r"\s+", "x|yz|ü"]


@pytest.mark.parametrize("pattern", REGEXES)
def test_regex_functions_match_python_re(data, pattern):
    rx = re.compile(pattern)
    assert run(data, lambda c: F.regexp(c, pattern)) == ref(data, lambda s: rx.search(s) is not None)
    assert run(data, lambda c: c.str.match(pattern)) == ref(data, lambda s: rx.search(s) is not None)
    assert run(data, lambda c: F.regexp_count(c, pattern)) == ref(data, lambda s: len(rx.findall(s)))
    assert run(data, lambda c: c.regexp_replace(pattern, "<>")) == ref(data, lambda s: rx.sub("<>", s))
    assert run(data, lambda c: c.str.replace(pattern, "<>", regex=True)) == ref(
        data, lambda s: rx.sub("<>", s)
    )
    assert run(data, lambda c: F.regexp_split(c, pattern)) == ref(data, lambda s: rx.split(s))
    assert run(data, lambda c: c.str.split(pattern, regex=True)) == ref(data, lambda s: rx.split(s))


def _group(rx: re.Pattern[str], s: str, i: int) -> str | None:
    m = rx.search(s)
    return None if m is None else m.group(i)


def test_concat_ws_takes_a_null_typed_column_as_nulls():
    # Daft 0.7.26 printed {'j': ['x,y', 'z']} and, for ("1", None) / ("x", None), ['1,x', None].
    df = ketch.from_pydict({"a": [None, None], "b": ["x", None], "c": ["y", "z"]})
    assert df.select(F.concat_ws(",", col("a"), col("b"), col("c")).alias("j")).to_pydict() == {
        "j": ["x,y", "z"]
    }
    assert df.select(F.concat_ws(",", col("a")).alias("j")).to_pydict() == {"j": [None, None]}


@pytest.mark.parametrize(
    "pattern,index", [(r"(\d)(\d*)", 0), (r"(\d)(\d*)", 1), (r"(\d)(\d*)", 2), ("([a-z])[^a-z]+(?:x)", 1)]
)
def test_regexp_extract_matches_python_groups(data, pattern, index):
    rx = re.compile(pattern)
    expected = ref(data, lambda s: _group(rx, s, index))
    assert run(data, lambda c: F.regexp_extract(c, pattern, index)) == expected
    assert run(data, lambda c: c.str.extract(pattern, index)) == expected
    assert run(["123-456", "789-012", "x"], lambda c: c.regexp_extract(r"(\d)(\d*)", 1)) == ["1", "7", None]


def _like(pattern: str, flags: int = 0) -> re.Pattern[str]:
    body = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.compile(body, re.DOTALL | flags)


@pytest.mark.parametrize("pattern", ["a%", "%é%", "_", "%", "A_c%", "%😉"])
def test_like_and_ilike_match_sql_semantics(data, pattern):
    rx, irx = _like(pattern), _like(pattern, re.IGNORECASE)
    assert run(data, lambda c: F.like(c, pattern)) == ref(data, lambda s: rx.fullmatch(s) is not None)
    assert run(data, lambda c: c.str.like(pattern)) == ref(data, lambda s: rx.fullmatch(s) is not None)
    assert run(data, lambda c: F.ilike(c, pattern)) == ref(data, lambda s: irx.fullmatch(s) is not None)
    assert run(data, lambda c: c.ilike(pattern)) == ref(data, lambda s: irx.fullmatch(s) is not None)


def test_count_matches_longest_first_whole_words_and_case():
    values = ["hello world hello", "Hello World", "helloworld", None, ""]
    assert run(values, lambda c: F.count_matches(c, ["hello", "world", "hello world"])) == [2, 0, 2, None, 0]
    assert run(values, lambda c: c.str.count_matches("hello", whole_words=True)) == [2, 0, 0, None, 0]
    assert run(values, lambda c: F.count_matches(c, ["hello"], case_sensitive=False)) == [2, 1, 1, None, 0]


def _normalize(s: str) -> str:
    import unicodedata

    s = re.sub("[" + re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + "]", "", s)
    s = s.lower()
    s = unicodedata.normalize("NFD", s)
    return " ".join(s.split())


def test_normalize_matches_a_python_reference(data):
    values = data + ["HELLO,   \nWORLD!!!!", "Café"]
    expected = ref(values, _normalize)
    options = {"remove_punct": True, "lowercase": True, "nfd_unicode": True, "white_space": True}
    assert run(values, lambda c: F.normalize(c, **options)) == expected
    assert run(values, lambda c: c.str.normalize(**options)) == expected
    assert run(values, lambda c: F.normalize(c)) == values


def test_concat_and_plus_and_format(data, rng):
    other = list(reversed(data))
    df = ketch.from_pydict({"a": data, "b": other})
    expected = [None if x is None or y is None else x + y for x, y in zip(data, other, strict=True)]
    assert df.select((col("a") + col("b")).alias("r")).to_pydict()["r"] == expected
    assert df.select(F.concat(col("a"), col("b")).alias("r")).to_pydict()["r"] == expected
    assert df.select(col("a").str.concat(col("b")).alias("r")).to_pydict()["r"] == expected
    assert df.select((col("a") + "!").alias("r")).to_pydict()["r"] == ref(data, lambda s: s + "!")
    out = df.select(F.format("<{}|{}>", col("a"), "b").alias("r")).to_pydict()["r"]
    assert out == [None if x is None or y is None else f"<{x}|{y}>" for x, y in zip(data, other, strict=True)]
    bins = ketch.from_pydict({"x": [b"\xff", None], "y": [b"\x00", b"a"]})
    assert bins.select(F.concat(col("x"), col("y")).alias("r")).to_pydict()["r"] == [b"\xff\x00", None]


def test_to_date_and_to_datetime_parse_like_strptime(rng):
    days = [
        datetime.date(1970, 1, 1) + datetime.timedelta(days=int(d)) for d in rng.integers(-5000, 30000, 50)
    ]
    days += [datetime.date(2024, 2, 29)]
    strings: list[str | None] = [d.strftime("%Y-%m-%d") for d in days] + [None]
    assert run(strings, lambda c: F.to_date(c, "%Y-%m-%d")) == days + [None]
    assert run(strings, lambda c: c.str.to_date("%Y-%m-%d")) == days + [None]
    stamps = ["2021-03-04 05:06:07", "1999-12-31 23:59:59", None]
    expected = [datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S") if s else None for s in stamps]
    assert run(stamps, lambda c: F.to_datetime(c, "%Y-%m-%d %H:%M:%S")) == expected
    tz = run(stamps, lambda c: c.str.to_datetime("%Y-%m-%d %H:%M:%S", timezone="UTC"))
    assert [t.replace(tzinfo=None) if t else None for t in tz] == expected
    with pytest.raises(KetchValueError, match="to_date.*2021/01/01"):
        run(["2021/01/01"], lambda c: F.to_date(c, "%Y-%m-%d"))


def test_wrong_type_fails_at_plan_time_naming_function_expression_and_type():
    df = ketch.from_pydict({"i": [1, 2]})
    with pytest.raises(KetchTypeError, match=r"lower expects a string, got col\(i\) of type int64"):
        df.select(F.lower(col("i")))
    with pytest.raises(KetchTypeError, match=r"utf8_contains expects a string, got col\(i\) of type int64"):
        df.select(col("i").str.contains("x"))
    with pytest.raises(KetchTypeError, match=r"find expects a string, got col\(i\)"):
        df.select(col("i").find("x"))


def test_invalid_regex_names_the_pattern_at_plan_time():
    df = ketch.from_pydict({"s": ["a"]})
    for build in (
        lambda c: F.regexp(c, "a(b"),
        lambda c: c.str.replace("a(b", "x", regex=True),
        lambda c: F.regexp_split(c, "a(b"),
        lambda c: F.regexp_extract(c, "a(b", 0),
    ):
        with pytest.raises(KetchValueError, match=r"invalid regular expression 'a\(b'"):
            df.select(build(col("s")))


def test_bad_pattern_arguments_are_refused_clearly():
    # column patterns are supported (tests/expressions/test_per_row_patterns.py); other types are not
    with pytest.raises(TypeError, match="contains: substr must be a str"):
        F.contains(col("s"), 3)
    with pytest.raises(TypeError, match="left: nchars must be an int"):
        F.left(col("s"), "3")


def test_concat_ws_skips_nulls_and_is_null_when_all_are(data):
    other = list(reversed(data))
    df = ketch.from_pydict({"a": data, "b": other})
    out = df.select(F.concat_ws("-", col("a"), col("b")).alias("r")).to_pydict()["r"]
    expected = []
    for x, y in zip(data, other, strict=True):
        parts = [p for p in (x, y) if p is not None]
        expected.append("-".join(parts) if parts else None)
    assert out == expected


@pytest.mark.parametrize(
    "pattern,index", [(r"(\d)(\d*)", 0), (r"(\d)(\d*)", 1), (r"(\d)(\d*)", 2), ("[a-zé]+", 0)]
)
def test_regexp_extract_all_matches_python_finditer(data, pattern, index):
    rx = re.compile(pattern)
    values = data + ["123-456 78", "x1y22z", "no digits"]
    expected = ref(values, lambda s: [m.group(index) for m in rx.finditer(s)])
    assert run(values, lambda c: F.regexp_extract_all(c, pattern, index)) == expected
    assert run(values, lambda c: c.str.extract_all(pattern, index)) == expected
    assert run(values, lambda c: c.regexp_extract_all(pattern, index)) == expected
    with pytest.raises(KetchValueError, match=r"invalid regular expression 'a\)\|\(b'"):
        run(["a"], lambda c: F.regexp_extract_all(c, "a)|(b"))


def test_bit_length_and_space(data):
    assert run(data, F.bit_length) == ref(data, lambda s: 8 * len(s.encode()))
    df = ketch.from_pydict({"n": [0, 3, None]})
    assert df.select(F.space(col("n")).alias("r")).to_pydict()["r"] == ["", "   ", None]
