"""Case converters (Daft: the Rust heck 0.5 crate). Expected values are derived by hand from heck's
documented rules: words are runs of alphanumeric characters; inside a run a boundary falls after
a lowercase character followed by an uppercase one and before the last of several uppercase
characters followed by a lowercase one; characters that are neither keep the case seen before
them. A Python port of those rules checks random strings as well."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pytest

import ketch
import ketch.functions as F
from ketch import col, lit
from ketch.errors import KetchTypeError

NAMES = [
    "to_camel_case",
    "to_upper_camel_case",
    "to_snake_case",
    "to_upper_snake_case",
    "to_kebab_case",
    "to_upper_kebab_case",
    "to_title_case",
]

# input -> outputs in NAMES order
CASES: dict[str, tuple[str, ...]] = {
    "HTTPRequest": (
        "httpRequest",
        "HttpRequest",
        "http_request",
        "HTTP_REQUEST",
        "http-request",
        "HTTP-REQUEST",
        "Http Request",
    ),
    "hello_world": (
        "helloWorld",
        "HelloWorld",
        "hello_world",
        "HELLO_WORLD",
        "hello-world",
        "HELLO-WORLD",
        "Hello World",
    ),
    "  mixed-Case words 2go": (
        "mixedCaseWords2go",
        "MixedCaseWords2go",
        "mixed_case_words_2go",
        "MIXED_CASE_WORDS_2GO",
        "mixed-case-words-2go",
        "MIXED-CASE-WORDS-2GO",
        "Mixed Case Words 2go",
    ),
    "XMLHttpRequest": (
        "xmlHttpRequest",
        "XmlHttpRequest",
        "xml_http_request",
        "XML_HTTP_REQUEST",
        "xml-http-request",
        "XML-HTTP-REQUEST",
        "Xml Http Request",
    ),
    "MixedUP CamelCase, with some Spaces": (
        "mixedUpCamelCaseWithSomeSpaces",
        "MixedUpCamelCaseWithSomeSpaces",
        "mixed_up_camel_case_with_some_spaces",
        "MIXED_UP_CAMEL_CASE_WITH_SOME_SPACES",
        "mixed-up-camel-case-with-some-spaces",
        "MIXED-UP-CAMEL-CASE-WITH-SOME-SPACES",
        "Mixed Up Camel Case With Some Spaces",
    ),
    "v2Api__x": ("v2ApiX", "V2ApiX", "v2_api_x", "V2_API_X", "v2-api-x", "V2-API-X", "V2 Api X"),
    "abc123DEf456": (
        "abc123DEf456",
        "Abc123DEf456",
        "abc123_d_ef456",
        "ABC123_D_EF456",
        "abc123-d-ef456",
        "ABC123-D-EF456",
        "Abc123 D Ef456",
    ),
    "ABC123dEEf456FOO": (
        "abc123dEEf456Foo",
        "Abc123dEEf456Foo",
        "abc123d_e_ef456_foo",
        "ABC123D_E_EF456_FOO",
        "abc123d-e-ef456-foo",
        "ABC123D-E-EF456-FOO",
        "Abc123d E Ef456 Foo",
    ),
    # Full case mappings: ß uppercases to SS, ﬄ to FFL; a word-final Σ lowercases to ς.
    "straße ΣΑΣ baﬄe": (
        "straßeΣαςBaﬄe",
        "StraßeΣαςBaﬄe",
        "straße_σας_baﬄe",
        "STRASSE_ΣΑΣ_BAFFLE",
        "straße-σας-baﬄe",
        "STRASSE-ΣΑΣ-BAFFLE",
        "Straße Σας Baﬄe",
    ),
    "": ("", "", "", "", "", "", ""),
    " -_ ": ("", "", "", "", "", "", ""),
}


def functions(name: str) -> tuple[Callable[[ketch.Expression], ketch.Expression], ...]:
    return (getattr(F, name), lambda c: getattr(c, name)())


@pytest.mark.parametrize("index", range(len(NAMES)), ids=NAMES)
def test_hand_derived_examples(index: int) -> None:
    name = NAMES[index]
    inputs = [*CASES, None]
    df = ketch.from_pydict({"s": inputs})
    free, method = functions(name)
    out = df.select(free(col("s")).alias("f"), method(col("s")).alias("m")).to_pydict()
    want = [CASES[s][index] for s in CASES] + [None]
    assert out["f"] == want
    assert out["m"] == want


# --- a port of heck 0.5's rules, for random strings ----------------------------------------------
# Over an alphabet where Python's str predicates agree with Rust's char ones.
ALPHABET = list("abXY9 _-.") + ["é", "É", "ß", "Σ", "中", "1"]


def words(s: str) -> list[str]:
    out: list[str] = []
    piece = ""
    for ch in s + " ":
        if ch.isalnum():
            piece += ch
            continue
        # split one piece by the case rules
        start, mode = 0, None
        for i, c in enumerate(piece):
            if i + 1 == len(piece):
                out.append(piece[start:])
                break
            nxt = piece[i + 1]
            cur_mode = "l" if c.islower() else "u" if c.isupper() else mode
            if cur_mode == "l" and nxt.isupper():
                out.append(piece[start : i + 1])
                start, mode = i + 1, None
            elif mode == "u" and c.isupper() and nxt.islower():
                out.append(piece[start:i])
                start, mode = i, None
            else:
                mode = cur_mode
        piece = ""
    return out


def lower(w: str) -> str:
    # Character by character: Python's str.lower applies the Final_Sigma context rule inside a
    # string, heck only to a word's last character.
    return "".join("ς" if c == "Σ" and i == len(w) - 1 else c.lower() for i, c in enumerate(w))


def cap(w: str) -> str:
    return w[:1].upper() + lower(w[1:])


REFERENCE: dict[str, Callable[[str], str]] = {
    "to_camel_case": lambda s: "".join(lower(w) if i == 0 else cap(w) for i, w in enumerate(words(s))),
    "to_upper_camel_case": lambda s: "".join(cap(w) for w in words(s)),
    "to_snake_case": lambda s: "_".join(lower(w) for w in words(s)),
    "to_upper_snake_case": lambda s: "_".join(w.upper() for w in words(s)),
    "to_kebab_case": lambda s: "-".join(lower(w) for w in words(s)),
    "to_upper_kebab_case": lambda s: "-".join(w.upper() for w in words(s)),
    "to_title_case": lambda s: " ".join(cap(w) for w in words(s)),
}


def test_port_of_rules_agrees_with_hand_examples() -> None:
    for s, outs in CASES.items():
        assert tuple(REFERENCE[n](s) for n in NAMES) == outs, s


@pytest.mark.parametrize("name", NAMES)
def test_random_strings(name: str, rng: np.random.Generator) -> None:
    values: list[str | None] = []
    for _ in range(300):
        k = int(rng.integers(0, 12))
        values.append("".join(ALPHABET[int(i)] for i in rng.integers(0, len(ALPHABET), k)))
    values[::17] = [None] * len(values[::17])
    table = pa.table({"s": pa.array(values, pa.large_string())})
    out = ketch.from_arrow(table).select(getattr(F, name)(col("s")).alias("r"))
    assert out.schema()["r"].dtype.to_arrow() == pa.large_string()
    assert out.to_pydict()["r"] == [None if v is None else REFERENCE[name](v) for v in values]


def test_literal_and_type_error() -> None:
    df = ketch.from_pydict({"i": [1, 2]})
    assert df.select(F.to_snake_case(lit("HelloWorld")).alias("s")).to_pydict()["s"] == ["hello_world"] * 2
    with pytest.raises(KetchTypeError, match=r"to_snake_case expects a string as its first argument"):
        df.select(col("i").to_snake_case()).collect()
