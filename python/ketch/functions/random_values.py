"""Random-value functions in Daft's spelling (``from ketch.functions import random_int``)."""

from __future__ import annotations

import secrets

from ketch.expressions.expression import Expression

__all__ = ["random_int"]


def random_int(low: int, high: int, seed: int | None = None) -> Expression:
    """Int64: a uniformly random integer in the closed interval ``[low, high]`` for each row.

    Natively generated (SplitMix64 of the seed and the row's position, reduced to the interval by
    Lemire's multiply-shift; see ``cpp/ketch/functions/random/random_functions.h``). With ``seed``
    the values are stable for the same row layout (Daft's "best-effort" promise: another
    partitioning gives other values); without it a seed is drawn once, when the expression is
    built. Raises ValueError when ``low``/``high``/``seed`` are not ints or ``low > high``."""
    for name, value in (("low", low), ("high", high)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"random_int: {name} must be an int, got {value!r}")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ValueError(f"random_int: seed must be an int or None, got {seed!r}")
    if low > high:
        raise ValueError(f"random_int: low ({low}) must not be greater than high ({high})")
    if not (-(2**63) <= low and high < 2**63):
        raise ValueError("random_int: low and high must fit in int64")
    drawn = secrets.randbits(63) if seed is None else seed % 2**64 - (2**64 if seed % 2**64 >= 2**63 else 0)
    return Expression._call("random_int", low=low, high=high, seed=drawn)
