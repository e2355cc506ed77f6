"""Numeric, bitwise and general kernels against Python / numpy on random data with nulls and edge
values (0, negatives, int64 limits, NaN, inf); each function in both of Daft's spellings."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hash_reference import xxh3

import ketch
import ketch.functions as F
from ketch import col, lit
from ketch.errors import KetchTypeError, KetchValueError

I64_MAX = 2**63 - 1
I64_MIN = -(2**63)


def ints(rng: np.random.Generator, n: int = 300, lo: int = -1000, hi: int = 1000) -> list[int | None]:
    out: list[int | None] = [int(v) for v in rng.integers(lo, hi, n)]
    for i in rng.integers(0, n, n // 10):
        out[int(i)] = None
    return out


def floats(rng: np.random.Generator, n: int = 300) -> list[float | None]:
    out: list[float | None] = [float(v) for v in rng.normal(0, 100, n)]
    for i in rng.integers(0, n, n // 10):
        out[int(i)] = None
    out[:6] = [0.0, -0.0, math.inf, -math.inf, math.nan, None]
    return out


def run(
    columns: dict[str, list[Any]], build: ketch.Expression, dtypes: dict[str, pa.DataType] | None = None
) -> list:
    table = pa.table({k: pa.array(v, type=(dtypes or {}).get(k)) for k, v in columns.items()})
    return ketch.from_arrow(table).select(build.alias("r")).to_pydict()["r"]


def same(actual: list[Any], expected: list[Any]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        if e is None or a is None:
            assert a is e, (a, e)
        elif isinstance(e, float) and math.isnan(e):
            assert math.isnan(a)
        else:
            assert a == pytest.approx(e, rel=1e-12, abs=1e-300), (a, e)


def ref(values: list[Any], fn: Callable[[Any], Any]) -> list[Any]:
    return [None if v is None else fn(v) for v in values]


def trunc_mod(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def test_modulo_and_floor_divide_on_ints_truncate_as_daft(rng):
    # Daft 0.7.26: -7 // 3 == -2 and 7 // -3 == -2 (Rust's integer division), -7 % 3 == -1.
    a, b = ints(rng), ints(rng, lo=-50, hi=50)
    b = [None if v == 0 else v for v in b]
    pairs = list(zip(a, b, strict=True))
    exp_mod = [None if x is None or y is None else trunc_mod(x, y) for x, y in pairs]
    exp_div = [None if x is None or y is None else trunc_div(x, y) for x, y in pairs]
    assert run({"a": a, "b": b}, col("a") % col("b")) == exp_mod
    assert run({"a": a, "b": b}, F.modulo(col("a"), col("b"))) == exp_mod
    assert run({"a": a, "b": b}, col("a") // col("b")) == exp_div
    assert run({"a": a, "b": b}, F.floor_divide(col("a"), col("b"))) == exp_div
    assert run({"a": [-7, 7, -7]}, col("a") % 3) == [-1, 1, -1]
    assert run({"a": [-7, 7], "b": [3, -3]}, col("a") // col("b")) == [-2, -2]
    assert run({"a": [-7, 7, -7]}, F.pmod(col("a"), 3)) == [2, 1, 2]
    assert run({"a": [7]}, 20 % col("a")) == [6]
    assert run({"a": [I64_MIN, I64_MAX]}, col("a") % -1) == [0, 0]


def test_modulo_and_floor_divide_on_floats_match_fmod_and_floor(rng):
    a, b = floats(rng), floats(rng)
    pairs = list(zip(a, b, strict=True))
    same(
        run({"a": a, "b": b}, col("a") % col("b")),
        [
            None if x is None or y is None else math.fmod(x, y) if y != 0 and not math.isinf(x) else math.nan
            for x, y in pairs
        ],
    )
    expected = []
    with np.errstate(all="ignore"):
        for x, y in pairs:
            expected.append(
                None if x is None or y is None else float(np.floor(np.float64(x) / np.float64(y)))
            )
        same(run({"a": a, "b": b}, col("a") // col("b")), expected)


def test_integer_division_by_zero_and_overflow_raise_naming_the_row():
    with pytest.raises(KetchValueError, match=r"modulo: integer division by zero at source row 1 \(5 % 0\)"):
        run({"a": [1, 5], "b": [1, 0]}, col("a") % col("b"))
    with pytest.raises(KetchValueError, match="floor_divide: overflow"):
        run({"a": [I64_MIN]}, col("a") // -1)
    with pytest.raises(KetchValueError, match=r"add_checked.*overflow \(in \(col\(a\) \+ lit\(1\)\)\)"):
        run({"a": [I64_MAX]}, col("a") + 1)
    with pytest.raises(KetchValueError, match="overflow"):
        run({"a": [2**40]}, col("a") ** 2)


def test_power_matches_python(rng):
    a = ints(rng, lo=-20, hi=20)
    assert run({"a": a}, col("a") ** 3) == ref(a, lambda v: v**3)
    assert run({"a": a}, F.pow(col("a"), 2)) == ref(a, lambda v: v**2)
    same(run({"a": [2.0, 9.0, None]}, col("a") ** 0.5), [2**0.5, 3.0, None])


UNARY_FLOAT = [
    ("sqrt", F.sqrt, lambda c: c.sqrt(), np.sqrt),
    ("exp", F.exp, lambda c: c.exp(), np.exp),
    ("expm1", F.expm1, lambda c: c.expm1(), np.expm1),
    ("ln", F.ln, lambda c: c.ln(), np.log),
    ("log2", F.log2, lambda c: c.log2(), np.log2),
    ("log10", F.log10, lambda c: c.log10(), np.log10),
    ("log1p", F.log1p, lambda c: c.log1p(), np.log1p),
    ("sin", F.sin, lambda c: c.sin(), np.sin),
    ("cos", F.cos, lambda c: c.cos(), np.cos),
    ("tan", F.tan, lambda c: c.tan(), np.tan),
    ("arctan", F.arctan, lambda c: c.arctan(), np.arctan),
    ("sinh", F.sinh, lambda c: c.sinh(), np.sinh),
    ("tanh", F.tanh, lambda c: c.tanh(), np.tanh),
    ("arcsinh", F.arcsinh, lambda c: c.arcsinh(), np.arcsinh),
    ("ceil", F.ceil, lambda c: c.ceil(), np.ceil),
    ("floor", F.floor, lambda c: c.floor(), np.floor),
    ("abs", F.abs, abs, np.abs),
    ("sign", F.sign, lambda c: c.sign(), np.sign),
    ("cbrt", F.cbrt, lambda c: c.cbrt(), np.cbrt),
    ("radians", F.radians, lambda c: c.radians(), np.radians),
    ("degrees", F.degrees, lambda c: c.degrees(), np.degrees),
]


@pytest.mark.parametrize("name,free,method,numpy", UNARY_FLOAT, ids=[u[0] for u in UNARY_FLOAT])
def test_unary_float_functions_match_numpy(rng, name, free, method, numpy):
    x = floats(rng)
    if name in ("sinh", "exp", "expm1"):
        x = [None if v is None else v / 50 for v in x]
    with np.errstate(all="ignore"):
        expected = ref(x, lambda v: float(numpy(np.float64(v))))
    same(run({"x": x}, free(col("x"))), expected)
    same(run({"x": x}, method(col("x"))), expected)


def test_arcsin_arccos_arctanh_in_domain_and_log_base(rng):
    x = [None if v is None else float(v) for v in rng.uniform(-0.99, 0.99, 100)] + [None]
    for free, method, numpy in [
        (F.arcsin, lambda c: c.arcsin(), np.arcsin),
        (F.arccos, lambda c: c.arccos(), np.arccos),
        (F.arctanh, lambda c: c.arctanh(), np.arctanh),
    ]:
        expected = ref(x, lambda v, f=numpy: float(f(v)))
        same(run({"x": x}, free(col("x"))), expected)
        same(run({"x": x}, method(col("x"))), expected)
    y = [None if v is None else abs(v) + 0.1 for v in x]
    same(run({"x": y}, F.log(col("x"), 3)), ref(y, lambda v: math.log(v, 3)))
    same(run({"x": y}, col("x").log(10)), ref(y, lambda v: math.log10(v)))
    same(
        run({"x": y, "z": x}, F.arctan2(col("z"), col("x"))),
        [None if a is None else math.atan2(b, a) for a, b in zip(y, x, strict=True)],
    )


def test_round_is_half_away_from_zero(rng):
    x = [None if v is None else float(v) for v in rng.normal(0, 1000, 200)] + [None]
    for d in (0, 1, 2, -1):
        same(run({"x": x}, F.round(col("x"), d)), ref(x, lambda v, d=d: float(np.round(v, d))))
        same(run({"x": x}, col("x").round(d)), ref(x, lambda v, d=d: float(np.round(v, d))))
    assert run({"x": [0.5, 1.5, 2.5, -0.5, -2.5]}, col("x").round()) == [1.0, 2.0, 3.0, -1.0, -3.0]


def test_clip_matches_numpy_and_keeps_nulls(rng):
    x = ints(rng)
    assert run({"x": x}, F.clip(col("x"), -10, 10)) == ref(x, lambda v: int(np.clip(v, -10, 10)))
    assert run({"x": x}, col("x").clip(max=0)) == ref(x, lambda v: min(v, 0))
    assert run({"x": x}, col("x").clip(min=0)) == ref(x, lambda v: max(v, 0))
    assert run({"x": x}, col("x").clip()) == x
    lo = [None if i % 3 == 0 else -5 for i in range(len(x))]
    assert run({"x": x, "lo": lo}, col("x").clip(col("lo"))) == [
        None if v is None else v if m is None else max(v, m) for v, m in zip(x, lo, strict=True)
    ]


def test_bitwise_operators_on_ints_match_python(rng):
    a, b = ints(rng, lo=-(2**40), hi=2**40), ints(rng, lo=-(2**40), hi=2**40)
    pairs = list(zip(a, b, strict=True))

    def both(fn: Callable[[int, int], int]) -> list[int | None]:
        return [None if x is None or y is None else fn(x, y) for x, y in pairs]

    assert run({"a": a, "b": b}, col("a") & col("b")) == both(lambda x, y: x & y)
    assert run({"a": a, "b": b}, F.bitwise_and(col("a"), col("b"))) == both(lambda x, y: x & y)
    assert run({"a": a, "b": b}, col("a") | col("b")) == both(lambda x, y: x | y)
    assert run({"a": a, "b": b}, col("a").bitwise_or(col("b"))) == both(lambda x, y: x | y)
    assert run({"a": a, "b": b}, col("a") ^ col("b")) == both(lambda x, y: x ^ y)
    assert run({"a": a, "b": b}, F.bitwise_xor(col("a"), col("b"))) == both(lambda x, y: x ^ y)
    assert run({"a": a}, ~col("a")) == ref(a, lambda x: ~x)
    assert run({"a": a}, col("a") << 3) == ref(a, lambda x: x << 3)
    assert run({"a": a}, F.shift_right(col("a"), 5)) == ref(a, lambda x: x >> 5)
    # booleans keep Kleene logic
    p, q = [True, False, None, True], [None, None, None, False]
    assert run({"p": p, "q": q}, col("p") & col("q")) == [None, False, None, False]
    assert run({"p": p, "q": q}, col("p") ^ col("q")) == [None, None, None, True]
    with pytest.raises(KetchValueError, match="shift"):
        run({"a": [1]}, col("a") << 64)


def test_nan_and_inf_predicates_and_fill_nan(rng):
    x = floats(rng)
    assert run({"x": x}, col("x").is_nan()) == ref(x, math.isnan)
    assert run({"x": x}, F.is_nan(col("x"))) == ref(x, math.isnan)
    assert run({"x": x}, col("x").float.is_inf()) == ref(x, math.isinf)
    assert run({"x": x}, F.is_inf(col("x"))) == ref(x, math.isinf)
    assert run({"x": x}, col("x").not_nan()) == ref(x, lambda v: not math.isnan(v))
    assert run({"x": x}, F.not_nan(col("x"))) == ref(x, lambda v: not math.isnan(v))
    same(run({"x": x}, col("x").fill_nan(2.5)), ref(x, lambda v: 2.5 if math.isnan(v) else v))
    same(run({"x": x}, F.fill_nan(col("x"), 0.0)), ref(x, lambda v: 0.0 if math.isnan(v) else v))


def test_fill_null_coalesce_when_if_else(rng):
    a, b = ints(rng), ints(rng)
    pairs = list(zip(a, b, strict=True))
    assert run({"a": a}, col("a").fill_null(7)) == [7 if v is None else v for v in a]
    assert run({"a": a}, F.fill_null(col("a"), 7)) == [7 if v is None else v for v in a]
    assert run({"a": a, "b": b}, F.coalesce(col("a"), col("b"), lit(0))) == [
        x if x is not None else y if y is not None else 0 for x, y in pairs
    ]

    def grade(v: int | None) -> str:
        if v is not None and v > 500:
            return "high"
        if v is not None and v < -500:
            return "low"
        return "mid"

    out = run({"a": a}, F.when(col("a") > 500, "high").when(col("a") < -500, then="low").otherwise("mid"))
    assert out == [grade(v) for v in a]
    out = run({"a": a}, F.when(col("a") > 500, "high"))
    assert out == [("high" if v is not None and v > 500 else None) for v in a]
    assert run({"a": a}, (col("a") > 0).if_else(1, -1)) == ref(a, lambda v: 1 if v > 0 else -1)


def test_try_cast_nulls_what_does_not_convert():
    values = ["1", "x", None, "300", "-2", ""]
    assert run({"s": values}, F.try_cast(col("s"), ketch.DataType.int64())) == [1, None, None, 300, -2, None]
    assert run({"s": values}, col("s").try_cast(ketch.DataType.int8())) == [1, None, None, None, -2, None]
    assert run({"s": ["1.5", "nope"]}, col("s").try_cast(float)) == [1.5, None]
    with pytest.raises(KetchTypeError, match=r"try_cast: cannot cast col\(s\)"):
        run({"s": [[1]]}, col("s").try_cast(ketch.DataType.int64()))


def test_getitem_on_lists_and_structs():
    lists = [[1, 2, 3], [], None, [4]]
    assert run({"l": lists}, col("l")[0]) == [1, None, None, 4]
    assert run({"l": lists}, col("l")[-1]) == [3, None, None, 4]
    assert run({"l": lists}, col("l")[5]) == [None, None, None, None]
    assert run({"l": lists}, F.get(col("l"), 1, default=0)) == [2, 0, 0, 0]
    structs = [{"x": 1, "y": "a"}, None, {"x": None, "y": "b"}]
    assert run({"s": structs}, col("s")["y"]) == ["a", None, "b"]
    assert run({"s": structs}, col("s").get("x")) == [1, None, None]
    with pytest.raises(TypeError, match="not iterable"):
        list(col("s"))


def test_numeric_functions_refuse_strings_at_plan_time():
    df = ketch.from_pydict({"s": ["a"]})
    with pytest.raises(KetchTypeError, match=r"round expects a number, got col\(s\) of type"):
        df.select(col("s").round(1))
    with pytest.raises(KetchTypeError, match=r"modulo expects a number, got col\(s\)"):
        df.select(col("s") % 2)
    with pytest.raises(KetchTypeError, match=r"cannot apply 'sqrt'"):
        df.select(F.sqrt(col("s")))


def test_constants_hypot_try_divide_and_eq_null_safe(rng):
    a, b = floats(rng), floats(rng)
    pairs = list(zip(a, b, strict=True))
    same(run({"a": a}, F.e() + col("a") * 0), ref(a, lambda v: math.e + v * 0))
    same(run({"a": a}, F.pi() + col("a") * 0), ref(a, lambda v: math.pi + v * 0))
    same(
        run({"a": a, "b": b}, F.hypot(col("a"), col("b"))),
        [None if x is None or y is None else math.sqrt(x * x + y * y) for x, y in pairs],
    )
    x, y = ints(rng, lo=-3, hi=3), ints(rng, lo=-3, hi=3)
    same(
        run({"x": x, "y": y}, F.try_divide(col("x"), col("y"))),
        [None if p is None or q is None or q == 0 else p / q for p, q in zip(x, y, strict=True)],
    )
    assert run({"x": x, "y": y}, F.eq_null_safe(col("x"), col("y"))) == [
        (p is None and q is None) if p is None or q is None else p == q for p, q in zip(x, y, strict=True)
    ]


def test_options_survive_plan_serialization_on_both_runners(runner):
    df = ketch.from_pydict({"s": ["a1", "b22", None, "x"], "i": [7, -7, None, 3]}).into_partitions(2)
    out = df.select(
        F.regexp_extract(col("s"), r"([a-z])(\d+)", 2).alias("digits"),
        col("s").str.lpad(4, "*").alias("padded"),
        col("s").try_cast(ketch.DataType.int64()).alias("n"),
        col("s").hash(seed=3).alias("h"),
        (col("i") % 4).alias("m"),
        F.when(col("i") > 0, "pos").otherwise("neg").alias("w"),
    ).to_pydict()
    assert out["digits"] == ["1", "22", None, None]
    assert out["padded"] == ["**a1", "*b22", None, "***x"]
    assert out["n"] == [None, None, None, None]
    # Daft hashes a null string as "".
    assert out["h"] == [xxh3(b"a1", 3), xxh3(b"b22", 3), xxh3(b"", 3), xxh3(b"x", 3)]
    assert out["m"] == [3, -3, None, 3]
    assert out["w"] == ["pos", "neg", "neg", "pos"]
