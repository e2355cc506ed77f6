"""Numeric functions in Daft's free-function spelling (``ketch.functions.sqrt(col("x"))``); the
flat Expression methods and operators call these. Arguments are numeric columns (a KetchTypeError
at plan time names the function, the expression and the type otherwise); nulls stay null.
Integer arithmetic is checked: overflow and integer division by zero raise KetchValueError naming
the function and the row instead of wrapping."""

from __future__ import annotations

import math as _math
from typing import Any

import pyarrow as pa

from ketch.expressions.expression import Expression, _expr, lit
from ketch.functions._args import literal_int


def abs(expr: Expression) -> Expression:
    """Absolute value, same type (overflow of the most negative int raises)."""
    return Expression._call("abs_checked", expr)


def negate(expr: Expression) -> Expression:
    """``-x``, same type (checked)."""
    return Expression._call("negate_checked", expr)


def sign(expr: Expression) -> Expression:
    """-1, 0 or 1 (floats: -1.0, 0.0, 1.0, NaN stays NaN); int8 for integer input. Differs from
    Daft 0.7.26 at float zero: Daft (Rust's ``signum``) gives 1.0 for 0.0 and -1.0 for -0.0."""
    return Expression._call("sign", expr)


def ceil(expr: Expression) -> Expression:
    """Smallest integral value >= x (float types; integers are returned as float64)."""
    return Expression._call("ceil", expr)


def floor(expr: Expression) -> Expression:
    """Largest integral value <= x (float types; integers are returned as float64)."""
    return Expression._call("floor", expr)


def round(expr: Expression, decimals: int = 0) -> Expression:
    """x rounded to ``decimals`` places, halves away from zero (Daft's rounding)."""
    return Expression._call("round", expr, decimals=literal_int(decimals, "decimals", "round"))


def clip(expr: Expression, min: Any = None, max: Any = None) -> Expression:
    """x limited to [min, max]; a None bound (or a null in a bound column) clips nothing on that
    side; null x stays null, NaN stays NaN (as in Daft; Arrow's element-wise max would give the
    bound)."""
    out = expr
    if min is not None:
        out = Expression._call("clip_lower", out, _expr(min).fill_null(out))
    if max is not None:
        out = Expression._call("clip_upper", out, _expr(max).fill_null(out))
    if min is None and max is None:
        out = Expression._call("clip_lower", out, out)
    return Expression._call("if_else", _expr(expr).is_nan(), expr, out)


def sqrt(expr: Expression) -> Expression:
    """Float64 square root (NaN for negatives)."""
    return Expression._call("sqrt", expr)


def cbrt(expr: Expression) -> Expression:
    """Float64 cube root (negative for negatives)."""
    x = _expr(expr).cast(pa.float64())
    root = Expression._call("power", Expression._call("abs", x), lit(1.0 / 3.0))
    return Expression._call("multiply", Expression._call("sign", x), root)


def exp(expr: Expression) -> Expression:
    """e ** x (float64)."""
    return Expression._call("exp", expr)


def expm1(expr: Expression) -> Expression:
    """e ** x - 1, accurate near 0 (float64)."""
    return Expression._call("expm1", expr)


def ln(expr: Expression) -> Expression:
    """Natural logarithm (float64; -inf at 0, NaN below)."""
    return Expression._call("ln", expr)


def log2(expr: Expression) -> Expression:
    """Base-2 logarithm (float64)."""
    return Expression._call("log2", expr)


def log10(expr: Expression) -> Expression:
    """Base-10 logarithm (float64)."""
    return Expression._call("log10", expr)


def log1p(expr: Expression) -> Expression:
    """ln(1 + x), accurate near 0 (float64)."""
    return Expression._call("log1p", expr)


def log(expr: Expression, base: float = _math.e) -> Expression:
    """Logarithm in ``base`` (float64)."""
    if base == _math.e:
        return ln(expr)
    return Expression._call("logb", _expr(expr).cast(pa.float64()), lit(float(base)))


def _unary(arrow_name: str) -> Any:
    def apply(expr: Expression) -> Expression:
        return Expression._call(arrow_name, expr)

    return apply


sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
arcsin = _unary("asin")
arccos = _unary("acos")
arctan = _unary("atan")
sinh = _unary("sinh")
cosh = _unary("cosh")
tanh = _unary("tanh")
arcsinh = _unary("asinh")
arccosh = _unary("acosh")
arctanh = _unary("atanh")
for _f, _doc in [
    (sin, "sine"),
    (cos, "cosine"),
    (tan, "tangent"),
    (arcsin, "arc sine"),
    (arccos, "arc cosine"),
    (arctan, "arc tangent"),
    (sinh, "hyperbolic sine"),
    (cosh, "hyperbolic cosine"),
    (tanh, "hyperbolic tangent"),
    (arcsinh, "inverse hyperbolic sine"),
    (arccosh, "inverse hyperbolic cosine"),
    (arctanh, "inverse hyperbolic tangent"),
]:
    _f.__doc__ = f"The elementwise {_doc}, in radians (float64)."


def csc(expr: Expression) -> Expression:
    """1 / sin(x) (float64)."""
    return lit(1.0) / sin(expr)


def sec(expr: Expression) -> Expression:
    """1 / cos(x) (float64)."""
    return lit(1.0) / cos(expr)


def cot(expr: Expression) -> Expression:
    """1 / tan(x) (float64)."""
    return lit(1.0) / tan(expr)


def arctan2(y: Expression, x: Expression) -> Expression:
    """The four-quadrant arc tangent of (y, x), radians in [-pi, pi] (float64)."""
    return Expression._call("atan2", _expr(y).cast(pa.float64()), _expr(x).cast(pa.float64()))


def radians(expr: Expression) -> Expression:
    """Degrees → radians (float64)."""
    return Expression._call("multiply", _expr(expr).cast(pa.float64()), lit(_math.pi / 180.0))


def degrees(expr: Expression) -> Expression:
    """Radians → degrees (float64)."""
    return Expression._call("multiply", _expr(expr).cast(pa.float64()), lit(180.0 / _math.pi))


def pow(base: Expression, expr: Any) -> Expression:
    """base ** expr; integers stay integers (checked: overflow and negative exponents raise)."""
    return Expression._call("power_checked", _expr(base), _expr(expr))


power = pow


def pmod(a: Any, b: Any) -> Expression:
    """The positive modulo ``((a % b) + b) % b``: the sign of ``b`` (``pmod(-7, 3) == 2``)."""
    return modulo(modulo(a, b) + _expr(b), b)


def modulo(a: Any, b: Any) -> Expression:
    """``a % b``: the truncated remainder, with the sign of ``a`` (Daft/Rust and C semantics,
    ``-7 % 3 == -1``); floats by fmod. Integer ``b == 0`` raises KetchValueError naming the row."""
    return Expression._call("modulo", _expr(a), _expr(b))


def floor_divide(a: Any, b: Any) -> Expression:
    """``a // b``: integers divide as in Daft (Rust), the quotient truncated toward zero (``-7 // 3
    == -2``, where Python's ``//`` gives -3; with ``%``, ``a == (a // b) * b + a % b``); floats give
    floor(a / b), as Daft. Integer ``b == 0`` raises KetchValueError naming the row."""
    return Expression._call("floor_divide", _expr(a), _expr(b))


def is_nan(expr: Expression) -> Expression:
    """Bool: whether each float is NaN (null stays null)."""
    return Expression._call("is_nan", expr)


def is_inf(expr: Expression) -> Expression:
    """Bool: whether each float is +inf or -inf (null stays null)."""
    return Expression._call("is_inf", expr)


def not_nan(expr: Expression) -> Expression:
    """Bool: whether each float is not NaN (null stays null)."""
    return Expression._call("invert", is_nan(expr))


def fill_nan(expr: Expression, fill_value: Any) -> Expression:
    """NaN values replaced by ``fill_value``; nulls stay null. Named as ``expr`` (Daft)."""
    return Expression._call("if_else", ~is_nan(expr), expr, _expr(fill_value))


def bitwise_and(left: Any, right: Any) -> Expression:
    """Bitwise AND of two integer expressions (``&``)."""
    return Expression._call("bit_wise_and", _expr(left), _expr(right))


def bitwise_or(left: Any, right: Any) -> Expression:
    """Bitwise OR of two integer expressions (``|``)."""
    return Expression._call("bit_wise_or", _expr(left), _expr(right))


def bitwise_xor(left: Any, right: Any) -> Expression:
    """Bitwise XOR of two integer expressions (``^``)."""
    return Expression._call("bit_wise_xor", _expr(left), _expr(right))


def shift_left(expr: Any, other: Any) -> Expression:
    """``expr << other`` on integers; a shift >= the bit width or < 0 raises KetchValueError."""
    return Expression._call("shift_left_checked", _expr(expr), _expr(other))


def shift_right(expr: Any, other: Any) -> Expression:
    """``expr >> other`` on integers (arithmetic for signed); a shift >= the bit width or < 0
    raises KetchValueError."""
    return Expression._call("shift_right_checked", _expr(expr), _expr(other))


__all__ = [
    "abs",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "cbrt",
    "ceil",
    "clip",
    "cos",
    "cosh",
    "cot",
    "csc",
    "degrees",
    "exp",
    "expm1",
    "fill_nan",
    "floor",
    "floor_divide",
    "is_inf",
    "is_nan",
    "ln",
    "log",
    "log10",
    "log1p",
    "log2",
    "modulo",
    "negate",
    "not_nan",
    "pmod",
    "pow",
    "power",
    "radians",
    "round",
    "sec",
    "shift_left",
    "shift_right",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
]


def e() -> Expression:
    """Euler's number as a float64 literal."""
    return lit(_math.e)


def pi() -> Expression:
    """Pi as a float64 literal."""
    return lit(_math.pi)


def hypot(a: Any, b: Any) -> Expression:
    """sqrt(a ** 2 + b ** 2) (float64)."""
    x, y = _expr(a).cast(pa.float64()), _expr(b).cast(pa.float64())
    return Expression._call(
        "sqrt",
        Expression._call("add", Expression._call("multiply", x, x), Expression._call("multiply", y, y)),
    )


def try_divide(a: Any, b: Any) -> Expression:
    """``a / b`` as float64, null where ``b`` is 0."""
    divisor = _expr(b)
    return Expression._call("if_else", divisor == 0, lit(None).cast(pa.float64()), _expr(a) / divisor)


__all__ += ["e", "hypot", "pi", "try_divide"]


def great_circle_distance(lat1: Any, lon1: Any, lat2: Any, lon2: Any) -> Expression:
    """Daft's ``great_circle_distance``: the distance in metres (Float64) between the points
    (lat1, lon1) and (lat2, lon2), in degrees, by the haversine formula on a sphere of the mean
    Earth radius, 6,371 km (as Daft). A null, non-finite or out-of-range coordinate (latitude outside
    [-90, 90], longitude outside [-180, 180]) gives null, not an error. Non-numeric arguments:
    KetchTypeError at plan time."""
    return Expression._call("great_circle_distance", _expr(lat1), _expr(lon1), _expr(lat2), _expr(lon2))


__all__ += ["great_circle_distance"]
