"""sample(size=) and monotonically_increasing_id() on the Ray runner (a real 3-node local
cluster): both run over the input gathered on the driver, so they equal the native runner's."""

from __future__ import annotations

from ray_compare import native_then_ray

import ketch
from ketch.functions import monotonically_increasing_id


def test_sample_size_on_ray_equals_native(on_ray):
    df = ketch.from_pydict({"a": list(range(500)), "b": [i * 3 for i in range(500)]}).into_partitions(3)

    def build():
        return df.where(ketch.col("a") % 5 != 0).sample(size=40, seed=21)

    native, ray = native_then_ray(build)
    got = ray.to_pydict()
    assert got == native.to_pydict()
    assert len(got["a"]) == 40 and len(set(got["a"])) == 40 and all(a % 5 for a in got["a"])


def test_monotonically_increasing_id_on_ray_equals_native(on_ray):
    df = ketch.from_pydict({"a": list(range(300))}).into_partitions(4)

    def build():
        return df.where(ketch.col("a") % 3 == 0).with_column("id", monotonically_increasing_id())

    native, ray = native_then_ray(build)
    got = ray.to_pydict()
    assert got == native.to_pydict()
    assert got["a"] == list(range(0, 300, 3)) and got["id"] == list(range(100))
