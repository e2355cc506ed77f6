"""Daft's ``tokenize_encode`` / ``tokenize_decode``: tiktoken-style byte-pair encoding as free
functions (``ketch.functions.tokenize_encode(col("text"), "/data/cl100k_base.tiktoken")``) and
Expression methods (``col("text").tokenize_encode(...)``, also under ``.str``).

The kernels are native (``cpp/ketch/functions/tokenize/``): the text is split into pieces by a
PCRE2 regular expression, each piece merged pairwise by rank exactly as tiktoken does (its
``_byte_pair_merge``), the token file read once per query through Ketch's object readers."""

from __future__ import annotations

from typing import Any

from ketch.expressions.expression import Expression

__all__ = ["tokenize_decode", "tokenize_encode"]


def _check(function: str, tokens_path: Any, pattern: Any, special_tokens: Any) -> None:
    if not isinstance(tokens_path, str):
        raise TypeError(f"{function}: tokens_path must be a str, got {type(tokens_path).__name__}")
    for name, value in (("pattern", pattern), ("special_tokens", special_tokens)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{function}: {name} must be a str or None, got {type(value).__name__}")


def tokenize_encode(
    expr: Expression,
    tokens_path: str,
    *,
    io_config: Any = None,
    pattern: str | None = None,
    special_tokens: str | None = None,
    use_special_tokens: bool | None = None,
) -> Expression:
    """Encodes each string as a list of token ids: ``List[UInt32]`` (Arrow
    ``large_list<uint32>``), one list per row; null stays null.

    ``tokens_path`` is a tiktoken BPE file (one ``BASE64(token bytes) RANK`` line per token; the
    rank is the id): a local path, ``file://``, ``s3://`` (credentials from ``io_config``) or
    ``http(s)://`` URL, read once per query. tiktoken's built-in names (``cl100k_base``,
    ``o200k_base``, ``p50k_base``, ``p50k_edit``, ``r50k_base``) are fetched by Daft from a hub
    this engine does not reach: they raise ``KetchNotImplementedError`` asking for the file's
    path. A file named after one of them (``.../cl100k_base.tiktoken``) gets that set's pattern
    and special tokens by default.

    Args:
        expr: string column to encode.
        tokens_path: path or URL of the token file.
        io_config: ``ketch.io.IOConfig`` for an ``s3://`` token file.
        pattern: the regular expression (PCRE2 syntax: lookaheads, ``\\p{L}`` classes) whose
            matches are the pieces merged separately; required unless the file is named after a
            built-in set (Daft requires it for every file). PCRE2's ``\\s`` also matches U+180E,
            which tiktoken's regex engine does not: the one code point where pieces can differ.
        special_tokens: an extra set of special tokens given ids after the largest rank; only
            ``"llama3"`` (256 tokens such as ``<|begin_of_text|>``, as Daft).
        use_special_tokens: whether special-token texts in the input become their ids
            (tiktoken's ``encode`` with all specials allowed) instead of ordinary text
            (``encode_ordinary``); defaults to whether ``special_tokens`` is given.

    Raises:
        KetchTypeError: the column is not a string (at plan time).
        KetchNotImplementedError: a built-in set name.
        KetchValueError: no pattern for a file not named after a set, an invalid pattern, an
            unknown special-token set (plan time); an unreadable or malformed token file,
            naming the file and line (run time).
    """
    _check("tokenize_encode", tokens_path, pattern, special_tokens)
    if use_special_tokens is not None and not isinstance(use_special_tokens, bool):
        raise TypeError(
            f"tokenize_encode: use_special_tokens must be a bool or None, got {use_special_tokens!r}"
        )
    from ketch.io.config import io_options

    return Expression._call(
        "tokenize_encode",
        expr,
        tokens_path=tokens_path,
        pattern=pattern,
        special_tokens=special_tokens,
        use_special_tokens=use_special_tokens,
        **io_options(io_config),
    )


def tokenize_decode(
    expr: Expression,
    tokens_path: str,
    *,
    io_config: Any = None,
    pattern: str | None = None,
    special_tokens: str | None = None,
) -> Expression:
    """Decodes each list of integer token ids back to its string (``String``, Arrow
    ``large_string``): the concatenated bytes of the tokens, special tokens included (Daft
    rejects special ids; their text is returned here). Null stays null. Options as
    :func:`tokenize_encode` (the pattern is required by the same rule, though decoding does not
    use it).

    Raises:
        KetchTypeError: the column is not a list of integers (at plan time).
        KetchValueError: an id that is not in the vocabulary or is negative, a null id, or ids
            whose bytes are not valid UTF-8; each names the id and the source row.
    """
    _check("tokenize_decode", tokens_path, pattern, special_tokens)
    from ketch.io.config import io_options

    return Expression._call(
        "tokenize_decode",
        expr,
        tokens_path=tokens_path,
        pattern=pattern,
        special_tokens=special_tokens,
        **io_options(io_config),
    )
