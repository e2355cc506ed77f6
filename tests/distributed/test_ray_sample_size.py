"""sample(size=) on the Ray runner (a real 3-node local cluster): the reservoir runs over the
gathered input, so a seeded sample equals the native runner's."""

from __future__ import annotations

from ray_compare import native_then_ray

import ketch


def test_sample_size_on_ray_equals_native(on_ray):
    df = ketch.from_pydict({"a": list(range(500)), "b": [i * 3 for i in range(500)]}).into_partitions(3)

    def build():
        return df.where(ketch.col("a") % 5 != 0).sample(size=40, seed=21)

    native, ray = native_then_ray(build)
    got = ray.to_pydict()
    assert got == native.to_pydict()
    assert len(got["a"]) == 40 and len(set(got["a"])) == 40 and all(a % 5 for a in got["a"])
