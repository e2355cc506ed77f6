"""from_pydict on lists of plain Python numbers: the NumPy-buffer fast path gives exactly what
``pa.array`` gives (type and values), and it does not import pandas (pyarrow's ``pa.array`` on a
list imports it first: about 0.4 s per process)."""

from __future__ import annotations

import math
import random
import subprocess
import sys

import pyarrow as pa
import pytest

import ketch


def _column(values: list | tuple) -> pa.Array:
    return ketch.from_pydict({"x": values}).to_arrow()["x"].combine_chunks()


def _same(got: pa.Array, want: pa.Array) -> bool:
    if got.type != want.type or len(got) != len(want):
        return False
    return all(
        (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)) or a == b
        for a, b in zip(got.to_pylist(), want.to_pylist(), strict=True)
    )


@pytest.mark.parametrize("seed", range(20))
def test_random_number_lists_equal_pyarrows_conversion(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    make = rng.choice(
        [
            lambda: rng.randint(-(2**63), 2**63 - 1),
            lambda: rng.choice([rng.uniform(-1e300, 1e300), float("nan"), float("inf"), -0.0]),
            lambda: rng.random() < 0.5,
            lambda: rng.choice([rng.randint(-5, 5), rng.random()]),  # mixed int/float: double
            lambda: rng.choice([rng.randint(-5, 5), None]),  # with nulls
        ]
    )
    values = [make() for _ in range(n)]
    container = tuple(values) if seed % 3 == 0 else values
    want = pa.array(values)
    assert _same(_column(container), want), (values, _column(container), want)


def test_ints_beyond_int64_still_fail_as_in_pyarrow() -> None:
    with pytest.raises(OverflowError):
        pa.array([1, 2**70])
    with pytest.raises(OverflowError):
        ketch.from_pydict({"x": [1, 2**70]})


def test_plain_numbers_do_not_import_pandas() -> None:
    code = (
        "import sys, ketch\n"
        "df = ketch.from_pydict({'i': list(range(100)), 'f': [0.5] * 100, 'b': [True, False] * 50})\n"
        "assert df.to_arrow().num_rows == 100\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
