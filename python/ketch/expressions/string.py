"""``Expression.str``: Daft's string namespace. Every method calls the free function of the same
meaning in :mod:`ketch.functions.strings` (one implementation behind both spellings)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ketch.functions import strings as _s

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


class StringNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def contains(self, substr: str) -> Expression:
        """Bool: whether each string contains ``substr``."""
        return _s.contains(self._expr, substr)

    def startswith(self, prefix: str) -> Expression:
        """Bool: whether each string starts with ``prefix``."""
        return _s.startswith(self._expr, prefix)

    def endswith(self, suffix: str) -> Expression:
        """Bool: whether each string ends with ``suffix``."""
        return _s.endswith(self._expr, suffix)

    def match(self, pattern: str) -> Expression:
        """Bool: whether the regex ``pattern`` matches anywhere in each string."""
        return _s.regexp(self._expr, pattern)

    def extract(self, pattern: str, index: int = 0) -> Expression:
        """String: group ``index`` of the first match of the regex ``pattern`` (null: no match)."""
        return _s.regexp_extract(self._expr, pattern, index)

    def extract_all(self, pattern: str, index: int = 0) -> Expression:
        """List[String]: group ``index`` of every match of the regex ``pattern``."""
        return _s.regexp_extract_all(self._expr, pattern, index)

    def replace(self, pattern: str, replacement: str, regex: bool = False) -> Expression:
        """String: every occurrence of ``pattern`` (plain text, or a regex with ``regex=True``)
        replaced by ``replacement``."""
        if regex:
            return _s.regexp_replace(self._expr, pattern, replacement)
        return _s.replace(self._expr, pattern, replacement)

    def split(self, pattern: str, regex: bool = False) -> Expression:
        """List[String]: each string split on ``pattern`` (plain text, or a regex with ``regex=True``)."""
        if regex:
            return _s.regexp_split(self._expr, pattern)
        return _s.split(self._expr, pattern)

    def concat(self, other: Any) -> Expression:
        """String: each string followed by ``other`` (null if either is null)."""
        return _s.concat(self._expr, other)

    def length(self) -> Expression:
        """UInt64: characters (code points) per string."""
        return _s.length(self._expr)

    def length_bytes(self) -> Expression:
        """UInt64: UTF-8 bytes per string."""
        return _s.length_bytes(self._expr)

    def lower(self) -> Expression:
        """String: lowercase."""
        return _s.lower(self._expr)

    def upper(self) -> Expression:
        """String: uppercase."""
        return _s.upper(self._expr)

    def capitalize(self) -> Expression:
        """String: first character upper, the rest lower."""
        return _s.capitalize(self._expr)

    def reverse(self) -> Expression:
        """String: code points reversed."""
        return _s.reverse(self._expr)

    def lstrip(self) -> Expression:
        """String: leading whitespace removed."""
        return _s.lstrip(self._expr)

    def rstrip(self) -> Expression:
        """String: trailing whitespace removed."""
        return _s.rstrip(self._expr)

    def strip(self) -> Expression:
        """String: surrounding whitespace removed."""
        return _s.strip(self._expr)

    def left(self, nchars: int) -> Expression:
        """String: the first ``nchars`` characters."""
        return _s.left(self._expr, nchars)

    def right(self, nchars: int) -> Expression:
        """String: the last ``nchars`` characters."""
        return _s.right(self._expr, nchars)

    def substr(self, start: int, length: int | None = None) -> Expression:
        """String: ``length`` characters from ``start`` (to the end when None)."""
        return _s.substr(self._expr, start, length)

    def find(self, substr: str) -> Expression:
        """Int64: character index of the first ``substr``, -1 when absent."""
        return _s.find(self._expr, substr)

    def lpad(self, length: int, pad: str) -> Expression:
        """String: truncated to / left-padded with ``pad`` to ``length`` characters."""
        return _s.lpad(self._expr, length, pad)

    def rpad(self, length: int, pad: str) -> Expression:
        """String: truncated to / right-padded with ``pad`` to ``length`` characters."""
        return _s.rpad(self._expr, length, pad)

    def repeat(self, n: int | Expression) -> Expression:
        """String: repeated ``n`` times."""
        return _s.repeat(self._expr, n)

    def like(self, pattern: str) -> Expression:
        """Bool: SQL LIKE, case sensitive."""
        return _s.like(self._expr, pattern)

    def ilike(self, pattern: str) -> Expression:
        """Bool: SQL ILIKE, case insensitive."""
        return _s.ilike(self._expr, pattern)

    def normalize(
        self,
        *,
        remove_punct: bool = False,
        lowercase: bool = False,
        nfd_unicode: bool = False,
        white_space: bool = False,
    ) -> Expression:
        """String normalized for deduplication (see :func:`ketch.functions.normalize`)."""
        return _s.normalize(
            self._expr,
            remove_punct=remove_punct,
            lowercase=lowercase,
            nfd_unicode=nfd_unicode,
            white_space=white_space,
        )

    def count_matches(
        self, patterns: Any, whole_words: bool = False, case_sensitive: bool = True
    ) -> Expression:
        """UInt64: occurrences of any of ``patterns`` (see :func:`ketch.functions.count_matches`)."""
        return _s.count_matches(self._expr, patterns, whole_words=whole_words, case_sensitive=case_sensitive)

    def to_date(self, format: str) -> Expression:
        """Date parsed with the strptime ``format``."""
        return _s.to_date(self._expr, format)

    def to_datetime(self, format: str, timezone: str | None = None) -> Expression:
        """Timestamp[us] parsed with the strptime ``format`` (in ``timezone`` when given)."""
        return _s.to_datetime(self._expr, format, timezone)

    def tokenize_encode(
        self,
        tokens_path: str,
        *,
        io_config: Any = None,
        pattern: str | None = None,
        special_tokens: str | None = None,
        use_special_tokens: bool | None = None,
    ) -> Expression:
        """List[UInt32]: token ids of each string (see :func:`ketch.functions.tokenize_encode`)."""
        return self._expr.tokenize_encode(
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
        """String: the text of each list of token ids (see :func:`ketch.functions.tokenize_decode`)."""
        return self._expr.tokenize_decode(
            tokens_path, io_config=io_config, pattern=pattern, special_tokens=special_tokens
        )
