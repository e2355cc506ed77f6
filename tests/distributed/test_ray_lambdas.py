"""list_map / list_filter bodies and per-row string patterns cross to Ray workers inside serialized
plan fragments (and through a shuffle), giving the native runner's results."""

from __future__ import annotations

from typing import Any

from ray_compare import native_then_ray

import ketch
from ketch import col, element


def test_lambdas_and_per_row_patterns_on_ray(on_ray: Any) -> None:
    lists = [[i, i + 1, i + 2] if i % 5 else None for i in range(40)]
    words = [f"w{i}" for i in range(40)]
    pats = [str(i % 3) for i in range(40)]

    def build() -> Any:
        df = ketch.from_pydict({"k": list(range(40)), "l": lists, "w": words, "p": pats}).into_partitions(4)
        return (
            df.select(
                col("k"),
                col("l").list_map(element() * 2).alias("m"),
                col("l").list_filter(element() % 2 == 0).alias("f"),
                col("w").str.endswith(col("p")).alias("e"),
            )
            .repartition(3, "k")
            .sort("k")
        )

    native, ray = native_then_ray(build)
    expected = {
        "k": list(range(40)),
        "m": [None if v is None else [x * 2 for x in v] for v in lists],
        "f": [None if v is None else [x for x in v if x % 2 == 0] for v in lists],
        "e": [w.endswith(p) for w, p in zip(words, pats, strict=True)],
    }
    assert native.to_pydict() == expected
    assert ray.to_pydict() == expected
