"""Daft's Expression methods for string distances, case converters and the Spark-compatible
string functions: each is the :mod:`ketch.functions.strings_extra` free function of the same
name (``ascii()`` is ``ascii_func``). Mixed into ``Expression``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


def _f() -> Any:
    from ketch.functions import strings_extra  # late: it imports Expression

    return strings_extra


class StringExtraMethods:
    """String distances, case converters, soundex / ascii / translate / split_part /
    substring_index."""

    def levenshtein_distance(self, other: Expression | str) -> Expression:
        """Int64: Levenshtein distance to ``other`` (code points)."""
        return _f().levenshtein_distance(self, other)

    def damerau_levenshtein_distance(self, other: Expression | str) -> Expression:
        """Int64: Damerau–Levenshtein (optimal string alignment) distance to ``other``."""
        return _f().damerau_levenshtein_distance(self, other)

    def hamming_distance_str(self, other: Expression | str) -> Expression:
        """Int64: differing positions; null when the lengths differ."""
        return _f().hamming_distance_str(self, other)

    def jaro_similarity(self, other: Expression | str) -> Expression:
        """Float64: Jaro similarity to ``other``."""
        return _f().jaro_similarity(self, other)

    def jaro_winkler_similarity(self, other: Expression | str) -> Expression:
        """Float64: Jaro–Winkler similarity to ``other``."""
        return _f().jaro_winkler_similarity(self, other)

    def to_camel_case(self) -> Expression:
        """String in lowerCamelCase."""
        return _f().to_camel_case(self)

    def to_upper_camel_case(self) -> Expression:
        """String in UpperCamelCase."""
        return _f().to_upper_camel_case(self)

    def to_snake_case(self) -> Expression:
        """String in snake_case."""
        return _f().to_snake_case(self)

    def to_upper_snake_case(self) -> Expression:
        """String in UPPER_SNAKE_CASE."""
        return _f().to_upper_snake_case(self)

    def to_kebab_case(self) -> Expression:
        """String in kebab-case."""
        return _f().to_kebab_case(self)

    def to_upper_kebab_case(self) -> Expression:
        """String in UPPER-KEBAB-CASE."""
        return _f().to_upper_kebab_case(self)

    def to_title_case(self) -> Expression:
        """String in Title Case."""
        return _f().to_title_case(self)

    def soundex(self) -> Expression:
        """String: the Soundex code."""
        return _f().soundex(self)

    def ascii(self) -> Expression:
        """Int32: the first UTF-8 byte as a signed byte, as Daft (``"é"`` → -61, where Spark gives
        the code point 233); 0 for ``""``."""
        return _f().ascii_func(self)

    def translate(self, from_str: Expression | str, to_str: Expression | str) -> Expression:
        """String: characters of ``from_str`` mapped to ``to_str`` (or removed)."""
        return _f().translate(self, from_str, to_str)

    def split_part(self, delim: Expression | str, part: Expression | int) -> Expression:
        """String: the ``part``-th (1-based) piece split on ``delim``."""
        return _f().split_part(self, delim, part)

    def substring_index(self, delim: Expression | str, count: Expression | int) -> Expression:
        """String: before the ``count``-th ``delim`` (after it from the right when negative)."""
        return _f().substring_index(self, delim, count)
