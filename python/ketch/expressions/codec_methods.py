"""Daft's flat Expression methods for byte codecs, compression, serialization, URL parsing and
jq (``col("b").decompress("gzip")``): each is the ``ketch.functions`` free function of the same
name (one implementation behind both spellings). Mixed into ``Expression``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression
    from ketch.functions.codecs import COMPRESSION_CODEC, ENCODING_CHARSET


def _codecs() -> Any:
    from ketch.functions import codecs  # late: ketch.functions imports this module's host

    return codecs


class CodecMethods:
    """encode/decode/compress/decompress (and their try_ forms), serialize/deserialize,
    parse_url and jq as Expression methods."""

    def encode(self, charset: ENCODING_CHARSET) -> Expression:
        """See :func:`ketch.functions.encode`."""
        return _codecs().encode(self, charset=charset)

    def decode(self, charset: ENCODING_CHARSET | None = None) -> Expression:
        """See :func:`ketch.functions.decode`. Without a charset (Ketch's own): the bytes decoded
        as the media their first bytes tell, see :func:`ketch.functions.decode_media`."""
        if charset is None:
            from ketch.functions.media import decode_media

            return decode_media(self)
        return _codecs().decode(self, charset=charset)

    def try_encode(self, charset: ENCODING_CHARSET) -> Expression:
        """See :func:`ketch.functions.try_encode`."""
        return _codecs().try_encode(self, charset=charset)

    def try_decode(self, charset: ENCODING_CHARSET) -> Expression:
        """See :func:`ketch.functions.try_decode`."""
        return _codecs().try_decode(self, charset=charset)

    def compress(self, codec: COMPRESSION_CODEC) -> Expression:
        """See :func:`ketch.functions.compress`."""
        return _codecs().compress(self, codec=codec)

    def decompress(self, codec: COMPRESSION_CODEC) -> Expression:
        """See :func:`ketch.functions.decompress`."""
        return _codecs().decompress(self, codec=codec)

    def try_compress(self, codec: COMPRESSION_CODEC) -> Expression:
        """See :func:`ketch.functions.try_compress`."""
        return _codecs().try_compress(self, codec=codec)

    def try_decompress(self, codec: COMPRESSION_CODEC) -> Expression:
        """See :func:`ketch.functions.try_decompress`."""
        return _codecs().try_decompress(self, codec=codec)

    def serialize(self, format: Literal["json"]) -> Expression:
        """See :func:`ketch.functions.serialize`."""
        return _codecs().serialize(self, format=format)

    def deserialize(self, format: Literal["json"], dtype: Any) -> Expression:
        """See :func:`ketch.functions.deserialize`."""
        return _codecs().deserialize(self, format=format, dtype=dtype)

    def try_deserialize(self, format: Literal["json"], dtype: Any) -> Expression:
        """See :func:`ketch.functions.try_deserialize`."""
        return _codecs().try_deserialize(self, format=format, dtype=dtype)

    def parse_url(self) -> Expression:
        """See :func:`ketch.functions.parse_url`."""
        return _codecs().parse_url(self)

    def jq(self, filter: str) -> Expression:
        """See :func:`ketch.functions.jq`."""
        return _codecs().jq(self, filter)
