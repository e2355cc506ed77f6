"""A partitioned write of thousands of partition values stays within a small descriptor limit:
at most 128 files are open at once and finished files keep no descriptor until the commit (it
used to fail with "Too many open files" past the limit)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CHILD = r"""
import json, resource, sys
import ketch
resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
fmt, root = sys.argv[1], sys.argv[2]
df = ketch.from_pydict({"k": [i % 3000 for i in range(30000)], "v": list(range(30000))})
written = getattr(df, "write_" + fmt)(root, partition_cols=["k"])
back = getattr(ketch, "read_" + fmt)(root + "/**/*." + fmt)
total = back.sum("v").to_pydict()["v"][0]
print(json.dumps({"files": written.count_rows(), "rows": back.count_rows(), "sum": total}))
"""


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_3000_partition_values_under_256_descriptors(tmp_path, fmt):
    out = subprocess.run([sys.executable, "-c", CHILD, fmt, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"files": 3000, "rows": 30000, "sum": sum(range(30000))}
