"""hash / minhash / simhash give Daft 0.7.26's values.

References: ``hash_reference`` (libxxhash through ctypes, hashlib, MurmurHash3 and wyrand in
Python, following Daft's Rust sources), xxHash's own published sanity vectors, and a few values
printed by Daft 0.7.26 itself (``daft.from_pydict(...).select(...)`` with the PyPI wheel)."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hash_reference import (
    daft_hash,
    daft_minhash,
    daft_simhash,
    hash_bytes,
    murmur3_32,
    xxh3,
    xxh32,
    xxh64,
)

import ketch
import ketch.functions as F
from ketch import col, lit
from ketch.errors import KetchTypeError

KINDS = ["xxhash", "xxhash3_64", "xxhash64", "xxhash32", "murmurhash3", "sha1"]


def run(columns: dict[str, Any], build: ketch.Expression) -> list:
    table = pa.table(columns) if all(isinstance(v, pa.Array) for v in columns.values()) else None
    df = ketch.from_arrow(table) if table is not None else ketch.from_pydict(columns)
    return df.select(build.alias("out")).to_pydict()["out"]


def test_reference_libraries_give_the_published_vectors():
    # xxHash's sanity vectors (github.com/Cyan4973/xxHash, tests/sanity_test_vectors.h and the
    # README): the hashes of no bytes with seed 0.
    assert xxh3(b"") == 0x2D06800538D394C2
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh32(b"") == 0x02CC5D05
    # MurmurHash3_x86_32 vectors (smhasher's verification values, as quoted on Wikipedia).
    assert murmur3_32(b"", 1) == 0x514E28B7 and murmur3_32(b"hello", 0) == 0x248BFA47


def test_hash_matches_values_printed_by_daft():
    # daft 0.7.26: from_pydict({"s": ["a", "", None]}).select(col("s").hash())
    assert run({"s": ["a", "", None]}, col("s").hash()) == [
        16629034431890738719,
        3244421341483603138,
        3244421341483603138,
    ]
    # col("i").hash() and .hash(seed=7) on Int64 [1, -5, None, 2**40]
    ints = [1, -5, None, 2**40]
    assert run({"i": ints}, col("i").hash()) == [
        3439722301264460078,
        7602370513495869217,
        3244421341483603138,
        13032219650562972790,
    ]
    assert run({"i": ints}, col("i").hash(seed=7)) == [
        12012694768356207812,
        6330857417936267064,
        3244421341483603138,
        16706922934031976543,
    ]
    # booleans, murmurhash3 with its default seed 42 and with seed 0, decimals, lists, structs
    assert run({"b": [True, False, None]}, col("b").hash(seed=3)) == [
        17133414448293098170,
        13749065413753693333,
        3244421341483603138,
    ]
    strings = ["a", "", None, "hello world" * 5]
    assert run({"s": strings}, col("s").hash(hash_function="murmurhash3")) == [
        3001393763,
        142593372,
        142593372,
        1940263931,
    ]
    assert run({"s": strings}, col("s").hash(seed=0, hash_function="murmurhash3")) == [
        1009084850,
        0,
        0,
        2840873159,
    ]
    decimals = pa.array(
        [decimal.Decimal("1.50"), None, decimal.Decimal("-0.05"), decimal.Decimal("0")], pa.decimal128(10, 2)
    )
    assert run({"d": decimals}, col("d").hash()) == [
        1018671289188329407,
        3244421341483603138,
        2806753887004778221,
        4157271574681527711,
    ]
    assert run({"l": [[1, 2], None, []]}, col("l").hash()) == [2230407902732842558, None, 3244421341483603138]
    assert run({"s": [{"a": 1, "b": "x"}, None]}, col("s").hash()) == [7411349167206634625, None]
    assert run({"a": ["x", "y"], "b": [1, 2]}, F.hash(col("a"), col("b"))) == [
        11801418291581005912,
        13666274858449531744,
    ]


COLUMNS: list[tuple[str, pa.DataType, list[Any]]] = [
    ("string", pa.string(), ["", "a", None, "😉é", "x" * 31, "y" * 300]),
    ("large_string", pa.large_string(), ["b", None, ""]),
    ("binary", pa.binary(), [b"\x00\x01", None, b""]),
    ("large_binary", pa.large_binary(), [b"\xff" * 17, None]),
    ("fixed_binary", pa.binary(3), [b"abc", None, b"\x00\x00\x01"]),
    ("bool", pa.bool_(), [True, False, None]),
    ("int8", pa.int8(), [-1, 127, None, 0]),
    ("int16", pa.int16(), [-300, None, 2]),
    ("int32", pa.int32(), [2**31 - 1, None, -(2**31)]),
    ("int64", pa.int64(), [2**63 - 1, -(2**63), None, 0]),
    ("uint8", pa.uint8(), [255, None]),
    ("uint16", pa.uint16(), [65535, 1]),
    ("uint32", pa.uint32(), [2**32 - 1, None]),
    ("uint64", pa.uint64(), [2**64 - 1, None, 3]),
    ("float32", pa.float32(), [1.5, None, -0.0, float("inf")]),
    ("float64", pa.float64(), [1.5, None, -0.0, float("nan"), 1e300]),
    (
        "decimal",
        pa.decimal128(12, 3),
        [decimal.Decimal("12.345"), None, decimal.Decimal("-0.001"), decimal.Decimal(0)],
    ),
    ("decimal0", pa.decimal128(5, 0), [decimal.Decimal("-42"), None]),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,dtype,values", COLUMNS, ids=[c[0] for c in COLUMNS])
def test_hash_of_each_type_matches_the_reference(kind: str, name: str, dtype: pa.DataType, values: list[Any]):
    array = pa.array(values, dtype)
    assert run({"v": array}, col("v").hash(hash_function=kind)) == daft_hash(values, dtype, kind, None)
    for seed in (0, 42, 2**64 - 1):
        expected = daft_hash(values, dtype, kind, [seed] * len(values))
        assert run({"v": array}, col("v").hash(seed=seed, hash_function=kind)) == expected
        assert run({"v": array}, F.hash(col("v"), seed=seed, hash_function=kind)) == expected


def test_temporal_values_hash_their_stored_integer():
    stored = [1, None, 1_600_000_000_000_000]
    for dtype in (pa.timestamp("us"), pa.timestamp("ms", tz="UTC"), pa.duration("us"), pa.time64("us")):
        array = pa.array(stored, pa.int64()).cast(dtype)
        assert run({"t": array}, col("t").hash()) == daft_hash(stored, pa.int64(), "xxhash", None)
    days = [(datetime.date(2020, 1, 2) - datetime.date(1970, 1, 1)).days, None]
    dates = pa.array(days, pa.int32()).cast(pa.date32())
    assert run({"d": dates}, col("d").hash(seed=5)) == daft_hash(days, pa.int32(), "xxhash", [5, 5])


def test_null_column_and_null_literals_hash_as_no_bytes():
    for kind in KINDS:
        out = run({"n": pa.array([None, None], pa.null())}, col("n").hash(hash_function=kind))
        assert out == [hash_bytes(b"", kind, None)] * 2
        out = run({"n": pa.array([None, None], pa.null())}, col("n").hash(seed=9, hash_function=kind))
        assert out == [hash_bytes(b"", kind, 9)] * 2


def test_seed_columns_multiple_expressions_lists_and_structs():
    strings, seeds = ["x", "y", None, "z"], [1, None, 3, 2**40]
    expected = daft_hash(strings, pa.string(), "xxhash", [1, 0, 3, 2**40])  # a null seed counts as 0
    assert run({"s": strings, "k": seeds}, col("s").hash(seed=col("k"))) == expected
    # hash(a, b, c, seed=s) chains: each expression's hash seeds the next.
    a, b, c = ["p", None, "q"], [1, 2, None], [True, None, False]
    ha = daft_hash(a, pa.string(), "sha1", [11] * 3)
    hb = daft_hash(b, pa.int64(), "sha1", ha)  # type: ignore[arg-type]
    hc = daft_hash(c, pa.bool_(), "sha1", hb)  # type: ignore[arg-type]
    assert run({"a": a, "b": b, "c": c}, F.hash("a", col("b"), col("c"), seed=11, hash_function="sha1")) == hc
    # A list hashes the little-endian bytes of its elements' hashes; a struct chains its fields.
    lists = [[1, None, 3], [], None, [4]]
    for kind in ("xxhash", "murmurhash3", "sha1"):
        unseeded = []
        for row in lists:
            if row is None:
                unseeded.append(None)
                continue
            inner = daft_hash(row, pa.int64(), kind, None)
            unseeded.append(hash_bytes(b"".join(h.to_bytes(8, "little") for h in inner), kind, None))  # type: ignore[union-attr]
        assert run({"l": lists}, col("l").hash(hash_function=kind)) == unseeded
        seeded = []
        for row in lists:
            if row is None:
                seeded.append(None)
                continue
            inner = daft_hash(row, pa.int64(), kind, [5] * len(row))
            seeded.append(
                hash_bytes(
                    b"".join(h.to_bytes(8, "little") for h in inner), kind, None if kind == "sha1" else 5
                )
            )  # type: ignore[union-attr]
        assert run({"l": lists}, col("l").hash(seed=5, hash_function=kind)) == seeded
    structs = [{"a": 1, "b": "x"}, {"a": None, "b": None}, None]
    first = daft_hash([1, None, None], pa.int64(), "xxhash64", None)
    second = daft_hash(["x", None, None], pa.string(), "xxhash64", first)  # type: ignore[arg-type]
    assert run({"s": structs}, col("s").hash(hash_function="xxhash64")) == second[:2] + [None]


def test_hash_errors_name_the_problem():
    df = ketch.from_pydict({"s": ["a"], "f": [1.5]})
    with pytest.raises(ValueError, match="invalid hash_function 'md5'"):
        df.select(col("s").hash(hash_function="md5"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"seed must be in \[0, 2\*\*64\)"):
        df.select(col("s").hash(seed=-1))
    with pytest.raises(TypeError, match="seed must be an int"):
        df.select(col("s").hash(seed=1.5))
    with pytest.raises(KetchTypeError, match=r"hash: seed must be an integer, got col\(f\)"):
        df.select(col("s").hash(seed=col("f")))
    with pytest.raises(ValueError, match="requires at least one expression"):
        F.hash()
    with pytest.raises(Exception, match="seed must be a non-negative integer"):
        df.select(col("s").hash(seed=lit(-3))).collect()


def test_minhash_matches_daft(rng: np.random.Generator):
    words = ["the", "quick", "brown", "fox", "jumps", "", "😉", "é"]
    texts: list[str | None] = [
        " ".join(words[int(i)] for i in rng.integers(0, len(words), int(rng.integers(0, 12))))
        for _ in range(40)
    ]
    texts += [None, "", " ", "a  b c ", "one", "tab\tseparated words"]
    for kind in KINDS:
        for ngram_size, num_hashes, seed in ((1, 5, 1), (2, 9, 7), (4, 3, 2**32 - 1), (30, 2, 0)):
            out = run(
                {"t": texts},
                F.minhash(
                    col("t"), num_hashes=num_hashes, ngram_size=ngram_size, seed=seed, hash_function=kind
                ),
            )
            assert out == [
                None if t is None else daft_minhash(t, num_hashes, ngram_size, seed, kind) for t in texts
            ]
    assert run({"t": ["x y"]}, col("t").minhash(num_hashes=2, ngram_size=1)) == [
        daft_minhash("x y", 2, 1, 1, "murmurhash3")
    ]
    # Similar documents share about a Jaccard-similarity share of signature positions.
    base = [f"w{i}" for i in range(200)]
    a, b = " ".join(base), " ".join(base[:150] + [f"v{i}" for i in range(50)])
    sa, sb = run({"t": [a, b]}, F.minhash(col("t"), num_hashes=512, ngram_size=1))
    assert abs(sum(x == y for x, y in zip(sa, sb, strict=True)) / 512 - 150 / 250) < 0.08
    with pytest.raises(KetchTypeError, match=r"minhash expects a string, got col\(i\)"):
        ketch.from_pydict({"i": [1]}).select(F.minhash(col("i"), num_hashes=2, ngram_size=1))
    with pytest.raises(ValueError, match=r"minhash: seed must be in \[0, 2\*\*32\)"):
        ketch.from_pydict({"t": ["a"]}).select(F.minhash(col("t"), num_hashes=2, ngram_size=1, seed=2**32))


def test_minhash_values_printed_by_daft():
    # daft 0.7.26: from_pydict({"t": [...]}).select(col("t").minhash(num_hashes=4, ngram_size=2, seed=1))
    texts = ["the quick brown fox", "a  b c "]
    expected = [[664373783, 2443838442, 493456407, 1840171738], [454142051, 737013207, 890580489, 765239502]]
    assert [daft_minhash(t, 4, 2, 1, "murmurhash3") for t in texts] == expected
    assert run({"t": texts}, col("t").minhash(num_hashes=4, ngram_size=2)) == expected


def test_simhash_matches_daft():
    # daft 0.7.26: from_pydict({"t": ["abc", None]}).select(col("t").simhash())
    assert run({"t": ["abc", None]}, col("t").simhash()) == [8696274497037089104, None]
    texts = ["", "ab", "abc", "the quick brown fox", "the quick brown fax", "日本語のテキスト", "😉😉😉é"]
    for kind in KINDS:
        for ngram_size in (1, 3, 5):
            out = run({"t": texts}, F.simhash(col("t"), ngram_size=ngram_size, hash_function=kind))
            assert out == [daft_simhash(t, ngram_size, kind) for t in texts]
    with pytest.raises(ValueError, match="simhash: ngram_size must be > 0"):
        ketch.from_pydict({"t": ["a"]}).select(col("t").simhash(ngram_size=0))


def test_hamming_distance_counts_differing_bits():
    a = pa.array([1, None, 255, -1, 2**40], pa.int64())
    b = pa.array([3, 1, 0, 0, 0], pa.int32())
    u = pa.array([2**64 - 1, 0, 5, 6, 7], pa.uint64())
    f = pa.array([b"\x00\xff", b"\x01\x01", None, b"ab", b"zz"], pa.binary(2))
    g = pa.array([b"\xff\xff", b"\x00\x00", b"aa", b"ab", b"\x00\x00"], pa.binary(2))
    table = {"a": a, "b": b, "u": u, "f": f, "g": g}

    def popcounts(x: list, y: list) -> list:
        return [
            None if p is None or q is None or p < 0 or q < 0 else bin(p ^ q).count("1")
            for p, q in zip(x, y, strict=True)
        ]

    # Daft 0.7.26 printed [1, None, 8, None] for a vs b (a negative value gives null).
    assert run(table, F.hamming_distance(col("a"), col("b"))) == [1, None, 8, None, 1]
    assert run(table, col("u").hamming_distance(col("a"))) == popcounts(u.to_pylist(), a.to_pylist())
    assert run(table, F.hamming_distance(col("a"), 0)) == popcounts(a.to_pylist(), [0] * 5)
    expected = [
        None if p is None or q is None else sum(bin(x ^ y).count("1") for x, y in zip(p, q, strict=True))
        for p, q in zip(f.to_pylist(), g.to_pylist(), strict=True)
    ]
    assert run(table, F.hamming_distance(col("f"), col("g"))) == expected
    # simhash fingerprints of similar texts are close
    d = run(
        {"x": ["the quick brown fox jumps"], "y": ["the quick brown fox jumped"]},
        F.hamming_distance(F.simhash(col("x")), F.simhash(col("y"))),
    )
    assert d == [
        bin(
            daft_simhash("the quick brown fox jumps", 3, "xxhash")
            ^ daft_simhash("the quick brown fox jumped", 3, "xxhash")
        ).count("1")
    ]
    df = ketch.from_arrow(pa.table({"f": f, "h": pa.array([b"a"] * 5, pa.binary(1)), "s": ["x"] * 5}))
    with pytest.raises(KetchTypeError, match="FixedSizeBinary sizes must match"):
        df.select(F.hamming_distance(col("f"), col("h")))
    with pytest.raises(KetchTypeError, match=r"hamming_distance requires both inputs to be integers"):
        df.select(F.hamming_distance(col("s"), col("s")))
