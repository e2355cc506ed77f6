"""General expression functions in Daft's free-function spelling: null handling, conditionals,
hashing, casts and element access. The flat Expression methods call these."""

from __future__ import annotations

from typing import Any, Literal

import pyarrow as pa

from ketch.datatype import DataType
from ketch.expressions.expression import Expression, _expr, lit


def fill_null(expr: Any, fill_value: Any) -> Expression:
    """``expr`` with nulls replaced by ``fill_value`` (a literal or an expression; both are cast to
    their common type)."""
    return Expression._call("coalesce", _expr(expr), _expr(fill_value))


def coalesce(*args: Any) -> Expression:
    """The first non-null value of the arguments, row by row (null when all are null)."""
    if not args:
        raise ValueError("coalesce needs at least one argument")
    return Expression._call("coalesce", *[_expr(a) for a in args])


def is_null(expr: Any) -> Expression:
    """Bool: whether each value is null."""
    return _expr(expr).is_null()


def not_null(expr: Any) -> Expression:
    """Bool: whether each value is not null."""
    return _expr(expr).not_null()


def cast(expr: Any, dtype: Any) -> Expression:
    """``expr`` cast to ``dtype``; a cast that can never work fails at plan time (KetchTypeError)
    and a value that does not convert fails the query naming it (see :func:`try_cast`)."""
    return _expr(expr).cast(dtype)


def try_cast(expr: Any, dtype: Any) -> Expression:
    """``expr`` cast to ``dtype``, null where a value does not convert (``"x"`` → int, 300 → int8)."""
    target = DataType._infer(dtype).to_arrow()
    return Expression._call("try_cast", _expr(expr), dtype=pa.scalar(None, type=target))


HashFunctionName = Literal["xxhash", "xxhash32", "xxhash64", "xxhash3_64", "murmurhash3", "sha1"]
_HASH_FUNCTIONS = ("xxhash", "xxhash32", "xxhash64", "xxhash3_64", "murmurhash3", "sha1")


def _hash_seed(seed: Any) -> Expression:
    if isinstance(seed, Expression):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"hash: seed must be an int or an integer Expression, got {seed!r}")
    if not 0 <= seed < 2**64:
        raise ValueError(f"hash: seed must be in [0, 2**64), got {seed}")
    return lit(pa.scalar(seed, pa.uint64()))


def hash(
    *exprs: Any,
    seed: Any | None = None,
    hash_function: HashFunctionName | None = "xxhash",
) -> Expression:
    """UInt64: Daft's hash of each row, the same values as Daft 0.7.26.

    ``hash_function``: "xxhash" (= "xxhash3_64", XXH3_64bits), "xxhash64", "xxhash32",
    "murmurhash3" (MurmurHash3_x86_32, widened) or "sha1" (the first 8 digest bytes read
    little-endian); None means "xxhash". ``seed``: an int in [0, 2**64) or an integer Expression
    (one seed per row; null seeds count as 0). Without a seed the xxHash functions use seed 0,
    murmurhash3 uses 42 and sha1 hashes the bytes alone; with one, sha1 hashes the seed's 8
    little-endian bytes before the value.

    Bytes hashed: strings and binaries their bytes; numbers their little-endian bytes at their
    width (int8: 1 byte, float64: 8); booleans the text "1" / "0"; decimals their text with the
    scale's digits ("1.50"); dates, times, timestamps and durations their stored integer. Nulls
    hash too (Daft's rule, never null out): strings and binaries as "", the other scalars as the
    unseeded hash of no bytes (xxHash) or the seeded one (murmurhash3, sha1). A list hashes the
    bytes of its elements' hashes; a struct chains its fields, each field's hash seeding the next;
    null lists and structs stay null.

    Several expressions hash together the same way: ``hash(a, b)`` is ``hash(b, seed=hash(a))``.

    Raises:
        ValueError: no expression, a seed outside [0, 2**64), an unknown ``hash_function``.
        TypeError: a seed that is not an int or an integer expression; a type Daft cannot hash
            (maps, unions).
    """
    if not exprs:
        raise ValueError("hash() requires at least one expression")
    if hash_function is None:
        hash_function = "xxhash"
    if not isinstance(hash_function, str) or hash_function.lower() not in _HASH_FUNCTIONS:
        raise ValueError(
            f"hash: invalid hash_function {hash_function!r}; use one of {', '.join(_HASH_FUNCTIONS)}"
        )
    from ketch.expressions.expression import col

    targets = [col(e) if isinstance(e, str) else _expr(e) for e in exprs]
    out = None if seed is None else _hash_seed(seed)
    for target in targets:
        args = [target] if out is None else [target, out]
        out = Expression._call("hash", *args, hash_function=hash_function)
    assert out is not None
    return out


def get(expr: Expression, key: int | str, default: Any = None) -> Expression:
    """An element: ``key`` an int picks list element ``key`` (negative from the end; null, or
    ``default``, when out of range); ``key`` a str picks the struct field of that name (the
    output column is named by the field, as in Daft)."""
    if isinstance(key, bool) or not isinstance(key, int | str):
        raise TypeError(
            f"Argument {key} of type {type(key)} is not supported in `get`. "
            "Only int and string types are supported."
        )
    if isinstance(key, str):
        if default is not None:
            raise ValueError("`get` does not support default values for getting a struct field")
        out = Expression._call("struct_get", expr, field=key)
        return out if key == "*" else out.alias(key)  # Daft names a struct field's column by it
    out = Expression._call("list_getitem", expr, index=key)
    return out if default is None else fill_null(out, default)


class WhenExpr(Expression):
    """A CASE WHEN chain: ``when(c1, v1).when(c2, v2).otherwise(d)``. Used as an expression before
    ``otherwise``, rows that match no condition are null. A null condition counts as false."""

    def __init__(self, branches: list[tuple[Expression, Expression]], otherwise: Any = None) -> None:
        self._branches = branches
        out = _expr(otherwise)
        for condition, then in reversed(branches):
            guard = fill_null(condition, False)
            out = Expression._call("if_else", guard, then, out)
        super().__init__(out._native)

    def when(self, condition: Any, then: Any) -> WhenExpr:
        """Adds a branch, tried after the earlier ones."""
        return WhenExpr([*self._branches, (_expr(condition), _expr(then))])

    def otherwise(self, value: Any) -> Expression:
        """The value for rows that match no condition."""
        return Expression(WhenExpr(self._branches, value)._native)


def when(condition: Any, then: Any) -> WhenExpr:
    """Starts a conditional (SQL CASE WHEN): ``then`` where ``condition`` is true; chain more
    ``.when(...)`` and end with ``.otherwise(value)`` (null when left out). Branch values are cast
    to their common type."""
    return WhenExpr([(_expr(condition), _expr(then))])


def if_else(condition: Any, if_true: Any, if_false: Any) -> Expression:
    """``if_true`` where ``condition`` is true, ``if_false`` where false, null where null."""
    return Expression._call("if_else", _expr(condition), _expr(if_true), _expr(if_false))


__all__ = [
    "cast",
    "coalesce",
    "fill_null",
    "get",
    "hash",
    "if_else",
    "is_null",
    "not_null",
    "try_cast",
    "when",
    "WhenExpr",
]


def eq_null_safe(left: Any, right: Any) -> Expression:
    """Bool: ``left == right`` where null equals null (true) and null differs from any value
    (false); never null."""
    a, b = _expr(left), _expr(right)
    return Expression._call("coalesce", a == b, a.is_null() & b.is_null())


__all__ += ["eq_null_safe"]


def minhash(
    expr: Expression | str,
    *,
    num_hashes: int,
    ngram_size: int,
    seed: int = 1,
    hash_function: HashFunctionName = "murmurhash3",
) -> Expression:
    """FixedSizeList[UInt32; num_hashes]: Daft 0.7.26's MinHash signature of each string's word
    n-grams, the same values as Daft.

    Words are cut at each ASCII space (spaces are not collapsed: "a  b" has an empty middle
    word); each n-gram is ``ngram_size`` consecutive words joined by their spaces, and a string
    with fewer words is one n-gram (an empty string has none: every element is 2**32 - 1).
    Each n-gram hashes to 32 bits with ``hash_function`` seeded by ``seed`` (sha1 unseeded), then
    ``num_hashes`` permutations ``a*h + b`` (64-bit wrapping, reduced by Daft's fast remainder
    modulo 2**61 - 1 and masked to 32 bits), ``a`` and ``b`` drawn from fastrand's wyrand seeded
    with ``seed``; element i is the minimum over the n-grams. Two strings' signatures agree in
    about a Jaccard-similarity share of positions. Null stays null.

    Raises:
        ValueError: ``num_hashes`` or ``ngram_size`` not positive, ``seed`` outside [0, 2**32),
            an unknown ``hash_function``.
        TypeError: a non-string input (at plan time).
    """
    from ketch.expressions.expression import col

    target = col(expr) if isinstance(expr, str) else expr
    return Expression._call(
        "minhash",
        target,
        num_hashes=num_hashes,
        ngram_size=ngram_size,
        seed=seed,
        hash_function=hash_function,
    )


def simhash(
    text: Expression | str,
    *,
    ngram_size: int = 3,
    hash_function: HashFunctionName = "xxhash3_64",
) -> Expression:
    """UInt64: Daft 0.7.26's SimHash fingerprint of each string, the same values as Daft.

    The features are every run of ``ngram_size`` consecutive characters (Unicode code points),
    each hashed with ``hash_function`` and seed 0 (murmurhash3 too; sha1 unseeded); bit i is set
    when more features have bit i set than clear. Similar texts give fingerprints a small Hamming
    distance apart. A string shorter than ``ngram_size`` characters gives 0; null stays null.

    Raises:
        ValueError: ``ngram_size`` not positive, an unknown ``hash_function``.
        TypeError: a non-string input (at plan time).
    """
    from ketch.expressions.expression import col

    target = col(text) if isinstance(text, str) else text
    return Expression._call("simhash", target, ngram_size=ngram_size, hash_function=hash_function)


def hamming_distance(left: Any, right: Any) -> Expression:
    """UInt32: the number of differing bits between two fingerprints (popcount of XOR), e.g.
    two :func:`simhash` values or two image hashes.

    Integers of any width compare as UInt64 (a negative value gives null, as in Daft);
    FixedSizeBinary values must have the same width. Null in either gives null.

    Raises:
        TypeError: (at plan time) inputs that are not both integers or both FixedSizeBinary of
            one width.
    """
    return Expression._call("hamming_distance", _expr(left), _expr(right))


__all__ += ["hamming_distance", "minhash", "simhash"]
