"""Shared helpers and data generators for the randomized relational property tests (test_rel_*.py).

Not a test module: pytest's default import mode puts this folder on sys.path, so the test files
import it as ``from rel_data import ...``."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pandas as pd
import pyarrow as pa

import ketch

SEEDS = [0, 1, 2, 3, 4]
KINDS = ["int", "str", "widestr"]
N = 200
KEY_TYPES = {"int": pa.int64(), "str": pa.string(), "widestr": pa.large_string()}  # wide keys: 64-bit offsets
_WIDE_PREFIX = "".join(np.random.default_rng(99).choice(list("abcdefghij"), 1000))


def seed_shape_cases(shapes):
    """(seed, shape) pairs; an empty input ("empty", "empty_left", ...) is the same for every seed,
    so it runs once."""
    return [(seed, shape) for shape in shapes for seed in (SEEDS[:1] if shape.startswith("empty") else SEEDS)]


def norm(v):
    if v is None or v is pd.NA:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def null_last(v):
    return (v is None, v)


def row_key(row):
    return tuple(null_last(v) for v in row)


def morsels(small: bool):
    return ketch.execution_config_ctx(morsel_size_rows=7) if small else contextlib.nullcontext()


def conv_key(code: int, kind: str):
    if kind == "int":
        return code * 1_000_003 - 500_000_000
    if kind == "str":
        return f"k{code}"
    return _WIDE_PREFIX[: 990 + code % 10] + str(code)


def key_values(rng, n, shape, kind, *, skew_range=1000, distinct_ratio=10):
    """n keys of the given shape: "dup" (one value), "skewed" (90% one value, the rest from
    ``skew_range`` codes), "distinct" (unique, drawn from ``n * distinct_ratio`` codes), anything
    else (nullkeys, and the other side of the join's empty shapes) 20 codes with 40% nulls.
    The "empty" shape, or n == 0, gives no keys."""
    if n == 0 or shape == "empty":
        return []
    if shape == "dup":
        codes = np.full(n, 7)
    elif shape == "skewed":
        codes = np.where(rng.random(n) < 0.9, 3, rng.integers(0, skew_range, n))
    elif shape == "distinct":
        codes = rng.permutation(n * distinct_ratio)[:n]
    else:  # nullkeys and the empty join shapes' other side
        codes = rng.integers(0, 20, n)
    null_frac = {"dup": 0.0, "skewed": 0.05, "distinct": 0.1}.get(shape, 0.4)
    nulls = rng.random(n) < null_frac
    return [None if nl else conv_key(int(c), kind) for c, nl in zip(codes, nulls, strict=True)]


def with_nulls(rng, values, frac=0.2):
    mask = rng.random(len(values)) < frac
    return [None if m else v for v, m in zip(values, mask, strict=True)]
