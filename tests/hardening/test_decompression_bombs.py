"""decompress / try_decompress keep to the memory budget: a value may inflate to at most half the
budget (at least 16 MiB); past it decompress fails naming the row and the limit, and
try_decompress gives null having held no more than that (a 400 MiB bomb used to be inflated in
full: 330 KB of zstd reached 1.3 GB and ran out of memory under a 64 MiB budget)."""

from __future__ import annotations

import bz2
import json
import subprocess
import sys
import zlib

import pyarrow as pa
import pytest

ZEROS = 160 << 20


def bomb(codec: str) -> bytes:
    zeros = b"\0" * ZEROS
    if codec == "zlib":
        return zlib.compress(zeros, 9)
    if codec == "deflate":
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        return c.compress(zeros) + c.flush()
    if codec == "bz2":
        return bz2.compress(zeros, 9)
    return pa.compress(zeros, codec=codec, asbytes=True)


CHILD = r"""
import json, resource, sys
import ketch
from ketch import col
codec, path = sys.argv[1], sys.argv[2]
blob = open(path, "rb").read()
df = ketch.from_pydict({"b": [blob, None]}).collect()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with ketch.execution_config_ctx(memory_budget_bytes=64 << 20):
    nulls = df.select(col("b").try_decompress(codec).alias("x")).to_pydict()["x"]
    try:
        df.select(col("b").decompress(codec).alias("x")).collect()
        error = None
    except ketch.errors.KetchValueError as exc:
        error = str(exc)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"nulls": nulls, "error": error, "grew_mb": (after - before) >> 10}))
"""


@pytest.mark.parametrize("codec", ["zstd", "gzip", "zlib", "deflate", "brotli", "lz4", "bz2"])
def test_bomb_is_refused_within_the_budget(codec, tmp_path):
    path = tmp_path / "bomb.bin"
    path.write_bytes(bomb(codec))
    out = subprocess.run([sys.executable, "-c", CHILD, codec, str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["nulls"] == [None, None]
    assert "failed at source row 0" in result["error"]
    assert "larger than 33554432 bytes" in result["error"]
    # 64 MiB budget × 1.5 + 300 MB: the standard
    assert result["grew_mb"] < 64 * 1.5 + 300, result


def test_values_under_the_limit_still_decompress():
    import ketch
    from ketch import col

    data = b"abc" * (4 << 20)  # 12 MiB, under the 32 MiB per-value limit of a 64 MiB budget
    df = ketch.from_pydict({"b": [pa.compress(data, codec="zstd", asbytes=True)]})
    with ketch.execution_config_ctx(memory_budget_bytes=64 << 20):
        assert df.select(col("b").decompress("zstd").alias("x")).to_pydict()["x"] == [data]
