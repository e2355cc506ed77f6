"""DataFrame.sample(size=) as Daft 0.7.26: exactly `size` rows drawn uniformly (reservoir
sampling), Daft's argument checks and its error for a sample larger than the population.

Daft's own random draws differ (another generator), so the values compared with Daft are its
counts, errors and guarantees; uniformity is checked against the exact inclusion probabilities."""

from __future__ import annotations

import collections
import io

import pytest

import ketch


def frame(n: int = 100, batches: int | None = None) -> ketch.DataFrame:
    df = ketch.from_pydict({"a": list(range(n)), "s": [f"r{i}" for i in range(n)]})
    return df.into_batches(batches) if batches else df


def test_exact_size_distinct_rows_of_the_input():
    out = frame().sample(size=5, seed=1).to_pydict()
    assert len(out["a"]) == 5 and len(set(out["a"])) == 5
    assert all(0 <= a < 100 and s == f"r{a}" for a, s in zip(out["a"], out["s"], strict=True))


def test_seeded_sample_is_reproducible_and_seeds_differ():
    first = frame(1000, 64).sample(size=20, seed=11).to_pydict()["a"]
    assert frame(1000, 64).sample(size=20, seed=11).to_pydict()["a"] == first
    assert frame(1000, 64).sample(size=20, seed=12).to_pydict()["a"] != first


def test_size_equal_to_the_population_is_a_permutation_and_zero_is_empty():
    assert sorted(frame().sample(size=100, seed=4).to_pydict()["a"]) == list(range(100))
    assert frame().sample(size=0).count_rows() == 0  # Daft: 0


def test_size_larger_than_the_population_raises_like_daft():
    # Daft: DaftError::ValueError "Cannot take a sample larger than the population when 'replace=False'"
    message = "Cannot take a sample larger than the population when 'replace=False'"
    with pytest.raises(ValueError, match=message):
        frame().sample(size=500).collect()


def test_with_replacement_gives_size_rows_and_repeats():
    out = frame().sample(size=500, with_replacement=True, seed=2).to_pydict()["a"]
    assert len(out) == 500 and len(set(out)) < 100 and set(out) <= set(range(100))
    empty = frame().where(ketch.col("a") < 0)
    assert empty.sample(size=3, with_replacement=True).count_rows() == 0  # Daft: 0 rows, no error


def test_without_replacement_is_uniform_across_morsels():
    # 2,000 seeded draws of 3 of 10 rows split into batches of 4: each row's inclusion count is
    # Binomial(2000, 0.3), mean 600, sd 20.5; a chi-square over the 10 rows (9 dof) below 27.9
    # holds with probability 0.999 for a uniform sampler, and the seeds are fixed.
    counts: collections.Counter[int] = collections.Counter()
    for seed in range(2000):
        counts.update(frame(10, 4).sample(size=3, seed=seed).to_pydict()["a"])
    chi2 = sum((counts[i] - 600) ** 2 / 600 for i in range(10))
    assert sum(counts.values()) == 6000 and chi2 < 27.9, counts


def test_with_replacement_is_uniform():
    drawn = frame(10, 3).sample(size=20000, with_replacement=True, seed=5).to_pydict()["a"]
    counts = collections.Counter(drawn)
    chi2 = sum((counts[i] - 2000) ** 2 / 2000 for i in range(10))
    assert sum(counts.values()) == 20000 and chi2 < 27.9, counts


def test_sample_size_over_partitions_and_after_a_filter():
    df = frame(1000).into_partitions(4).where(ketch.col("a") % 2 == 0)
    out = df.sample(size=50, seed=9).to_pydict()["a"]
    assert len(out) == 50 and len(set(out)) == 50 and all(a % 2 == 0 for a in out)
    # the filter is not pushed through the sample: sample 50, then keep the even ones
    kept = frame(1000).sample(size=50, seed=9).where(ketch.col("a") % 2 == 0).to_pydict()["a"]
    assert len(kept) < 50


def test_argument_errors_match_daft():
    df = frame()
    with pytest.raises(ValueError, match="Must specify either `fraction` or `size`, but not both"):
        df.sample(fraction=0.1, size=5)
    with pytest.raises(ValueError, match="Must specify either `fraction` or `size`"):
        df.sample()
    with pytest.raises(ValueError, match="size should be non-negative, but got -1"):
        df.sample(size=-1)
    with pytest.raises(TypeError):  # Daft: APITypeError (a TypeError)
        df.sample(size=2.5)


def test_explain_names_the_blocking_reservoir():
    buf = io.StringIO()
    frame().sample(size=5, seed=1).explain(show_all=True, file=buf)
    assert "Sample: 5 rows" in buf.getvalue()
    assert "SampleSize (blocking, reservoir): 5 rows" in buf.getvalue()
