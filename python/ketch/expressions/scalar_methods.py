"""Daft's flat Expression methods and operators for strings, numbers, null handling and element
access. ``Expression`` inherits them; each calls the free function of the same meaning in
:mod:`ketch.functions` (one implementation behind both spellings)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression
    from ketch.expressions.float import FloatNamespace
    from ketch.expressions.string import StringNamespace


# Daft's hash function names (daft-hash HashFunctionKind::from_str).
HashFunctionName = Literal["xxhash", "xxhash32", "xxhash64", "xxhash3_64", "murmurhash3", "sha1"]


class ScalarFunctionMethods:
    """Mixin of :class:`ketch.Expression`."""

    # -- namespaces ------------------------------------------------------------------------------
    @property
    def str(self) -> StringNamespace:
        from ketch.expressions.string import StringNamespace

        return StringNamespace(self)  # type: ignore[arg-type]

    @property
    def float(self) -> FloatNamespace:
        from ketch.expressions.float import FloatNamespace

        return FloatNamespace(self)  # type: ignore[arg-type]

    # -- operators ---------------------------------------------------------------------------------
    def __mod__(self, other: Any) -> Expression:
        from ketch.functions import math

        return math.modulo(self, other)

    def __rmod__(self, other: Any) -> Expression:
        from ketch.functions import math

        return math.modulo(other, self)

    def __floordiv__(self, other: Any) -> Expression:
        from ketch.functions import math

        return math.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Expression:
        from ketch.functions import math

        return math.floor_divide(other, self)

    def __pow__(self, other: Any) -> Expression:
        from ketch.functions import math

        return math.pow(self, other)  # type: ignore[arg-type]

    def __rpow__(self, other: Any) -> Expression:
        from ketch.expressions.expression import _expr
        from ketch.functions import math

        return math.pow(_expr(other), self)

    def __xor__(self, other: Any) -> Expression:
        from ketch.expressions.expression import Expression

        return Expression._call("xor", self, other)

    def __rxor__(self, other: Any) -> Expression:
        from ketch.expressions.expression import Expression

        return Expression._call("xor", other, self)

    def __lshift__(self, other: Any) -> Expression:
        from ketch.functions import math

        return math.shift_left(self, other)

    def __rshift__(self, other: Any) -> Expression:
        from ketch.functions import math

        return math.shift_right(self, other)

    def __getitem__(self, key: int | str | slice) -> Expression:
        """``expr[i]``: list element ``i`` (negative from the end, null when out of range);
        ``expr["name"]``: the struct field ``name``; ``expr[a:b]``: ``expr.slice(a, b)`` (a list's
        elements or a binary value's bytes; ValueError for a step)."""
        from ketch.functions import general

        if isinstance(key, slice):
            if key.step is not None:
                raise ValueError(f"slicing an expression takes no step, got {key.step!r}")
            return self.slice(0 if key.start is None else key.start, key.stop)

        return general.get(self, key)  # type: ignore[arg-type]

    def __iter__(self) -> Any:
        # __getitem__ would otherwise make every Expression look iterable (for x in expr: ...
        # would build expressions forever).
        raise TypeError("an Expression is not iterable")

    # -- general -------------------------------------------------------------------------------------
    def fill_null(self, fill_value: Any) -> Expression:
        """Nulls replaced by ``fill_value``."""
        from ketch.functions import general

        return general.fill_null(self, fill_value)

    def try_cast(self, dtype: Any) -> Expression:
        """Cast to ``dtype``, null where a value does not convert."""
        from ketch.functions import general

        return general.try_cast(self, dtype)

    def hash(
        self,
        seed: Any | None = None,
        hash_function: HashFunctionName | None = "xxhash",
    ) -> Expression:
        """UInt64: Daft's hash of each value (see :func:`ketch.functions.hash`)."""
        from ketch.functions import general

        return general.hash(self, seed=seed, hash_function=hash_function)

    def minhash(
        self,
        *,
        num_hashes: int,
        ngram_size: int,
        seed: int = 1,
        hash_function: Literal[
            "murmurhash3", "xxhash", "xxhash32", "xxhash64", "xxhash3_64", "sha1"
        ] = "murmurhash3",
    ) -> Expression:
        """MinHash signatures (see :func:`ketch.functions.minhash`)."""
        from ketch.functions import general

        return general.minhash(
            self,  # type: ignore[arg-type]
            num_hashes=num_hashes,
            ngram_size=ngram_size,
            seed=seed,
            hash_function=hash_function,
        )

    def simhash(
        self,
        *,
        ngram_size: int = 3,
        hash_function: Literal[
            "murmurhash3", "xxhash", "xxhash32", "xxhash64", "xxhash3_64", "sha1"
        ] = "xxhash3_64",
    ) -> Expression:
        """SimHash fingerprint (see :func:`ketch.functions.simhash`)."""
        from ketch.functions import general

        return general.simhash(self, ngram_size=ngram_size, hash_function=hash_function)  # type: ignore[arg-type]

    def hamming_distance(self, other: Expression) -> Expression:
        """Differing bits between two fingerprints (see :func:`ketch.functions.hamming_distance`)."""
        from ketch.functions import general

        return general.hamming_distance(self, other)

    def get(self, key: int | str, default: Any = None) -> Expression:
        """List element (int key) or struct field (str key); see :func:`ketch.functions.get`."""
        from ketch.functions import general

        return general.get(self, key, default)  # type: ignore[arg-type]

    # -- numbers -------------------------------------------------------------------------------------
    def _math(self, name: str, *args: Any, **kwargs: Any) -> Expression:
        from ketch.functions import math

        return getattr(math, name)(self, *args, **kwargs)

    def ceil(self) -> Expression:
        """Smallest integral value >= x."""
        return self._math("ceil")

    def floor(self) -> Expression:
        """Largest integral value <= x."""
        return self._math("floor")

    def sign(self) -> Expression:
        """-1, 0 or 1."""
        return self._math("sign")

    def negate(self) -> Expression:
        """-x (checked)."""
        return self._math("negate")

    def round(self, decimals: int = 0) -> Expression:
        """Rounded to ``decimals`` places, halves away from zero."""
        return self._math("round", decimals)

    def clip(self, min: Any = None, max: Any = None) -> Expression:
        """Limited to [min, max]."""
        return self._math("clip", min, max)

    def sqrt(self) -> Expression:
        """Square root (float64)."""
        return self._math("sqrt")

    def cbrt(self) -> Expression:
        """Cube root (float64)."""
        return self._math("cbrt")

    def exp(self) -> Expression:
        """e ** x (float64)."""
        return self._math("exp")

    def expm1(self) -> Expression:
        """e ** x - 1 (float64)."""
        return self._math("expm1")

    def ln(self) -> Expression:
        """Natural logarithm (float64)."""
        return self._math("ln")

    def log(self, base: float = 2.718281828459045) -> Expression:
        """Logarithm in ``base`` (float64)."""
        return self._math("log", base)

    def log2(self) -> Expression:
        """Base-2 logarithm (float64)."""
        return self._math("log2")

    def log10(self) -> Expression:
        """Base-10 logarithm (float64)."""
        return self._math("log10")

    def log1p(self) -> Expression:
        """ln(1 + x) (float64)."""
        return self._math("log1p")

    def sin(self) -> Expression:
        """Sine (float64)."""
        return self._math("sin")

    def cos(self) -> Expression:
        """Cosine (float64)."""
        return self._math("cos")

    def tan(self) -> Expression:
        """Tangent (float64)."""
        return self._math("tan")

    def csc(self) -> Expression:
        """Cosecant (float64)."""
        return self._math("csc")

    def sec(self) -> Expression:
        """Secant (float64)."""
        return self._math("sec")

    def cot(self) -> Expression:
        """Cotangent (float64)."""
        return self._math("cot")

    def arcsin(self) -> Expression:
        """Arc sine (float64)."""
        return self._math("arcsin")

    def arccos(self) -> Expression:
        """Arc cosine (float64)."""
        return self._math("arccos")

    def arctan(self) -> Expression:
        """Arc tangent (float64)."""
        return self._math("arctan")

    def arctan2(self, other: Any) -> Expression:
        """Four-quadrant arc tangent of (self, other) (float64)."""
        return self._math("arctan2", other)

    def sinh(self) -> Expression:
        """Hyperbolic sine (float64)."""
        return self._math("sinh")

    def cosh(self) -> Expression:
        """Hyperbolic cosine (float64)."""
        return self._math("cosh")

    def tanh(self) -> Expression:
        """Hyperbolic tangent (float64)."""
        return self._math("tanh")

    def arcsinh(self) -> Expression:
        """Inverse hyperbolic sine (float64)."""
        return self._math("arcsinh")

    def arccosh(self) -> Expression:
        """Inverse hyperbolic cosine (float64)."""
        return self._math("arccosh")

    def arctanh(self) -> Expression:
        """Inverse hyperbolic tangent (float64)."""
        return self._math("arctanh")

    def radians(self) -> Expression:
        """Degrees → radians."""
        return self._math("radians")

    def degrees(self) -> Expression:
        """Radians → degrees."""
        return self._math("degrees")

    def is_nan(self) -> Expression:
        """Bool: NaN (null stays null)."""
        return self._math("is_nan")

    def is_inf(self) -> Expression:
        """Bool: +-inf (null stays null)."""
        return self._math("is_inf")

    def not_nan(self) -> Expression:
        """Bool: not NaN (null stays null)."""
        return self._math("not_nan")

    def fill_nan(self, fill_value: Any) -> Expression:
        """NaN replaced by ``fill_value``."""
        return self._math("fill_nan", fill_value)

    def shift_left(self, other: Any) -> Expression:
        """``self << other`` on integers (checked)."""
        return self._math("shift_left", other)

    def shift_right(self, other: Any) -> Expression:
        """``self >> other`` on integers (checked)."""
        return self._math("shift_right", other)

    def bitwise_and(self, other: Any) -> Expression:
        """Bitwise AND on integers."""
        return self._math("bitwise_and", other)

    def bitwise_or(self, other: Any) -> Expression:
        """Bitwise OR on integers."""
        return self._math("bitwise_or", other)

    def bitwise_xor(self, other: Any) -> Expression:
        """Bitwise XOR on integers."""
        return self._math("bitwise_xor", other)

    # -- strings (Daft 0.7's flat spellings of the .str methods) --------------------------------
    def _str(self, name: str, *args: Any, **kwargs: Any) -> Expression:
        from ketch.functions import strings

        return getattr(strings, name)(self, *args, **kwargs)

    def contains(self, substr: str) -> Expression:
        """Bool: contains ``substr``."""
        return self._str("contains", substr)

    def startswith(self, prefix: str) -> Expression:
        """Bool: starts with ``prefix``."""
        return self._str("startswith", prefix)

    def endswith(self, suffix: str) -> Expression:
        """Bool: ends with ``suffix``."""
        return self._str("endswith", suffix)

    def regexp(self, pattern: str) -> Expression:
        """Bool: the regex matches."""
        return self._str("regexp", pattern)

    def regexp_count(self, pattern: str) -> Expression:
        """UInt64: regex matches."""
        return self._str("regexp_count", pattern)

    def regexp_extract(self, pattern: str, index: int = 0) -> Expression:
        """String: group ``index`` of the first match."""
        return self._str("regexp_extract", pattern, index)

    def regexp_extract_all(self, pattern: str, index: int = 0) -> Expression:
        """List[String]: group ``index`` of every match."""
        return self._str("regexp_extract_all", pattern, index)

    def regexp_replace(self, pattern: str, replacement: str) -> Expression:
        """String: regex matches replaced."""
        return self._str("regexp_replace", pattern, replacement)

    def regexp_split(self, pattern: str) -> Expression:
        """List[String]: split on regex matches."""
        return self._str("regexp_split", pattern)

    def replace(self, search: str, replacement: str) -> Expression:
        """String: occurrences of ``search`` replaced."""
        return self._str("replace", search, replacement)

    def split(self, split_on: str) -> Expression:
        """List[String]: split on ``split_on``."""
        return self._str("split", split_on)

    def lower(self) -> Expression:
        """String: lowercase."""
        return self._str("lower")

    def upper(self) -> Expression:
        """String: uppercase."""
        return self._str("upper")

    def capitalize(self) -> Expression:
        """String: capitalized."""
        return self._str("capitalize")

    def reverse(self) -> Expression:
        """String: reversed."""
        return self._str("reverse")

    def lstrip(self) -> Expression:
        """String: leading whitespace removed."""
        return self._str("lstrip")

    def rstrip(self) -> Expression:
        """String: trailing whitespace removed."""
        return self._str("rstrip")

    def strip(self) -> Expression:
        """String: surrounding whitespace removed."""
        return self._str("strip")

    def length(self) -> Expression:
        """UInt64: characters / bytes / elements."""
        return self._str("length")

    def length_bytes(self) -> Expression:
        """UInt64: UTF-8 bytes."""
        return self._str("length_bytes")

    def left(self, nchars: int) -> Expression:
        """String: first ``nchars`` characters."""
        return self._str("left", nchars)

    def right(self, nchars: int) -> Expression:
        """String: last ``nchars`` characters."""
        return self._str("right", nchars)

    def substr(self, start: int, length: int | None = None) -> Expression:
        """String: a substring by characters."""
        return self._str("substr", start, length)

    def lpad(self, length: int, pad: str) -> Expression:
        """String: left-padded / truncated to ``length``."""
        return self._str("lpad", length, pad)

    def rpad(self, length: int, pad: str) -> Expression:
        """String: right-padded / truncated to ``length``."""
        return self._str("rpad", length, pad)

    def repeat(self, n: Any) -> Expression:
        """String: repeated ``n`` times."""
        return self._str("repeat", n)

    def like(self, pattern: str) -> Expression:
        """Bool: SQL LIKE."""
        return self._str("like", pattern)

    def ilike(self, pattern: str) -> Expression:
        """Bool: SQL ILIKE."""
        return self._str("ilike", pattern)

    def find(self, substr: str) -> Expression:
        """Int64: character index of ``substr`` or -1."""
        return self._str("find", substr)

    def normalize(self, **options: bool) -> Expression:
        """String: normalized (remove_punct, lowercase, nfd_unicode, white_space)."""
        return self._str("normalize", **options)

    def count_matches(
        self, patterns: Any, whole_words: bool = False, case_sensitive: bool = True
    ) -> Expression:
        """UInt64: occurrences of ``patterns``."""
        return self._str("count_matches", patterns, whole_words=whole_words, case_sensitive=case_sensitive)

    def to_date(self, format: str) -> Expression:
        """Date parsed with ``format``."""
        return self._str("to_date", format)

    def to_datetime(self, format: str, timezone: str | None = None) -> Expression:
        """Timestamp[us] parsed with ``format``."""
        return self._str("to_datetime", format, timezone)

    def concat(self, other: Any) -> Expression:
        """String: self followed by ``other``."""
        return self._str("concat", other)
