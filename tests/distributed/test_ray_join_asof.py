"""join_asof on the Ray runner (a real 3-node local cluster): the windows and joins it is
planned from shuffle like any others, and the rows equal the native runner's."""

from __future__ import annotations

import random

import pytest
from ray_compare import native_then_ray

import ketch


@pytest.mark.parametrize("strategy", ["backward", "nearest"])
def test_join_asof_on_ray_equals_native(on_ray, strategy):
    rng = random.Random(7)
    left = ketch.from_pydict(
        {
            "e": [rng.choice("AB") for _ in range(300)],
            "t": [rng.randint(0, 500) for _ in range(300)],
            "id": list(range(300)),
        }
    ).into_partitions(3)
    right = ketch.from_pydict(
        {
            "e": [rng.choice("AB") for _ in range(200)],
            "t": [rng.randint(0, 500) for _ in range(200)],
            "x": list(range(200)),
        }
    ).into_partitions(2)

    def build():
        return left.join_asof(right, on="t", by="e", strategy=strategy).sort("id")

    native, ray = native_then_ray(build)
    assert ray.to_pydict() == native.to_pydict()
    assert sum(x is not None for x in ray.to_pydict()["x"]) > 250  # most rows found a match
