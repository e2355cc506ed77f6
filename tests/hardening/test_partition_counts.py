"""Partition counts past what the engine can hold fail at plan time with a clear error (they used
to hang for minutes or abort the process with std::bad_alloc)."""

from __future__ import annotations

import pytest

import ketch
from ketch.errors import KetchValueError


@pytest.mark.parametrize(
    "make",
    [
        lambda df: df.repartition(10**7),
        lambda df: df.repartition(10**9, "a"),
        lambda df: df.into_partitions(10**7),
        lambda df: df.into_partitions(2**62),
    ],
)
def test_too_many_partitions_is_a_plan_time_error(make):
    df = ketch.from_pydict({"a": list(range(10))})
    with pytest.raises(KetchValueError, match=r"more than Ketch supports \(at most 100000"):
        make(df)


def test_the_largest_supported_count_still_runs():
    df = ketch.from_pydict({"a": list(range(10))})
    out = df.repartition(100_000, "a").to_pydict()
    assert sorted(out["a"]) == list(range(10))
    assert df.into_partitions(100_000).count_rows() == 10
