"""SQL function names → Ketch expressions, by a lookup table.

Each entry builds an :class:`~ketch.expressions.Expression` from the translated arguments. Entries
that name an Expression method (``method="str.upper"``) or a free function of ``ketch.functions``
(``function="row_number"``) resolve it when the query is planned, so a function another module
adds later plugs in with one ``register(...)`` line here; until it exists, a query using it raises
InvalidSQLException naming the function and what it needs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ketch.expressions.expression import Expression, lit
from ketch.sql.errors import InvalidSQLException

MISSING: Any = object()


@dataclass(frozen=True)
class Arg:
    """One translated argument: its expression, and its Python value when it is a literal."""

    expr: Expression
    value: Any = MISSING

    def literal(self, function: str, what: str) -> Any:
        if self.value is MISSING:
            raise InvalidSQLException(f"{function}(): {what} must be a literal")
        return self.value


Builder = Callable[[str, list[Arg]], Expression]


@dataclass(frozen=True)
class SQLFunction:
    """How a SQL function becomes an Expression. ``aggregate`` marks aggregations (they go into
    the GROUP BY's agg list); ``window_only`` marks ranking / offset functions (valid only with
    OVER); ``nargs`` is the allowed argument counts (None: any)."""

    name: str
    build: Builder
    aggregate: bool = False
    window_only: bool = False
    nargs: tuple[int, ...] | None = None


FUNCTIONS: dict[str, SQLFunction] = {}


def _resolve_method(target: Expression, path: str, function: str) -> Callable[..., Expression]:
    obj: Any = target
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise InvalidSQLException(
                f"SQL function {function}() is not supported by this build (it needs Expression.{path})"
            )
    return obj


def _resolve_function(name: str, function: str) -> Callable[..., Expression]:
    try:
        module = importlib.import_module("ketch.functions")
    except ImportError:
        module = None
    found = getattr(module, name, None) if module is not None else None
    if found is None:
        raise InvalidSQLException(
            f"SQL function {function}() is not supported by this build (it needs ketch.functions.{name})"
        )
    return found


def register(
    *names: str,
    build: Builder | None = None,
    method: str | None = None,
    function: str | None = None,
    aggregate: bool = False,
    window_only: bool = False,
    nargs: tuple[int, ...] | None = None,
) -> None:
    """Adds SQL function ``names`` (the first is the canonical one, the rest aliases).

    Give exactly one of ``build`` (``(sql_name, args) -> Expression``), ``method`` (an Expression
    method path called on the first argument with the others: ``"str.upper"``) or ``function``
    (a free function of ``ketch.functions`` called with all arguments)."""
    if sum(x is not None for x in (build, method, function)) != 1:
        raise ValueError("register() takes exactly one of build=, method=, function=")
    if method is not None:
        path = method

        def build(sql_name: str, args: list[Arg]) -> Expression:
            bound = _resolve_method(args[0].expr, path, sql_name)
            return bound(*[a.expr for a in args[1:]])

    elif function is not None:
        fname = function

        def build(sql_name: str, args: list[Arg]) -> Expression:
            return _resolve_function(fname, sql_name)(*[a.expr for a in args])

    assert build is not None
    for name in names:
        FUNCTIONS[name.lower()] = SQLFunction(names[0], build, aggregate, window_only, nargs)


def lookup(name: str) -> SQLFunction | None:
    """The entry for SQL function ``name`` (case-insensitive), or None."""
    return FUNCTIONS.get(name.lower())


def _arrow(kernel: str) -> Builder:
    """An Arrow compute kernel that takes no options, applied to all arguments."""
    return lambda _name, args: Expression._call(kernel, *[a.expr for a in args])


def _method_or(path: str, fallback: Builder) -> Builder:
    """``Expression.<path>`` when this build has it, else ``fallback``."""

    def build(sql_name: str, args: list[Arg]) -> Expression:
        obj: Any = args[0].expr
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                return fallback(sql_name, args)
        return obj(*[a.expr if a.value is MISSING else a.value for a in args[1:]])

    return build


# -- scalar functions ---------------------------------------------------------------------------------
def _round(name: str, args: list[Arg]) -> Expression:
    # Half away from zero, as SQL engines and Daft round: sign(x) * floor(|x| * 10^d + 0.5) / 10^d.
    digits = args[1].literal(name, "the number of decimals") if len(args) > 1 else 0
    if not isinstance(digits, int):
        raise InvalidSQLException(f"{name}(): the number of decimals must be an integer, got {digits!r}")
    x = args[0].expr.cast(pa.float64())
    scale = 10.0**digits
    magnitude = Expression._call("floor", abs(x) * scale + 0.5) / scale
    return Expression._call("sign", x) * magnitude


def _log(_name: str, args: list[Arg]) -> Expression:
    # log(x) is base 10 (Postgres, DuckDB); sqlglot gives log(b, x) as (base, value), and
    # log10(x) / log2(x) as log(10, x) / log(2, x).
    if len(args) == 1:
        return Expression._call("log10", args[0].expr)
    base, value = args[0], args[1]
    if base.value in (10, 2):
        return Expression._call("log10" if base.value == 10 else "log2", value.expr)
    return Expression._call("ln", value.expr) / Expression._call("ln", base.expr.cast(pa.float64()))


def _power(_name: str, args: list[Arg]) -> Expression:
    return Expression._call("power", args[0].expr.cast(pa.float64()), args[1].expr.cast(pa.float64()))


def _mod(_name: str, args: list[Arg]) -> Expression:
    a, b = args[0].expr, args[1].expr
    if hasattr(Expression, "__mod__"):
        return a % b  # type: ignore[operator]
    # Remainder with the dividend's sign (truncated division), as SQL's % / mod().
    quotient = Expression._call("trunc", a.cast(pa.float64()) / b.cast(pa.float64()))
    result = a.cast(pa.float64()) - quotient * b.cast(pa.float64())
    return result


def _nullif(_name: str, args: list[Arg]) -> Expression:
    a, b = args[0].expr, args[1].expr
    same = Expression._call("coalesce", a == b, lit(False))
    return same.if_else(lit(None), a)


def _concat(_name: str, args: list[Arg]) -> Expression:
    # SQL's concat() skips nulls (|| does not): each argument's null becomes "".
    parts = [Expression._call("coalesce", a.expr.cast(pa.large_string()), lit("")) for a in args]
    return Expression._call("binary_join_element_wise", *parts, lit(""))


def _trim(kernel: str) -> Builder:
    def build(name: str, args: list[Arg]) -> Expression:
        if len(args) > 1:
            raise InvalidSQLException(f"{name}() with a character set is not supported")
        return Expression._call(kernel, args[0].expr)

    return build


def _like_fallback(case_insensitive: bool) -> Builder:
    def build(name: str, args: list[Arg]) -> Expression:
        from ketch.sql.like import like

        pattern = args[1].literal(name, "the pattern")
        return like(args[0].expr, pattern, case_insensitive)

    return build


register("abs", build=lambda _n, a: abs(a[0].expr), nargs=(1,))
register("ceil", "ceiling", build=_arrow("ceil"), nargs=(1,))
register("floor", build=_arrow("floor"), nargs=(1,))
register("sqrt", build=_arrow("sqrt"), nargs=(1,))
register("exp", build=_arrow("exp"), nargs=(1,))
register("ln", build=_arrow("ln"), nargs=(1,))
register("log10", build=_arrow("log10"), nargs=(1,))
register("log2", build=_arrow("log2"), nargs=(1,))
register("log", build=_log, nargs=(1, 2))
register("sign", "signum", build=_arrow("sign"), nargs=(1,))
register("round", build=_method_or("round", _round), nargs=(1, 2))
register("power", "pow", build=_power, nargs=(2,))
register("mod", build=_mod, nargs=(2,))
register("upper", "ucase", build=_method_or("str.upper", _arrow("utf8_upper")), nargs=(1,))
register("lower", "lcase", build=_method_or("str.lower", _arrow("utf8_lower")), nargs=(1,))
register(
    "length",
    "char_length",
    "character_length",
    build=_method_or("str.length", _arrow("utf8_length")),
    nargs=(1,),
)
register("reverse", build=_method_or("str.reverse", _arrow("utf8_reverse")), nargs=(1,))
register("trim", "btrim", build=_trim("utf8_trim_whitespace"), nargs=(1, 2))
register("ltrim", build=_trim("utf8_ltrim_whitespace"), nargs=(1, 2))
register("rtrim", build=_trim("utf8_rtrim_whitespace"), nargs=(1, 2))
register("concat", build=_concat)
register("coalesce", build=_arrow("coalesce"))
register("nullif", build=_nullif, nargs=(2,))
register("greatest", build=_arrow("max_element_wise"))
register("least", build=_arrow("min_element_wise"))
register("like", build=_method_or("str.like", _like_fallback(False)), nargs=(2,))
register("ilike", build=_method_or("str.ilike", _like_fallback(True)), nargs=(2,))
register("starts_with", "startswith", method="str.startswith", nargs=(2,))
register("ends_with", "endswith", method="str.endswith", nargs=(2,))
register("contains", method="str.contains", nargs=(2,))


def _substring(sql_name: str, args: list[Arg]) -> Expression:
    """SQL SUBSTRING(s, start[, length]): positions count from 1 (as in Daft's SQL, PostgreSQL
    and DuckDB); a start below 1 shortens the length by as much."""
    start = args[1].literal(sql_name, "the start")
    length = args[2].literal(sql_name, "the length") if len(args) > 2 else None
    for value, what in ((start, "start"), (length, "length")):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise InvalidSQLException(f"{sql_name}(): the {what} must be an integer, got {value!r}")
    if start < 1:
        length = None if length is None else max(0, length + start - 1)
        start = 1
    return args[0].expr.str.substr(start - 1, length)  # type: ignore[attr-defined,no-any-return]


# sqlglot parses SUBSTR and SUBSTRING into one node, so both count from 1 here. Deliberate
# difference: Daft's SQL counts SUBSTR's start from 0 (its DataFrame str.substr).
register("substring", "substr", build=_substring, nargs=(2, 3))
register("replace", method="str.replace", nargs=(3,))
register("left", method="str.left", nargs=(2,))
register("right", method="str.right", nargs=(2,))
for _part in ("year", "month", "day", "hour", "minute", "second", "quarter", "day_of_year"):
    register(_part, build=_method_or(f"dt.{_part}", _arrow(_part)), nargs=(1,))
register("day_of_week", "dayofweek", method="dt.day_of_week", nargs=(1,))
register("date", method="dt.date", nargs=(1,))
# String distances, case converters and Spark's string functions (ketch.functions.strings_extra).
register("levenshtein_distance", "levenshtein", function="levenshtein_distance", nargs=(2,))
for _name in (
    "damerau_levenshtein_distance",
    "hamming_distance_str",
    "jaro_similarity",
    "jaro_winkler_similarity",
):
    register(_name, function=_name, nargs=(2,))
for _name in ("camel", "upper_camel", "snake", "upper_snake", "kebab", "upper_kebab", "title"):
    register(f"to_{_name}_case", function=f"to_{_name}_case", nargs=(1,))
register("soundex", function="soundex", nargs=(1,))
register("ascii", function="ascii_func", nargs=(1,))
register("chr", "char", function="chr_func", nargs=(1,))
register("translate", function="translate", nargs=(3,))
register("split_part", function="split_part", nargs=(3,))
register("substring_index", function="substring_index", nargs=(3,))


# -- aggregations ---------------------------------------------------------------------------------------
def _agg(method: str, **options: Any) -> Builder:
    return lambda _name, args: getattr(args[0].expr, method)(**options)


def _count_distinct(name: str, args: list[Arg]) -> Expression:
    x = args[0].expr
    if hasattr(x, "count_distinct"):
        return x.count_distinct()
    return x.approx_count_distinct()  # Ketch computes it exactly


def _string_agg(name: str, args: list[Arg]) -> Expression:
    separator = args[1].literal(name, "the separator") if len(args) > 1 else None
    if separator is not None and not isinstance(separator, str):
        raise InvalidSQLException(f"{name}(): the separator must be a string literal, got {separator!r}")
    return args[0].expr.string_agg(separator or None)


register("sum", build=_agg("sum"), aggregate=True, nargs=(1,))
register("avg", "mean", build=_agg("mean"), aggregate=True, nargs=(1,))
register("min", build=_agg("min"), aggregate=True, nargs=(1,))
register("max", build=_agg("max"), aggregate=True, nargs=(1,))
register("count", build=_agg("count"), aggregate=True, nargs=(1,))
register("count_distinct", build=_count_distinct, aggregate=True, nargs=(1,))
register("stddev", "std", "stddev_samp", build=_agg("stddev", ddof=1), aggregate=True, nargs=(1,))
register("stddev_pop", build=_agg("stddev", ddof=0), aggregate=True, nargs=(1,))
register("any_value", "arbitrary", build=_agg("any_value"), aggregate=True, nargs=(1,))
register("list", "array_agg", "agg_list", build=_agg("agg_list"), aggregate=True, nargs=(1,))
register("string_agg", "agg_concat", "group_concat", build=_string_agg, aggregate=True, nargs=(1, 2))
register(
    "percentile",
    build=lambda n, a: a[0].expr.percentile(a[1].literal(n, "the percentage")),
    aggregate=True,
    nargs=(2,),
)
register("capitalize", function="capitalize", nargs=(1,))
register("array", function="to_list")
register(
    "to_date",
    "str_to_date",
    build=lambda n, a: a[0].expr.str.to_date(a[1].literal(n, "the format")),
    nargs=(2,),
)
register(
    "approx_count_distinct",
    "approx_distinct",
    build=_agg("approx_count_distinct"),
    aggregate=True,
    nargs=(1,),
)
register("product", method="product", aggregate=True, nargs=(1,))
register("bool_and", "logical_and", method="bool_and", aggregate=True, nargs=(1,))
register("bool_or", "logical_or", method="bool_or", aggregate=True, nargs=(1,))
register("var", "var_pop", "variance", "variance_pop", method="var", aggregate=True, nargs=(1,))
register("skew", method="skew", aggregate=True, nargs=(1,))
register("median", method="median", aggregate=True, nargs=(1,))

# -- window-only functions (ranking, offsets) -------------------------------------------------------------
register("row_number", function="row_number", window_only=True, nargs=(0,))
register("rank", function="rank", window_only=True, nargs=(0,))
register("dense_rank", function="dense_rank", window_only=True, nargs=(0,))


def _offset(method: str) -> Builder:
    def build(name: str, args: list[Arg]) -> Expression:
        offset = args[1].literal(name, "the offset") if len(args) > 1 else 1
        default = args[2].expr if len(args) > 2 else None
        bound = _resolve_method(args[0].expr, method, name)
        return bound(offset, default=default) if default is not None else bound(offset)

    return build


register("lag", build=_offset("lag"), window_only=True, nargs=(1, 2, 3))
register("lead", build=_offset("lead"), window_only=True, nargs=(1, 2, 3))
register("first_value", method="first_value", window_only=True, nargs=(1,))
register("last_value", method="last_value", window_only=True, nargs=(1,))


def literal_int(value: Any, what: str, node: Any) -> int:
    """An integer literal (a sqlglot node or a Python int). Raises InvalidSQLException otherwise."""
    from ketch.sql.translate_expr import literal_value

    number = literal_value(value) if not isinstance(value, int) else value
    if not isinstance(number, int) or isinstance(number, bool):
        text = node.sql() if hasattr(node, "sql") else str(node)
        raise InvalidSQLException(f"{what} must be an integer literal, got '{text}'")
    return number
