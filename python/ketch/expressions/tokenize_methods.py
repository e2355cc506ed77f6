"""Daft's ``Expression.tokenize_encode`` / ``tokenize_decode``: each is the
:mod:`ketch.functions.tokenize` free function of the same name. Mixed into ``Expression``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


class TokenizeMethods:
    """Byte-pair encoding of strings into token ids and back (tiktoken BPE files)."""

    def tokenize_encode(
        self,
        tokens_path: str,
        *,
        io_config: Any = None,
        pattern: str | None = None,
        special_tokens: str | None = None,
        use_special_tokens: bool | None = None,
    ) -> Expression:
        """List[UInt32]: the token ids of each string; see :func:`ketch.functions.tokenize_encode`."""
        from ketch.functions.tokenize import tokenize_encode

        return tokenize_encode(
            self,  # type: ignore[arg-type]
            tokens_path,
            io_config=io_config,
            pattern=pattern,
            special_tokens=special_tokens,
            use_special_tokens=use_special_tokens,
        )

    def tokenize_decode(
        self,
        tokens_path: str,
        *,
        io_config: Any = None,
        pattern: str | None = None,
        special_tokens: str | None = None,
    ) -> Expression:
        """String: the text of each list of token ids; see :func:`ketch.functions.tokenize_decode`."""
        from ketch.functions.tokenize import tokenize_decode

        return tokenize_decode(
            self,  # type: ignore[arg-type]
            tokens_path,
            io_config=io_config,
            pattern=pattern,
            special_tokens=special_tokens,
        )
