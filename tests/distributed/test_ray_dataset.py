"""DataFrame.to_ray_dataset on the shared Ray cluster: the Ray Dataset holds the DataFrame's rows,
one block per partition."""

from __future__ import annotations

from typing import Any

import ketch
from ketch import col


def test_to_ray_dataset_holds_every_row(on_ray: Any) -> None:
    df = ketch.from_pydict({"k": list(range(100)), "v": [i * 0.5 for i in range(100)]}).into_partitions(3)
    ds = df.where(col("k") % 2 == 0).to_ray_dataset()
    rows = sorted((r["k"], r["v"]) for r in ds.take_all())
    assert rows == [(k, k * 0.5) for k in range(0, 100, 2)]
    assert ds.count() == 50
