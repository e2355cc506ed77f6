"""Numeric, bitwise and general kernels against Python / numpy on random data with nulls and edge
values (0, negatives, int64 limits, NaN, inf); each function in both of Daft's spellings."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

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


def test_modulo_and_floor_divide_on_ints_match_python(rng):
    a, b = ints(rng), ints(rng, lo=-50, hi=50)
    b = [None if v == 0 else v for v in b]
    pairs = list(zip(a, b, strict=True))
    exp_mod = [None if x is None or y is None else trunc_mod(x, y) for x, y in pairs]
    exp_div = [None if x is None or y is None else x // y for x, y in pairs]
    assert run({"a": a, "b": b}, col("a") % col("b")) == exp_mod
    assert run({"a": a, "b": b}, F.modulo(col("a"), col("b"))) == exp_mod
    assert run({"a": a, "b": b}, col("a") // col("b")) == exp_div
    assert run({"a": a, "b": b}, F.floor_divide(col("a"), col("b"))) == exp_div
    assert run({"a": [-7, 7, -7]}, col("a") % 3) == [-1, 1, -1]
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


# A plain-Python XXH64 (the reference the C++ kernel is checked against).
_P1, _P2, _P3, _P4, _P5 = (
    11400714785074694791,
    14029467366897019727,
    1609587929392839161,
    9650029242287828579,
    2870177450012600261,
)
_M = 2**64 - 1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def xxh64(data: bytes, seed: int = 0) -> int:
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed & _M, (seed - _P1) & _M]
        while i + 32 <= n:
            for k in range(4):
                v[k] = _round(v[k], int.from_bytes(data[i + 8 * k : i + 8 * k + 8], "little"))
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for k in range(4):
            h = ((h ^ _round(0, v[k])) * _P1 + _P4) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, int.from_bytes(data[i : i + 8], "little")), 27) * _P1 + _P4) & _M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ ((int.from_bytes(data[i : i + 4], "little") * _P1) & _M), 23) * _P2 + _P3) & _M
        i += 4
    while i < n:
        h = (_rotl(h ^ ((data[i] * _P5) & _M), 11) * _P1) & _M
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _M
    h ^= h >> 29
    h = (h * _P3) & _M
    return h ^ (h >> 32)


def test_hash_is_xxh64_of_the_value_bytes(rng):
    assert xxh64(b"") == 0xEF46DB3751D8E999  # the published test vector
    strings = [None, "", "a", "😉é", "x" * 31, "y" * 32, "z" * 100]
    for seed in (0, 42):
        expected = [None if s is None else xxh64(s.encode(), seed) for s in strings]
        assert run({"s": strings}, F.hash(col("s"), seed=seed if seed else None)) == expected
        assert run({"s": strings}, col("s").hash(seed=seed)) == expected
    numbers = ints(rng, 50)
    expected = [None if v is None else xxh64(v.to_bytes(8, "little", signed=True)) for v in numbers]
    assert run({"i": numbers}, col("i").hash()) == expected


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
    assert out["h"] == [xxh64(b"a1", 3), xxh64(b"b22", 3), None, xxh64(b"x", 3)]
    assert out["m"] == [3, -3, None, 3]
    assert out["w"] == ["pos", "neg", "neg", "pos"]


def murmur3_32(data: bytes, seed: int) -> int:
    c1, c2, m32 = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & m32

    h, n = seed & m32, len(data)
    for i in range(0, n - n % 4, 4):
        k = (rotl((int.from_bytes(data[i : i + 4], "little") * c1) & m32, 15) * c2) & m32
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & m32
    tail, k = data[n - n % 4 :], 0
    for j in reversed(range(len(tail))):
        k ^= tail[j] << (8 * j)
    if tail:
        h ^= (rotl((k * c1) & m32, 15) * c2) & m32
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & m32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & m32
    return h ^ (h >> 16)


def splitmix64(state: int) -> tuple[int, int]:
    state = (state + 0x9E3779B97F4A7C15) & _M
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
    return state, z ^ (z >> 31)


def minhash_ref(text: str, num_hashes: int, ngram_size: int, seed: int, murmur: bool) -> list[int]:
    p = 2**61 - 1
    state, perms = seed & _M, []
    for _ in range(num_hashes):
        state, x = splitmix64(state)
        state, y = splitmix64(state)
        perms.append((x % (p - 1) + 1, y % p))
    tokens = [t for t in text.split(" ") if t]
    if len(tokens) < ngram_size:
        grams = [" ".join(tokens)]
    else:
        grams = [" ".join(tokens[i : i + ngram_size]) for i in range(len(tokens) - ngram_size + 1)]
    hashes = [murmur3_32(g.encode(), seed) if murmur else xxh64(g.encode(), seed) & 0xFFFFFFFF for g in grams]
    return [min(((a * h + b) % p) & 0xFFFFFFFF for h in hashes) for a, b in perms]


def test_minhash_matches_its_reference_and_estimates_jaccard(rng):
    assert murmur3_32(b"", 1) == 0x514E28B7 and murmur3_32(b"hello", 0) == 0x248BFA47  # published vectors
    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "😉", "é"]
    texts: list[str | None] = [
        " ".join(words[int(i)] for i in rng.integers(0, len(words), int(rng.integers(0, 12))))
        for _ in range(40)
    ]
    texts += [None, "", "  double  spaces ", "one"]
    for murmur, name in ((True, "murmurhash3"), (False, "xxhash")):
        out = run({"t": texts}, F.minhash(col("t"), num_hashes=16, ngram_size=2, seed=7, hash_function=name))
        assert out == [None if t is None else minhash_ref(t, 16, 2, 7, murmur) for t in texts]
    sig = run({"t": texts[:2]}, col("t").minhash(num_hashes=4, ngram_size=1))
    assert sig == [minhash_ref(t, 4, 1, 1, True) for t in texts[:2]]  # type: ignore[arg-type]
    # Similar documents share about a Jaccard-similarity share of signature positions.
    base = [f"w{i}" for i in range(200)]
    a, b = " ".join(base), " ".join(base[:150] + [f"v{i}" for i in range(50)])
    sa, sb = run({"t": [a, b]}, F.minhash(col("t"), num_hashes=512, ngram_size=1))
    agreement = sum(x == y for x, y in zip(sa, sb, strict=True)) / 512
    assert abs(agreement - 150 / 250) < 0.08
    with pytest.raises(KetchTypeError, match=r"minhash expects a string, got col\(i\)"):
        ketch.from_pydict({"i": [1]}).select(F.minhash(col("i"), num_hashes=2, ngram_size=1))
