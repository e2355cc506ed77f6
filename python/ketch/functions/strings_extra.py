"""Daft's string distances, case converters and Spark-compatible string functions, as free
functions (``ketch.functions.levenshtein_distance(col("a"), col("b"))``) and, through
:class:`ketch.expressions.string_extra_methods.StringExtraMethods`, as Expression methods
(``col("a").levenshtein_distance(col("b"))``).

Every argument may be a column or a literal (a Python str or int becomes a literal); characters
are Unicode code points, not bytes; a null argument gives null. A non-string argument fails at plan
time with a KetchTypeError naming the function, the argument and its type. The kernels are native
(``cpp/ketch/functions/string/string_distance.cc``, ``string_case.cc``, ``string_misc.cc``)."""

from __future__ import annotations

from typing import Any

from ketch.expressions.expression import Expression, _expr


def _call(function: str, *args: Any) -> Expression:
    return Expression._call(function, *(_expr(a) for a in args))


# --- distances and similarities ------------------------------------------------------------------


def levenshtein_distance(left: Expression | str, right: Expression | str) -> Expression:
    """Int64: the Levenshtein distance, the fewest single-character insertions, deletions and
    substitutions that turn ``left`` into ``right`` (Wagner–Fischer dynamic programming)."""
    return _call("levenshtein_distance", left, right)


def damerau_levenshtein_distance(left: Expression | str, right: Expression | str) -> Expression:
    """Int64: the Damerau–Levenshtein distance in its optimal string alignment (OSA) variant, as
    Daft: a transposition of two adjacent characters also counts as one edit, but no substring is
    edited twice (``"CA"`` → ``"ABC"`` is 3 under OSA, 2 under the unrestricted distance)."""
    return _call("damerau_levenshtein_distance", left, right)


def hamming_distance_str(left: Expression | str, right: Expression | str) -> Expression:
    """Int64: the number of positions whose characters differ; null when the two strings have
    different lengths (in characters)."""
    return _call("hamming_distance_str", left, right)


def jaro_similarity(left: Expression | str, right: Expression | str) -> Expression:
    """Float64 in [0, 1]: the Jaro similarity (Jaro 1989): characters match within
    ``max(len) // 2 - 1`` positions, half the out-of-order matches count as transpositions;
    ``(m/|a| + m/|b| + (m - t)/m) / 3``. Two empty strings give 1.0, one empty string 0.0."""
    return _call("jaro_similarity", left, right)


def jaro_winkler_similarity(left: Expression | str, right: Expression | str) -> Expression:
    """Float64 in [0, 1]: the Jaro–Winkler similarity (Winkler 1990), ``jaro + l * 0.1 * (1 -
    jaro)`` with ``l`` the common prefix length up to 4 characters; as Daft, the prefix bonus
    applies at every Jaro value (no 0.7 threshold)."""
    return _call("jaro_winkler_similarity", left, right)


# --- case converters (Daft uses the Rust heck crate; its rules) --------------------------------


def to_camel_case(expr: Expression) -> Expression:
    """String in lowerCamelCase. Words are the runs of alphanumeric characters, further split
    after a lowercase character followed by an uppercase one and before the last of several
    uppercase characters followed by a lowercase one (``"HTTPRequest"`` → HTTP, Request); other
    characters only separate words. Unicode full case mappings."""
    return _call("to_camel_case", expr)


def to_upper_camel_case(expr: Expression) -> Expression:
    """String in UpperCamelCase (PascalCase); words as :func:`to_camel_case`."""
    return _call("to_upper_camel_case", expr)


def to_snake_case(expr: Expression) -> Expression:
    """String in snake_case; words as :func:`to_camel_case`."""
    return _call("to_snake_case", expr)


def to_upper_snake_case(expr: Expression) -> Expression:
    """String in UPPER_SNAKE_CASE; words as :func:`to_camel_case`."""
    return _call("to_upper_snake_case", expr)


def to_kebab_case(expr: Expression) -> Expression:
    """String in kebab-case; words as :func:`to_camel_case`."""
    return _call("to_kebab_case", expr)


def to_upper_kebab_case(expr: Expression) -> Expression:
    """String in UPPER-KEBAB-CASE; words as :func:`to_camel_case`."""
    return _call("to_upper_kebab_case", expr)


def to_title_case(expr: Expression) -> Expression:
    """String in Title Case: each word capitalized (first character uppercased, the rest
    lowercased), words joined by one space; words as :func:`to_camel_case`."""
    return _call("to_title_case", expr)


# --- Spark-compatible functions ------------------------------------------------------------------


def soundex(expr: Expression) -> Expression:
    """String: the 4-character American Soundex code (``"Robert"`` → ``"R163"``), as Spark: a
    string that does not start with an ASCII letter comes back unchanged, ``""`` gives ``""``,
    non-letters inside separate like vowels."""
    return _call("soundex", expr)


def ascii_func(expr: Expression) -> Expression:
    """Int32: the first UTF-8 byte of each string as a signed byte, as Daft 0.7.26 (``"A"`` → 65,
    ``"é"`` → -61, ``"€"`` → -30); 0 for ``""``. Spark (4.x) differs for a non-ASCII first
    character: it returns the code point (``"é"`` → 233); the two agree on ASCII. (Named
    ``ascii_func`` so it does not shadow Python's ``ascii``; the Expression method is
    ``ascii()``.)"""
    return _call("ascii", expr)


def chr_func(expr: Expression | int) -> Expression:
    """String: the Latin-1 character of ``n % 256`` for each integer ``n``, as Spark and Daft
    (``65`` → ``"A"``, ``322`` → ``"B"``); ``""`` for a negative ``n``. (Named ``chr_func`` so it does
    not shadow Python's ``chr``.)"""
    return _call("chr", expr)


def translate(expr: Expression, from_str: Expression | str, to_str: Expression | str) -> Expression:
    """String: each character found in ``from_str`` replaced by the character at the same
    position of ``to_str``, or removed when ``to_str`` is shorter; the first occurrence in
    ``from_str`` wins (SQL / Spark ``translate``)."""
    return _call("translate", expr, from_str, to_str)


def split_part(expr: Expression, delim: Expression | str, part: Expression | int) -> Expression:
    """String: the ``part``-th piece (1-based; negative counts from the end) of each string split
    on ``delim``; ``""`` when out of range; an empty delimiter does not split. ``part`` 0
    raises ValueError (KetchValueError when it comes from a column)."""
    if isinstance(part, int) and not isinstance(part, bool) and part == 0:
        raise ValueError("split_part: part must not be 0 (parts count from 1, or from -1 at the end)")
    return _call("split_part", expr, delim, part)


def substring_index(expr: Expression, delim: Expression | str, count: Expression | int) -> Expression:
    """String: everything before the ``count``-th occurrence of ``delim`` from the left
    (``count`` > 0) or after the ``count``-th from the right (``count`` < 0); the whole string
    when there are fewer occurrences; ``""`` for ``count`` 0 or an empty delimiter (Spark / MySQL
    ``substring_index``)."""
    return _call("substring_index", expr, delim, count)


__all__ = [
    "ascii_func",
    "chr_func",
    "damerau_levenshtein_distance",
    "hamming_distance_str",
    "jaro_similarity",
    "jaro_winkler_similarity",
    "levenshtein_distance",
    "soundex",
    "split_part",
    "substring_index",
    "to_camel_case",
    "to_kebab_case",
    "to_snake_case",
    "to_title_case",
    "to_upper_camel_case",
    "to_upper_kebab_case",
    "to_upper_snake_case",
    "translate",
]
