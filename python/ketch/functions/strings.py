"""String functions in Daft's free-function spelling (``ketch.functions.lower(col("s"))``); the
``.str`` namespace and the flat Expression methods call these. Every function takes a string column
(a KetchTypeError at plan time names the function, the expression and the type otherwise), keeps
nulls as nulls and counts characters in Unicode code points. Patterns, lengths and counts are
literals; a regex is RE2 syntax and an invalid one raises KetchValueError naming it at plan time."""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

from ketch.expressions.expression import Expression, _expr, lit
from ketch.functions._args import literal_int, literal_str, option_call


def contains(expr: Expression, substr: str | Expression) -> Expression:
    """Bool: whether each string contains ``substr`` (plain text, case sensitive; a str, or a string
    column giving each row its own)."""
    return option_call("utf8_contains", expr, "pattern", substr, "substr", "contains", str)


def startswith(expr: Expression, prefix: str | Expression) -> Expression:
    """Bool: whether each string starts with ``prefix`` (a str or a string column)."""
    return option_call("starts_with", expr, "pattern", prefix, "prefix", "startswith", str)


def endswith(expr: Expression, suffix: str | Expression) -> Expression:
    """Bool: whether each string ends with ``suffix`` (a str or a string column)."""
    return option_call("ends_with", expr, "pattern", suffix, "suffix", "endswith", str)


def regexp(expr: Expression, pattern: str | Expression) -> Expression:
    """Bool: whether the regex ``pattern`` (a str, or a string column: one compile per distinct
    pattern) matches anywhere in each string."""
    return option_call("regexp_match", expr, "pattern", pattern, "pattern", "regexp", str)


def regexp_count(expr: Expression, pattern: str | Expression) -> Expression:
    """UInt64: the number of non-overlapping matches of the regex ``pattern`` (a str or a string
    column)."""
    return option_call("regexp_count", expr, "pattern", pattern, "pattern", "regexp_count", str)


def regexp_extract(expr: Expression, pattern: str | Expression, index: int = 0) -> Expression:
    """String: group ``index`` (0: the whole match) of the first match of ``pattern`` (a str or a
    string column); null when nothing matches or when group ``index`` takes no part in the match
    (``(a)?b`` on ``"b"``). An ``index`` above the pattern's group count fails
    at plan time (at run time for a pattern column)."""
    group = literal_int(index, "index", "regexp_extract")
    return option_call(
        "regexp_extract", expr, "pattern", pattern, "pattern", "regexp_extract", str, index=group
    )


def regexp_extract_all(expr: Expression, pattern: str | Expression, index: int = 0) -> Expression:
    """List[LargeString]: group ``index`` (0: the whole match) of every non-overlapping match of
    ``pattern`` (a str, or a string column: one pass, each distinct pattern compiled once), left
    to right; an empty list when nothing matches, null for null. A match in which group ``index``
    takes no part adds no item (as in Daft: ``(a)?b`` on ``"ab b"`` gives ``["a"]``). An
    ``index`` above the pattern's group count fails at plan time (at run time for a pattern
    column). Matches follow RE2's (and Rust's) iteration: an empty match right
    after the previous match is skipped."""
    group = literal_int(index, "index", "regexp_extract_all")
    if group < 0:
        raise ValueError(f"regexp_extract_all: index must be >= 0, got {group}")
    return option_call(
        "regexp_extract_all", expr, "pattern", pattern, "pattern", "regexp_extract_all", str, index=group
    )


def regexp_replace(expr: Expression, pattern: str | Expression, replacement: str | Expression) -> Expression:
    """String: every match of the regex ``pattern`` replaced by ``replacement`` (RE2: ``\\1``
    names group 1). Either (not both) may be a string column giving each row its own."""
    return _replace_call("regexp_replace", expr, pattern, "pattern", replacement)


def regexp_split(expr: Expression, pattern: str | Expression) -> Expression:
    """List[String]: each string split on matches of the regex ``pattern`` (a str or a string column)."""
    return option_call("regexp_split", expr, "pattern", pattern, "pattern", "regexp_split", str)


def _replace_call(function: str, expr: Expression, search: Any, what: str, replacement: Any) -> Expression:
    if isinstance(replacement, Expression) and not isinstance(search, Expression):
        pattern = literal_str(search, what, function)
        return option_call(
            function, expr, "replacement", replacement, "replacement", function, str, pattern=pattern
        )
    if isinstance(search, Expression):
        if isinstance(replacement, Expression):
            return option_call(
                function, expr, "pattern", search, what, function, str, replacement=replacement
            )
        fixed = literal_str(replacement, "replacement", function)
        return option_call(function, expr, "pattern", search, what, function, str, replacement=fixed)
    return Expression._call(
        function,
        expr,
        pattern=literal_str(search, what, function),
        replacement=literal_str(replacement, "replacement", function),
    )


def replace(expr: Expression, search: str | Expression, replacement: str | Expression) -> Expression:
    """String: every occurrence of the plain text ``search`` replaced by ``replacement``. Either
    (not both) may be a string column giving each row its own."""
    return _replace_call("replace", expr, search, "search", replacement)


def split(expr: Expression, split_on: str | Expression) -> Expression:
    """List[String]: each string split on the plain text ``split_on`` (not empty; a str or a string
    column)."""
    return option_call("split", expr, "pattern", split_on, "split_on", "split", str)


def lower(expr: Expression) -> Expression:
    """String: Unicode lowercase."""
    return Expression._call("lower", expr)


def upper(expr: Expression) -> Expression:
    """String: Unicode uppercase."""
    return Expression._call("upper", expr)


def capitalize(expr: Expression) -> Expression:
    """String: the first character uppercased, the rest lowercased."""
    return Expression._call("capitalize", expr)


def reverse(expr: Expression) -> Expression:
    """String: the code points in reverse order."""
    return Expression._call("reverse", expr)


def lstrip(expr: Expression) -> Expression:
    """String: leading Unicode whitespace removed."""
    return Expression._call("lstrip", expr)


def rstrip(expr: Expression) -> Expression:
    """String: trailing Unicode whitespace removed."""
    return Expression._call("rstrip", expr)


def strip(expr: Expression) -> Expression:
    """String: leading and trailing Unicode whitespace removed."""
    return Expression._call("strip", expr)


def length(expr: Expression) -> Expression:
    """UInt64: characters of a string, bytes of a binary, elements of a list."""
    return Expression._call("length", expr)


def length_bytes(expr: Expression) -> Expression:
    """UInt64: the length of each string in UTF-8 bytes."""
    return Expression._call("length_bytes", expr)


def left(expr: Expression, nchars: int | Expression) -> Expression:
    """String: the first ``nchars`` (>= 0; an int or an integer column) characters."""
    return option_call("left", expr, "n", nchars, "nchars", "left", int)


def right(expr: Expression, nchars: int | Expression) -> Expression:
    """String: the last ``nchars`` (>= 0; an int or an integer column) characters."""
    return option_call("right", expr, "n", nchars, "nchars", "right", int)


def substr(expr: Expression, start: int, length: int | None = None) -> Expression:
    """String: ``length`` characters (all remaining when None) from character ``start`` (>= 0);
    null where that is empty (``start`` past the end, ``length`` 0, an empty string), as in Daft."""
    n = -1 if length is None else literal_int(length, "length", "substr")
    out = Expression._call("substr", expr, start=literal_int(start, "start", "substr"), length=n)
    return (out == "").if_else(lit(None), out)


def lpad(expr: Expression, length: int, pad: str) -> Expression:
    """String of exactly ``length`` characters: truncated on the right when longer, else
    left-padded with the single character ``pad``."""
    return Expression._call(
        "lpad", expr, length=literal_int(length, "length", "lpad"), pad=literal_str(pad, "pad", "lpad")
    )


def rpad(expr: Expression, length: int, pad: str) -> Expression:
    """String of exactly ``length`` characters: truncated when longer, else right-padded with
    the single character ``pad``."""
    return Expression._call(
        "rpad", expr, length=literal_int(length, "length", "rpad"), pad=literal_str(pad, "pad", "rpad")
    )


def repeat(expr: Expression, n: int | Expression) -> Expression:
    """String: each string repeated ``n`` times (an int or an integer column)."""
    return Expression._call("binary_repeat", expr, n)


def like(expr: Expression, pattern: str | Expression) -> Expression:
    """Bool: SQL LIKE (``%`` any run, ``_`` one character), case sensitive (a str or a string column)."""
    return option_call("like", expr, "pattern", pattern, "pattern", "like", str)


def ilike(expr: Expression, pattern: str | Expression) -> Expression:
    """Bool: SQL ILIKE (``%`` any run, ``_`` one character), case insensitive (a str or a string
    column)."""
    return option_call("ilike", expr, "pattern", pattern, "pattern", "ilike", str)


def find(expr: Expression, substr: str | Expression) -> Expression:
    """Int64: the character index of the first occurrence of ``substr`` (a str or a string column),
    -1 when absent. Daft 0.7.26 returns a byte offset instead (they differ after a non-ASCII
    character: ``"ÄbC"`` finds ``"C"`` at 2 here, at 3 in Daft)."""
    return option_call("find", expr, "substr", substr, "substr", "find", str)


_ASCII_PUNCTUATION = "[" + re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + "]"


def normalize(
    expr: Expression,
    *,
    remove_punct: bool = False,
    lowercase: bool = False,
    nfd_unicode: bool = False,
    white_space: bool = False,
) -> Expression:
    """String, in this order: ASCII punctuation removed, lowercased, Unicode NFD, whitespace runs
    collapsed to one space and the ends stripped (each step only when asked)."""
    out = expr
    if remove_punct:
        out = Expression._call("regexp_replace", out, pattern=_ASCII_PUNCTUATION, replacement="")
    if lowercase:
        out = Expression._call("lower", out)
    if nfd_unicode:
        out = Expression._call("normalize_nfd", out)
    if white_space:
        out = Expression._call("regexp_replace", out, pattern=r"\s+", replacement=" ")
        out = Expression._call("strip", out)
    if out is expr:  # no step: the identity, still type-checked at plan time
        out = Expression._call("substr", expr, start=0, length=-1)
    return out


def count_matches(
    expr: Expression, patterns: Any, *, whole_words: bool = False, case_sensitive: bool = True
) -> Expression:
    """UInt64: how many times any of ``patterns`` (a str or a list of str, plain text) occurs,
    non-overlapping, longer patterns first where they overlap; ``whole_words`` counts only matches
    bounded by non-word characters; ``case_sensitive=False`` ignores case."""
    if isinstance(patterns, str):
        patterns = [patterns]
    if hasattr(patterns, "to_pylist"):
        patterns = patterns.to_pylist()
    if not isinstance(patterns, list | tuple) or not patterns:
        raise TypeError(f"count_matches: patterns must be a str or a non-empty list of str, got {patterns!r}")
    words = [literal_str(p, "patterns", "count_matches") for p in patterns]
    alternation = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    regex = rf"\b(?:{alternation})\b" if whole_words else f"(?:{alternation})"
    return Expression._call("regexp_count", expr, pattern=regex, ignore_case=not case_sensitive)


def to_date(expr: Expression, format: str) -> Expression:
    """Date: each string parsed with the strptime ``format`` (e.g. ``"%Y-%m-%d"``); a string that
    does not parse raises KetchValueError naming it."""
    return Expression._call("to_date", expr, format=literal_str(format, "format", "to_date"))


def to_datetime(expr: Expression, format: str, timezone: str | None = None) -> Expression:
    """Timestamp[us]: each string parsed with the strptime ``format``; with ``timezone`` the
    parsed wall time is read in that zone (timestamp[us, timezone]); ``%z`` in the format gives
    timestamp[us, UTC]."""
    fmt = literal_str(format, "format", "to_datetime")
    if timezone is None:
        return Expression._call("to_datetime", expr, format=fmt)
    return Expression._call(
        "to_datetime_tz", expr, format=fmt, timezone=literal_str(timezone, "timezone", "to_datetime")
    )


def concat(left: Expression | str | bytes, right: Expression | str | bytes) -> Expression:
    """String (or binary): ``left`` followed by ``right``; null when either is null. Same as ``+``."""
    return Expression._call("add_checked", _expr(left), _expr(right))


def format(f_string: str, *args: Expression | str) -> Expression:
    """String: ``f_string`` with each ``{}`` replaced by the next argument (a str names a column)."""
    from ketch.expressions.expression import col

    if f_string.count("{}") != len(args):
        raise ValueError(
            f"Format string {f_string} has {f_string.count('{}')} placeholders but {len(args)} arguments "
            "were provided"
        )
    parts = f_string.split("{}")
    exprs: list[Expression] = []
    for part, arg in zip(parts, args, strict=False):
        if part:
            exprs.append(lit(part))
        exprs.append(col(arg) if isinstance(arg, str) else arg)
    if parts[-1]:
        exprs.append(lit(parts[-1]))
    if not exprs:
        return lit("")
    out = exprs[0]
    for e in exprs[1:]:
        out = concat(out, e)
    return out


__all__ = [
    "capitalize",
    "concat",
    "contains",
    "count_matches",
    "endswith",
    "find",
    "format",
    "ilike",
    "left",
    "length",
    "length_bytes",
    "like",
    "lower",
    "lpad",
    "lstrip",
    "normalize",
    "regexp",
    "regexp_count",
    "regexp_extract",
    "regexp_replace",
    "regexp_split",
    "repeat",
    "replace",
    "reverse",
    "right",
    "rpad",
    "rstrip",
    "split",
    "startswith",
    "strip",
    "substr",
    "to_date",
    "to_datetime",
    "upper",
]


def concat_ws(sep: str, *exprs: Expression) -> Expression:
    """String: the non-null values of ``exprs`` joined by ``sep``; null when all are null. A
    Null-typed column counts as nulls (as in Daft); other non-string columns are cast to text, where
    Daft raises a TypeError. Named as its first input (``literal`` for a literal), as in Daft."""
    if not exprs:
        raise ValueError("concat_ws needs at least one expression")
    separator = lit(literal_str(sep, "sep", "concat_ws"))

    # A Null-typed input (a column of only None) counts as a string column of nulls, as in Daft.
    # The cast also turns numbers into text, where Daft raises a TypeError (a deliberate leniency).
    def as_text(e: Expression) -> Expression:
        return _expr(e).cast(pa.large_string())

    # Folded from concat and if_else: Arrow's join with null_handling=SKIP drops all-null rows.
    first = _expr(exprs[0])
    out = as_text(first)
    for e in exprs[1:]:
        nxt = as_text(e)
        joined = concat(concat(out, separator), nxt)
        out = Expression._call(
            "if_else", out.is_null(), nxt, Expression._call("if_else", nxt.is_null(), out, joined)
        )
    return out.alias(first.name())  # named as its first input, as in Daft


def bit_length(expr: Expression) -> Expression:
    """UInt64: the length of each string in bits (8 per UTF-8 byte)."""
    return Expression._call("multiply", length_bytes(expr), lit(8).cast(pa.uint64()))


def space(n: int | Expression) -> Expression:
    """String of ``n`` spaces (an int or an integer column; null for null)."""
    return Expression._call("binary_repeat", lit(" "), _expr(n))


__all__ += ["bit_length", "concat_ws", "regexp_extract_all", "space"]
