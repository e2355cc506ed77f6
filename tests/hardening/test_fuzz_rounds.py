"""Bounded fuzz rounds with fixed seeds over the surfaces a hostile input reaches: binary codecs,
jq filters, SQL text and deep plans. Each case must give a value or a Ketch error (KetchError or
a ValueError/TypeError subclass Ketch documents); never a crash, a hang, or a stray exception
type such as AttributeError, IndexError or RecursionError."""

from __future__ import annotations

import base64
import bz2
import gzip
import json
import random
import zlib

import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.errors import KetchError

ALLOWED = (KetchError, ValueError, TypeError)


def mutate(rng: random.Random, data: bytes) -> bytes:
    """A random corruption: flip, cut, insert or duplicate bytes."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(4)
        if not data:
            data.extend(rng.randbytes(rng.randint(1, 8)))
        elif kind == 0:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif kind == 1:
            del data[rng.randrange(len(data)) :]
        elif kind == 2:
            at = rng.randrange(len(data) + 1)
            data[at:at] = rng.randbytes(rng.randint(1, 16))
        else:
            at = rng.randrange(len(data))
            data[at:at] = data[at : at + rng.randint(1, 32)]
    return bytes(data)


def compressed(codec: str, payload: bytes) -> bytes:
    if codec == "gzip":
        return gzip.compress(payload)
    if codec == "zlib":
        return zlib.compress(payload)
    if codec == "deflate":
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(payload) + c.flush()
    if codec == "bz2":
        return bz2.compress(payload)
    return pa.compress(payload, codec=codec, asbytes=True)


@pytest.mark.parametrize("codec", ["gzip", "zlib", "deflate", "bz2", "zstd", "lz4", "brotli"])
def test_fuzz_decompress(codec):
    rng = random.Random(f"decompress-{codec}")
    blobs = []
    for _ in range(150):
        payload = rng.randbytes(rng.randint(0, 2000)) * rng.randint(1, 20)
        blobs.append(mutate(rng, compressed(codec, payload)) if rng.random() < 0.8 else rng.randbytes(64))
    df = ketch.from_pydict({"b": blobs})
    with ketch.execution_config_ctx(memory_budget_bytes=64 << 20):
        out = df.select(col("b").try_decompress(codec).alias("x")).to_pydict()["x"]
        assert len(out) == len(blobs)
        for blob, value in zip(blobs, out, strict=True):
            single = ketch.from_pydict({"b": [blob]})
            try:
                got = single.select(col("b").decompress(codec).alias("x")).to_pydict()["x"][0]
                assert got == value  # try_ and the plain form agree when the value decodes
            except ALLOWED:
                assert value is None


def test_fuzz_text_codecs():
    rng = random.Random("text-codecs")
    alphabet = "ABCDEFabcdef0123456789+/=-_ \n\x00é"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(300)]
    texts += [base64.b64encode(rng.randbytes(rng.randint(0, 30))).decode() for _ in range(100)]
    df = ketch.from_pydict({"s": texts})
    for codec in ("base64", "hex", "utf-8"):
        out = df.select(col("s").try_decode(codec).alias("x")).to_pydict()["x"]
        assert len(out) == len(texts)
        for text, value in zip(texts, out, strict=True):
            if codec == "base64" and value is not None:
                assert value == base64.b64decode(text, validate=False) or isinstance(value, bytes)
            if codec == "hex" and value is not None:
                assert value == bytes.fromhex(text)


JQ_ATOMS = [
    ".",
    ".a",
    ".b",
    ".[]?",
    ".[0]?",
    "..",
    "length",
    "keys?",
    "tostring",
    "tojson",
    "1",
    '"s"',
    "null",
    "[.[]?]",
    "{x: .a}",
    "empty",
    "not",
    "type",
    "add?",
    "reverse?",
    "(.a // 0)",
    "limit(3; .[]?)",
    "first(.[]?)",
    "range(3)",
    "select(. != null)",
    "map(.)?",
    "to_entries?",
    "paths",
    "leaf_paths",
    'splits("a")?',
    "ascii_downcase?",
    "@base64",
    "@json",
    "tonumber?",
    'error("e")',
    "(. as $x | $x)",
    "reduce range(3) as $i (0; . + $i)",
    "if . then 1 else 2 end",
    'try error("x") catch .',
    "input",
    "$__loc__",
    'include "x"; .',
    "halt_error",
    "env",
]
JQ_JOIN = [" | ", ", ", " + ", " * ", " and ", " // ", " == "]


def random_json(rng: random.Random, depth: int = 0):
    kind = rng.randrange(6 if depth < 3 else 4)
    if kind == 0:
        return rng.randint(-5, 5)
    if kind == 1:
        return rng.choice(["a", "b", "", "é"])
    if kind == 2:
        return rng.choice([None, True, False, 1.5])
    if kind == 3:
        return {"a": rng.randint(0, 3)}
    if kind == 4:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {k: random_json(rng, depth + 1) for k in rng.sample(["a", "b", "c"], rng.randint(0, 3))}


def test_fuzz_jq():
    rng = random.Random("jq")
    docs = [json.dumps(random_json(rng)) for _ in range(8)] + ["not json", "", "[1,"]
    df = ketch.from_pydict({"j": docs})
    for _ in range(120):
        parts = [rng.choice(JQ_ATOMS) for _ in range(rng.randint(1, 4))]
        filter_ = parts[0]
        for part in parts[1:]:
            filter_ += rng.choice(JQ_JOIN) + part
        if rng.random() < 0.2:
            filter_ = "(" + filter_
        try:
            out = df.select(col("j").jq(filter_).alias("o")).to_pydict()["o"]
        except ALLOWED:
            continue
        assert len(out) == len(docs)
        for value in out:
            assert value is None or json.loads(value) is not None or value == "null"


SQL_VALID = [
    "SELECT a, b FROM t WHERE a > 1 ORDER BY a",
    "SELECT a, count(*) AS n FROM t GROUP BY a HAVING count(*) > 0",
    "SELECT x.a FROM t AS x JOIN t AS y ON x.a = y.a",
    "SELECT CASE WHEN a > 2 THEN 'hi' ELSE 'lo' END AS c FROM t",
    "WITH w AS (SELECT a FROM t) SELECT * FROM w UNION ALL SELECT a FROM t",
    "SELECT a, sum(b) OVER (PARTITION BY a ORDER BY b) AS s FROM t",
    "SELECT a FROM t WHERE b IN (SELECT b FROM t WHERE a < 3) LIMIT 2 OFFSET 1",
    "SELECT cast(a AS VARCHAR) || 'x' AS s, abs(b - 3) AS d FROM t",
]
SQL_NOISE = [
    "(",
    ")",
    ",",
    "'",
    '"',
    "SELECT",
    "FROM",
    "WHERE",
    "*",
    "t",
    "a",
    "1",
    "NULL",
    "--",
    ";",
    "JOIN",
    "ON",
    "OVER",
    "::",
    "?",
    "$1",
    ":x",
    "\x00",
    "é",
    "/*",
]


def test_fuzz_sql():
    rng = random.Random("sql")
    t = ketch.from_pydict({"a": [1, 2, 3, 4], "b": [4, 3, 2, 1]})
    for _ in range(200):
        tokens = rng.choice(SQL_VALID).split(" ")
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(tokens) + 1)
            op = rng.randrange(3)
            if op == 0 and tokens:
                del tokens[min(at, len(tokens) - 1)]
            elif op == 1:
                tokens.insert(at, rng.choice(SQL_NOISE))
            elif tokens:
                i, j = rng.randrange(len(tokens)), rng.randrange(len(tokens))
                tokens[i], tokens[j] = tokens[j], tokens[i]
        query = " ".join(tokens)
        try:
            ketch.sql(query, t=t).to_pydict()
        except ALLOWED:
            pass


def test_fuzz_deep_plans():
    rng = random.Random("deep")
    for _ in range(6):
        df = ketch.from_pydict({"a": list(range(20)), "b": [i % 3 for i in range(20)]})
        steps = rng.randint(1, 2_300)
        try:
            for i in range(steps):
                kind = rng.randrange(5)
                if kind == 0:
                    df = df.with_column("a", col("a") + 1)
                elif kind == 1:
                    df = df.where(col("a") > -(10**9))
                elif kind == 2:
                    df = df.select("a", "b")
                elif kind == 3:
                    df = df.with_column("c", col("a") * 2).exclude("c")
                else:
                    df = df.sort("a") if i % 97 == 0 else df.limit(10**6)
        except KetchError as exc:
            assert "nested too deeply" in str(exc)
            continue
        out = df.to_pydict()
        assert len(out["a"]) == 20
