"""Daft's byte codec, compression, serialization, URL-parsing and jq functions in the
free-function spelling (``ketch.functions.compress(col("b"), "gzip")``); the flat Expression
methods (``col("b").compress("gzip")``) call these. All run as native kernels.

Codec names (case-insensitive): ``utf-8``/``utf8``, ``base64`` (RFC 4648, padded), ``hex``
(lower case), and the compressions ``deflate`` (raw RFC 1951), ``zlib`` (RFC 1950), ``gzip``/``gz``
(RFC 1952), plus Ketch's additions ``zstd``, ``lz4`` (frame format), ``brotli`` and ``bz2``, all
through Arrow's ``arrow::util::Codec``. An unknown codec raises KetchValueError when the
expression is planned (``select``/``with_column``), naming it. Any codec works with any of the
eight functions (as in Daft, ``compress`` is ``encode`` with a compression codec; Ketch keeps
the name the user wrote in errors and ``explain()``)."""

from __future__ import annotations

from typing import Any, Literal

import pyarrow as pa

from ketch.datatype import DataType
from ketch.expressions.expression import Expression, _expr
from ketch.functions._args import literal_str

ENCODING_CHARSET = Literal["utf-8", "utf8", "base64", "hex"]
COMPRESSION_CODEC = Literal["deflate", "gzip", "gz", "zlib", "zstd", "lz4", "brotli", "bz2"]

__all__ = [
    "compress",
    "decode",
    "decompress",
    "deserialize",
    "encode",
    "jq",
    "parse_url",
    "serialize",
    "try_compress",
    "try_decode",
    "try_decompress",
    "try_deserialize",
    "try_encode",
]


def _codec_call(function: str, expr: Any, codec: Any, what: str, public_name: str) -> Expression:
    return Expression._call(function, _expr(expr), codec=literal_str(codec, what, public_name))


def encode(expr: Any, charset: ENCODING_CHARSET) -> Expression:
    """Binary (large_binary): each string or binary value encoded with ``charset``.

    ``utf-8`` gives a string's bytes (binary input is checked to be valid UTF-8); ``base64`` and
    ``hex`` give the text encoding's ASCII bytes; a compression codec compresses. A value that
    cannot be encoded (non-UTF-8 bytes for ``utf-8``) raises KetchValueError naming the function,
    the source row and the codec. Nulls stay null."""
    return _codec_call("encode", expr, charset, "charset", "encode")


def decode(expr: Any, charset: ENCODING_CHARSET) -> Expression:
    """Each binary (or string) value decoded with ``charset``: a String for ``utf-8`` (bytes
    checked to be valid UTF-8), else Binary (large_binary): ``base64``/``hex`` text decoded,
    compressed bytes decompressed. A value that does not decode raises KetchValueError naming
    the function, the source row and the codec; nulls stay null."""
    return _codec_call("decode", expr, charset, "charset", "decode")


def try_encode(expr: Any, charset: ENCODING_CHARSET) -> Expression:
    """:func:`encode`, with null where a value cannot be encoded."""
    return _codec_call("try_encode", expr, charset, "charset", "try_encode")


def try_decode(expr: Any, charset: ENCODING_CHARSET) -> Expression:
    """:func:`decode`, with null where a value does not decode."""
    return _codec_call("try_decode", expr, charset, "charset", "try_decode")


def compress(expr: Any, codec: COMPRESSION_CODEC) -> Expression:
    """Binary (large_binary): each string's or binary's bytes compressed with ``codec``
    (zlib-family codecs at zlib's default level 6, as Python's ``zlib.compress``)."""
    return _codec_call("compress", expr, codec, "codec", "compress")


def decompress(expr: Any, codec: COMPRESSION_CODEC) -> Expression:
    """Binary (large_binary): each value decompressed with ``codec``. Concatenated gzip members
    and zstd/lz4 frames decode as one value. Corrupt or truncated input raises KetchValueError
    naming the source row and the codec."""
    return _codec_call("decompress", expr, codec, "codec", "decompress")


def try_compress(expr: Any, codec: COMPRESSION_CODEC) -> Expression:
    """:func:`compress`, with null where a value cannot be compressed."""
    return _codec_call("try_compress", expr, codec, "codec", "try_compress")


def try_decompress(expr: Any, codec: COMPRESSION_CODEC) -> Expression:
    """:func:`decompress`, with null where a value is corrupt or truncated."""
    return _codec_call("try_decompress", expr, codec, "codec", "try_decompress")


def _format(format: Any, function: str) -> str:
    value = literal_str(format, "format", function)
    if value != "json":
        raise ValueError(f"{function}: unsupported format {value!r}; supported: 'json'")
    return value


def serialize(expr: Any, format: Literal["json"]) -> Expression:
    """String (large_string): each value as compact JSON text: structs as objects (null fields
    written), lists as arrays, maps as objects (non-string keys as their JSON text), binary as
    lower-case hex strings, dates/times/timestamps as ISO 8601 strings, NaN and infinities as
    ``null``. A null value stays null. Union types raise KetchNotImplementedError at plan time."""
    return Expression._call("serialize", _expr(expr), format=_format(format, "serialize"))


def _deserialize(function: str, expr: Any, format: Any, dtype: Any) -> Expression:
    target = DataType._infer(dtype).to_arrow()
    return Expression._call(
        function, _expr(expr), format=_format(format, function), dtype=pa.scalar(None, type=target)
    )


def deserialize(expr: Any, format: Literal["json"], dtype: Any) -> Expression:
    """``dtype``: each string parsed as one JSON text and converted by Arrow's JSON reader
    (structs from objects by field name, lists from arrays; numbers and booleans become their
    text for a string ``dtype``). JSON ``null`` and null rows give null. A row that is not
    exactly one JSON value, or does not convert to ``dtype``, raises KetchValueError naming the
    source row; a ``dtype`` Arrow's JSON reader cannot produce raises at plan time."""
    return _deserialize("deserialize", expr, format, dtype)


def try_deserialize(expr: Any, format: Literal["json"], dtype: Any) -> Expression:
    """:func:`deserialize`, with null where a row is not JSON or does not convert."""
    return _deserialize("try_deserialize", expr, format, dtype)


def parse_url(expr: Any) -> Expression:
    """Struct ``{scheme, username, password, host: String, port: UInt16, path, query,
    fragment: String}``: each URL's components, parsed by libcurl's URL API (any scheme:
    ``s3://``, ``gs://``...). The scheme is lower-cased; a port equal to the scheme's default
    (443 for https) and absent parts are null; an empty user name is null. A string that is not
    an absolute URL gives a struct of nulls (as Daft); a null URL gives null. Components stay
    percent-encoded. Passwords are returned as data only: no error message or log shows a URL."""
    return Expression._call("url_parse", _expr(expr))


def jq(expr: Any, filter: str) -> Expression:
    """String (large_string): the jq program ``filter`` run on each row's JSON text with libjq
    (the jq 1.6 language; Daft uses jaq, which agrees on ordinary filters). No output gives
    null, one output its compact JSON text (strings keep their quotes), several outputs a JSON
    array of them. An invalid filter raises KetchValueError at plan time; a row that is not
    JSON, or a jq runtime error, raises KetchValueError naming the source row. Numbers are
    doubles in jq 1.6: integers beyond 2**53 lose precision."""
    return Expression._call("jq", _expr(expr), filter=literal_str(filter, "filter", "jq"))
