"""Byte codecs, compression, JSON serialization, URL parsing and jq (issue 17), each in both of
Daft's spellings (``ketch.functions.X(col)`` and ``col.X()``), checked against Python's own
base64/binascii/zlib/gzip/bz2/json/urllib.parse on random data with nulls and empty values."""

from __future__ import annotations

import base64
import bz2
import datetime
import gzip
import json
import math
import zlib
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pyarrow as pa
import pytest

import ketch
import ketch.functions as F
from ketch import col
from ketch.errors import KetchTypeError, KetchValueError


def run(
    values: Any, build: Callable[[ketch.Expression], ketch.Expression], dtype: pa.DataType | None = None
) -> list:
    array = values if isinstance(values, pa.Array) else pa.array(values, type=dtype)
    return ketch.from_arrow(pa.table({"x": array})).select(build(col("x")).alias("r")).to_pydict()["r"]


def result_type(
    values: Any, build: Callable[[ketch.Expression], ketch.Expression], dtype: pa.DataType
) -> pa.DataType:
    table = pa.table({"x": pa.array(values, type=dtype)})
    return ketch.from_arrow(table).select(build(col("x")).alias("r")).to_arrow().schema.field("r").type


def ref(values: list, fn: Callable[[Any], Any]) -> list:
    return [None if v is None else fn(v) for v in values]


@pytest.fixture
def blobs(rng: np.random.Generator) -> list[bytes | None]:
    out: list[bytes | None] = [b"", None, b"hello, world!", bytes(range(256)), b"a" * 10_000]
    for _ in range(60):
        if rng.random() < 0.1:
            out.append(None)
        else:
            out.append(rng.integers(0, 256, int(rng.integers(0, 300)), dtype=np.uint8).tobytes())
    return out


@pytest.fixture
def texts(rng: np.random.Generator) -> list[str | None]:
    alphabet = list('abcXYZ019 .,-_\n\t"\\/') + ["é", "😉", "中", "\u0000"]
    out: list[str | None] = ["", None, "hello, world!"]
    for _ in range(60):
        k = int(rng.integers(0, 40))
        out.append(
            None
            if rng.random() < 0.1
            else "".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), k))
        )
    return out


# --- encode / decode --------------------------------------------------------------------------------

TEXT_CODECS = [
    ("base64", base64.b64encode, base64.b64decode),
    ("hex", lambda b: b.hex().encode(), bytes.fromhex),
]


@pytest.mark.parametrize(("codec", "py_encode", "py_decode"), TEXT_CODECS)
def test_text_codecs_match_python(blobs: list, codec: str, py_encode: Callable, py_decode: Callable) -> None:
    expected = ref(blobs, py_encode)
    assert run(blobs, lambda c: F.encode(c, codec)) == expected
    assert run(blobs, lambda c: c.encode(codec.upper())) == expected  # names are case-insensitive
    assert run(expected, lambda c: F.decode(c, codec), pa.large_binary()) == blobs
    assert run(expected, lambda c: c.decode(codec), pa.binary()) == blobs
    assert result_type(blobs, lambda c: c.encode(codec), pa.binary()) == pa.large_binary()


def test_encode_strings_and_fixed_size_binary(texts: list) -> None:
    assert run(texts, lambda c: c.encode("base64")) == ref(texts, lambda s: base64.b64encode(s.encode()))
    assert run(texts, lambda c: F.encode(c, "utf-8")) == ref(texts, str.encode)
    fixed = [b"abcd", None, b"\x00\xff\x10\x20"]
    assert run(fixed, lambda c: c.encode("hex"), pa.binary(4)) == ref(fixed, lambda b: b.hex().encode())


def test_utf8_decode_checks_bytes(texts: list) -> None:
    encoded = ref(texts, str.encode)
    assert run(encoded, lambda c: c.decode("utf8")) == texts
    assert result_type(encoded, lambda c: c.decode("utf-8"), pa.binary()) == pa.large_string()
    bad = [b"ok", b"\xff\xfe", None, "é".encode()]
    assert run(bad, lambda c: c.try_decode("utf-8")) == ["ok", None, None, "é"]
    with pytest.raises(KetchValueError, match=r"decode failed at source row 1 \(codec 'utf-8'\).*UTF-8"):
        run(bad, lambda c: c.decode("utf-8"))
    assert run(bad, lambda c: F.try_encode(c, "utf-8")) == [b"ok", None, None, "é".encode()]


def test_invalid_text_codec_input() -> None:
    values = [base64.b64encode(b"fine"), b"!!not base64!!", b"abc", None]
    assert run(values, lambda c: F.try_decode(c, "base64")) == [b"fine", None, None, None]
    with pytest.raises(KetchValueError, match=r"decode failed at source row 1 \(codec 'base64'\)"):
        run(values, lambda c: c.decode("base64"))
    hexes = [b"00ff", b"0", b"zz", b"ABCD"]
    assert run(hexes, lambda c: c.try_decode("hex")) == [b"\x00\xff", None, None, b"\xab\xcd"]
    with pytest.raises(KetchValueError, match=r"at source row 1 \(codec 'hex'\).*odd length"):
        run(hexes, lambda c: F.decode(c, "hex"))


def test_unknown_codec_fails_at_plan_time() -> None:
    df = ketch.from_pydict({"x": [b"a"]})
    with pytest.raises(KetchValueError, match=r"compress: unsupported codec 'rot13'") as info:
        df.select(F.compress(col("x"), "rot13"))
    assert "gzip" in str(info.value)  # the message lists the supported codecs
    with pytest.raises(KetchValueError, match=r"decode: unsupported codec 'latin-1'"):
        df.select(col("x").decode("latin-1"))


def test_wrong_input_type_fails_at_plan_time() -> None:
    df = ketch.from_pydict({"n": [1, 2]})
    with pytest.raises(
        KetchTypeError, match=r"compress expects a string or binary, got col\(n\) of type int"
    ):
        df.select(col("n").compress("gzip"))


# --- compression ------------------------------------------------------------------------------------

COMPRESSIONS = [
    ("zlib", zlib.decompress, zlib.compress),
    ("gzip", gzip.decompress, gzip.compress),
    ("gz", gzip.decompress, gzip.compress),
    ("deflate", lambda b: zlib.decompress(b, wbits=-15), lambda b: zlib.compress(b, wbits=-15)),
    ("bz2", bz2.decompress, bz2.compress),
]


@pytest.mark.parametrize(("codec", "py_decompress", "py_compress"), COMPRESSIONS)
def test_compression_matches_python(
    blobs: list, codec: str, py_decompress: Callable, py_compress: Callable
) -> None:
    compressed = run(blobs, lambda c: F.compress(c, codec))
    # Python decompresses what Ketch compressed ...
    assert ref(compressed, py_decompress) == blobs
    # ... and Ketch decompresses what Python compressed, in both spellings.
    from_python = ref(blobs, py_compress)
    assert run(from_python, lambda c: F.decompress(c, codec), pa.binary()) == blobs
    assert run(from_python, lambda c: c.decompress(codec), pa.large_binary()) == blobs
    assert run(from_python, lambda c: c.try_decompress(codec), pa.large_binary()) == blobs


def test_zlib_level_is_pythons_default(blobs: list) -> None:
    # zlib's default level 6 (Python's and Daft's); the same zlib version gives the same bytes,
    # so compare sizes, which any level change would move.
    compressed = run(blobs, lambda c: c.compress("zlib"))
    sizes = [None if b is None else len(b) for b in compressed]
    assert sizes == ref(blobs, lambda b: len(zlib.compress(b, 6)))


@pytest.mark.parametrize("codec", ["zstd", "lz4", "brotli"])
def test_arrow_compressions_round_trip(blobs: list, codec: str) -> None:
    compressed = run(blobs, lambda c: c.compress(codec))
    assert all(b is None or isinstance(b, bytes) for b in compressed)
    assert run(compressed, lambda c: c.decompress(codec), pa.large_binary()) == blobs
    # The same bytes as pyarrow's streaming codecs, which share Arrow's implementation.
    pa_codec = {"lz4": "lz4", "zstd": "zstd", "brotli": "brotli"}[codec]
    sample = blobs[2]
    stream = pa.BufferOutputStream()
    with pa.CompressedOutputStream(stream, pa_codec) as out:
        out.write(sample)
    assert run([stream.getvalue().to_pybytes()], lambda c: c.decompress(codec)) == [sample]


def test_concatenated_gzip_members() -> None:
    two = gzip.compress(b"first,") + gzip.compress(b"second")
    assert run([two], lambda c: c.decompress("gzip")) == [gzip.decompress(two)]


def test_corrupt_and_truncated_input() -> None:
    good = zlib.compress(b"payload " * 100)
    values = [good, good[: len(good) // 2], b"not zlib at all", None, b""]
    assert run(values, lambda c: F.try_decompress(c, "zlib")) == [b"payload " * 100, None, None, None, None]
    with pytest.raises(
        KetchValueError, match=r"decompress failed at source row 1 \(codec 'zlib'\): truncated"
    ):
        run(values, lambda c: c.decompress("zlib"))
    with pytest.raises(KetchValueError, match=r"source row 2 \(codec 'gzip'\)"):
        run([gzip.compress(b"a"), gzip.compress(b"x"), b"not gzip"], lambda c: c.decompress("gzip"))


def test_error_names_source_row_across_morsels() -> None:
    values = [zlib.compress(str(i).encode()) for i in range(100)]
    values[77] = b"garbage"
    with ketch.execution_config_ctx(morsel_size_rows=10):
        with pytest.raises(KetchValueError, match=r"source row 77 \(codec 'zlib'\)"):
            run(values, lambda c: c.decompress("zlib"))
        got = run(values, lambda c: c.try_decompress("zlib"))
    assert got == [None if i == 77 else str(i).encode() for i in range(100)]


def test_null_column() -> None:
    assert run([None, None], lambda c: c.compress("gzip"), pa.null()) == [None, None]
    assert result_type([None], lambda c: c.decode("utf-8"), pa.null()) == pa.large_string()


# --- serialize / deserialize -------------------------------------------------------------------------


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_serialize_matches_python_json(texts: list) -> None:
    ints = [1, None, -(2**63), 2**62]
    floats = [1.5, 3.0, -0.1, None, 1e300]
    cases: list[tuple[list, pa.DataType | None]] = [
        (ints, pa.int64()),
        (floats, pa.float64()),
        ([True, False, None], pa.bool_()),
        (texts, pa.large_string()),
        ([[1, 2], [], None, [None, 3]], pa.list_(pa.int32())),
        (
            [{"a": 1, "b": "x"}, {"a": None, "b": "y\n"}, None],
            pa.struct([("a", pa.int64()), ("b", pa.string())]),
        ),
        ([{"k": [{"z": 1.25}]}, {"k": None}], pa.struct([("k", pa.list_(pa.struct([("z", pa.float64())])))])),
    ]
    for values, dtype in cases:
        expected = ref(values, compact)
        assert run(values, lambda c: F.serialize(c, "json"), dtype) == expected, dtype
        assert run(values, lambda c: c.serialize("json"), dtype) == expected, dtype


def test_serialize_other_types() -> None:
    assert run([float("nan"), float("inf")], lambda c: c.serialize("json")) == ["null", "null"]
    assert run([b"\x00\xab"], lambda c: c.serialize("json")) == ['"00ab"']
    assert run([datetime.date(2024, 2, 29)], lambda c: c.serialize("json")) == ['"2024-02-29"']
    ts = datetime.datetime(2024, 1, 2, 3, 4, 5)
    (text,) = run([ts], lambda c: c.serialize("json"), pa.timestamp("s"))
    assert datetime.datetime.fromisoformat(json.loads(text)) == ts
    maps = pa.array([[("a", 1), ("b", None)]], type=pa.map_(pa.string(), pa.int64()))
    assert run(maps, lambda c: c.serialize("json")) == [compact({"a": 1, "b": None})]
    with pytest.raises(ValueError, match="unsupported format 'xml'"):
        col("x").serialize("xml")  # type: ignore[arg-type]


def test_deserialize_to_types() -> None:
    rows = ['{"a": 1, "b": ["x", "y"]}', '{"b": []}', "null", None, ' {"a":\n 2, "b": null, "extra": 5} ']
    dtype = pa.struct([("a", pa.int64()), ("b", pa.list_(pa.string()))])
    got = run(rows, lambda c: F.deserialize(c, "json", dtype))
    want = [None if r is None or json.loads(r) is None else json.loads(r) for r in rows]
    expected = [None if w is None else {"a": w.get("a"), "b": w.get("b")} for w in want]
    assert got == expected
    assert result_type(rows, lambda c: c.deserialize("json", dtype), pa.string()) == dtype
    assert run(["1", "2.5", "-3"], lambda c: c.deserialize("json", pa.float64())) == [1.0, 2.5, -3.0]
    assert run(['"hé"', "12", "true"], lambda c: c.deserialize("json", pa.string())) == ["hé", "12", "true"]
    assert run(
        ["[1, 2]", "[]"], lambda c: c.deserialize("json", ketch.DataType.list(ketch.DataType.int64()))
    ) == [
        [1, 2],
        [],
    ]


def test_deserialize_bad_rows() -> None:
    rows = ["1", "not json", "3", '"text"', "4 5", None, "7"]
    assert run(rows, lambda c: F.try_deserialize(c, "json", pa.int64())) == [1, None, 3, None, None, None, 7]
    assert run(rows, lambda c: c.try_deserialize("json", pa.int64())) == [1, None, 3, None, None, None, 7]
    with pytest.raises(
        KetchValueError, match=r"deserialize failed at source row 1 \(format 'json'\): invalid"
    ):
        run(rows, lambda c: c.deserialize("json", pa.int64()))
    with pytest.raises(KetchValueError, match=r"deserialize failed at source row 3 \(format 'json'\)"):
        run(["1", "2", "3", '"text"'], lambda c: c.deserialize("json", pa.int64()))


def test_serialize_deserialize_round_trip(rng: np.random.Generator) -> None:
    dtype = pa.struct([("id", pa.int64()), ("tags", pa.list_(pa.string())), ("score", pa.float64())])
    values = [
        None
        if rng.random() < 0.1
        else {"id": int(i), "tags": [str(t) for t in range(int(i) % 4)], "score": i / 7}
        for i in range(200)
    ]
    table = pa.table({"x": pa.array(values, type=dtype)})
    df = ketch.from_arrow(table).select(col("x").serialize("json").deserialize("json", dtype).alias("r"))
    got = df.to_pydict()["r"]
    assert len(got) == len(values)
    for g, v in zip(got, values, strict=True):
        assert g == v or (v is not None and math.isclose(g["score"], v["score"]) and g["id"] == v["id"])


# --- parse_url ---------------------------------------------------------------------------------------

URLS = [
    "https://user:pass@example.com:8080/path/to?query=value&b=2#fragment",
    "http://localhost/api",
    "https://example.com:443/default-port",
    "s3://bucket/key/with/slashes.parquet",
    "ftp://anon@files.example.org/pub/",
    "http://[::1]:9000/ipv6",
    "HTTP://example.com",
    "not a url",
    "",
    None,
]


def python_parse(url: str) -> dict[str, Any]:
    parts = urlsplit(url)
    port = parts.port
    default = {"http": 80, "https": 443, "ftp": 21}.get(parts.scheme)
    host = parts.netloc.rsplit("@", 1)[-1]
    if port is not None:
        host = host.rsplit(":", 1)[0]
    return {
        "scheme": parts.scheme,
        "username": parts.username or None,
        "password": parts.password,
        "host": host,
        "port": None if port == default else port,
        "path": parts.path or "/",
        "query": parts.query or None,
        "fragment": parts.fragment or None,
    }


def test_parse_url_matches_urllib() -> None:
    got = run(URLS, lambda c: F.parse_url(c))
    assert got == run(URLS, lambda c: c.parse_url())
    for url, parsed in zip(URLS[:7], got[:7], strict=True):
        assert parsed == python_parse(url), url
    none = dict.fromkeys(["scheme", "username", "password", "host", "port", "path", "query", "fragment"])
    assert got[7] == none and got[8] == none  # not URLs: every component null, as Daft
    assert got[9] is None
    fields = result_type(URLS, F.parse_url, pa.string())
    assert [(f.name, f.type) for f in fields] == [
        ("scheme", pa.large_string()),
        ("username", pa.large_string()),
        ("password", pa.large_string()),
        ("host", pa.large_string()),
        ("port", pa.uint16()),
        ("path", pa.large_string()),
        ("query", pa.large_string()),
        ("fragment", pa.large_string()),
    ]


def test_parse_url_fields_via_struct_get() -> None:
    df = ketch.from_pydict({"u": URLS[:2]}).select(F.parse_url(col("u")).struct.get("host").alias("h"))
    assert df.to_pydict()["h"] == ["example.com", "localhost"]


def test_parse_url_rejects_non_strings() -> None:
    with pytest.raises(KetchTypeError, match=r"parse_url expects a string column of URLs, got col\(n\)"):
        ketch.from_pydict({"n": [1]}).select(col("n").parse_url())


# --- jq ----------------------------------------------------------------------------------------------


def test_jq_single_and_multiple_outputs(rng: np.random.Generator) -> None:
    docs = [
        None
        if rng.random() < 0.1
        else {"a": int(i), "items": [{"v": int(v)} for v in rng.integers(0, 50, int(i) % 4)]}
        for i in range(120)
    ]
    rows = [None if d is None else json.dumps(d) for d in docs]
    assert run(rows, lambda c: F.jq(c, ".a")) == ref(docs, lambda d: compact(d["a"]))

    # Several outputs become one JSON array; none becomes null.
    def items(d: dict) -> str | None:
        vs = [x["v"] for x in d["items"]]
        return None if not vs else compact(vs[0]) if len(vs) == 1 else compact(vs)

    assert run(rows, lambda c: c.jq(".items[].v")) == [None if d is None else items(d) for d in docs]
    assert run(rows, lambda c: c.jq("{n: (.items | length), a}")) == ref(
        docs, lambda d: compact({"n": len(d["items"]), "a": d["a"]})
    )
    assert run(rows, lambda c: c.jq(".items | map(select(.v > 25)) | map(.v * 2)")) == ref(
        docs, lambda d: compact([x["v"] * 2 for x in d["items"] if x["v"] > 25])
    )


def test_jq_strings_keep_json_quotes() -> None:
    rows = ['{"name": "Ketch \\"é\\""}', '{"name": null}', "{}"]
    assert run(rows, lambda c: c.jq(".name")) == [compact('Ketch "é"'), "null", "null"]
    assert run(rows, lambda c: c.jq(".name | strings")) == [compact('Ketch "é"'), None, None]


def test_jq_errors() -> None:
    df = ketch.from_pydict({"j": ['{"a": 1}', "{broken", '"s"']})
    with pytest.raises(KetchValueError, match=r"jq: invalid filter '\.a \|\|\| \.b'"):
        df.select(col("j").jq(".a ||| .b"))
    with pytest.raises(KetchValueError, match=r"jq failed at source row 1 \(filter '\.a'\): invalid JSON"):
        df.select(col("j").jq(".a")).collect()
    ok = ketch.from_pydict({"j": ['{"a": 1}', '"s"']})
    with pytest.raises(KetchValueError, match=r"row 1 \(filter '\.a'\): jq error: Cannot index string"):
        ok.select(col("j").jq(".a")).collect()
    with pytest.raises(KetchTypeError, match=r"jq expects a string column of JSON texts, got col\(n\)"):
        ketch.from_pydict({"n": [1]}).select(col("n").jq("."))


def test_jq_in_parallel_morsels() -> None:
    rows = [json.dumps({"i": i, "s": "x" * (i % 7)}) for i in range(2000)]
    with ketch.execution_config_ctx(morsel_size_rows=64):
        got = run(rows, lambda c: c.jq("[.i, (.s | length)]"))
    assert got == [compact([i, i % 7]) for i in range(2000)]


# --- the spellings are wired --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "encode",
        "decode",
        "try_encode",
        "try_decode",
        "compress",
        "decompress",
        "try_compress",
        "try_decompress",
        "serialize",
        "deserialize",
        "try_deserialize",
        "parse_url",
        "jq",
    ],
)
def test_both_spellings_exist(name: str) -> None:
    assert callable(getattr(F, name))
    assert callable(getattr(ketch.Expression, name))


def test_plans_with_codec_calls_serialize() -> None:
    """The Ray runner ships plans as bytes: options (codec, filter, a dtype as a typed null) survive."""
    from ketch import _core

    dtype = pa.struct([("a", pa.int64())])
    df = ketch.from_pydict({"s": ['{"a": 1}', None], "u": ["https://h:81/p", None]}).select(
        col("s").compress("zstd").decompress("zstd").decode("utf-8").alias("c"),
        col("s").deserialize("json", dtype).alias("d"),
        col("s").jq(".a").alias("j"),
        col("u").parse_url().alias("p"),
        col("s").serialize("json").alias("z"),
    )
    copy = _core.PyPlan.from_bytes(df._plan.to_bytes())
    assert repr(copy) == repr(df._plan)
    assert copy.schema() == df._plan.schema()
    assert df.to_pydict()["d"] == [{"a": 1}, None]
