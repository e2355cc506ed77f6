"""General expression functions in Daft's free-function spelling: null handling, conditionals,
hashing, casts and element access. The flat Expression methods call these."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ketch.datatype import DataType
from ketch.expressions.expression import Expression, _expr


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


def hash(expr: Any, seed: Any = None, hash_function: str | None = "xxhash") -> Expression:
    """UInt64: XXH64 of each value's bytes (strings and binaries: their bytes; numbers and bools:
    their little-endian fixed-width bytes) with ``seed`` (default 0). Nulls stay null.

    Differs from Daft, which uses XXH3-64 and hashes nulls too; only ``hash_function="xxhash"``
    (meaning XXH64 here) is available."""
    if hash_function not in (None, "xxhash", "xxhash64"):
        from ketch.errors import KetchNotImplementedError

        raise KetchNotImplementedError(
            f"hash: hash_function {hash_function!r} is not available; use 'xxhash'"
        )
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise TypeError(f"hash: seed must be an int literal, got {seed!r}")
    return Expression._call("hash", _expr(expr), seed=0 if seed is None else seed)


def get(expr: Expression, key: int | str, default: Any = None) -> Expression:
    """An element: ``key`` an int picks list element ``key`` (negative from the end; null, or
    ``default``, when out of range); ``key`` a str picks the struct field of that name."""
    if isinstance(key, bool) or not isinstance(key, int | str):
        raise TypeError(
            f"Argument {key} of type {type(key)} is not supported in `get`. "
            "Only int and string types are supported."
        )
    if isinstance(key, str):
        if default is not None:
            raise ValueError("`get` does not support default values for getting a struct field")
        return Expression._call("struct_get", expr, field=key)
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
    hash_function: str = "murmurhash3",
) -> Expression:
    """FixedSizeList[UInt32; num_hashes]: MinHash signatures of each string's word n-grams
    (tokens split on spaces, ``ngram_size`` tokens per n-gram, each hashed to 32 bits with
    ``hash_function`` ("murmurhash3" or "xxhash") and ``seed``, then ``num_hashes`` permutations
    ``(a*h + b) mod (2**61 - 1)`` drawn from SplitMix64(``seed``)). Two strings' signatures agree
    in about a Jaccard-similarity share of positions. Values differ from Daft's (another
    permutation generator). Null stays null."""
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


__all__ += ["minhash"]
