"""Writes that fail (a read-only directory, a full disk) raise KetchIOError naming the user's path
and the OS reason, and leave no temporary (``.tmp``) file behind: write_parquet, write_csv,
write_json (partitioned too), url.upload to a local directory, spill files.

The suite runs as root, which chmod does not stop: permission cases run in a child process that
drops to the unprivileged uid 65534; full-disk cases write into a 1 MiB tmpfs (skipped where
mounting is not allowed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.errors import KetchIOError

_NOBODY = 65534

# Runs every case twice: as root into a writable directory (which also imports everything from
# the interpreter's stdlib, unreadable to uid 65534 here), then with effective uid 65534 into the
# read-only one. Prints {case: error message or "ok"} for the second round as JSON.
_CHILD = r"""
import json, os, sys, tempfile
import pyarrow as pa
import ketch
from ketch import col

def cases(target):
    def spill():
        table = pa.table({"k": pa.array(range(200_000, 0, -1), pa.int64())})
        budget = {"memory_budget_bytes": 300_000, "morsel_size_rows": 5_000}
        with ketch.execution_config_ctx(spill_dir=target, **budget):
            ketch.from_arrow(table).sort("k").collect()

    df = ketch.from_pydict({"a": [1, 2, 3], "p": ["x", "x", "y"]})
    blobs = ketch.from_pydict({"d": [b"abc"]})
    return {
        "write_parquet": lambda: df.write_parquet(target),
        "write_parquet_subdir": lambda: df.write_parquet(os.path.join(target, "sub")),
        "write_csv": lambda: df.write_csv(target),
        "write_json": lambda: df.write_json(target),
        "write_json_partitioned": lambda: df.write_json(target, partition_cols=["p"]),
        "upload": lambda: blobs.with_column("p", col("d").url.upload(target)).collect(),
        "spill": spill,
    }

def run(target):
    out = {}
    for name, case in cases(target).items():
        try:
            case()
            out[name] = "ok"
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"
    return out

with tempfile.TemporaryDirectory() as warm:
    assert set(run(warm).values()) == {"ok"}
os.setegid(65534)
os.seteuid(65534)  # all threads (glibc), capabilities dropped: permissions apply from here on
print(json.dumps(run(sys.argv[1])))
"""


@pytest.fixture
def read_only_dir() -> Iterator[Path]:
    """A directory uid 65534 can enter but not write (owned by root, mode 0755), outside pytest's
    0700 tmp root."""
    if os.geteuid() != 0:
        pytest.skip("needs root to drop to another uid")
    root = Path(tempfile.mkdtemp(prefix="ketch-ro-"))
    try:
        root.chmod(0o755)
        yield root
    finally:
        shutil.rmtree(root)


def test_writes_into_a_read_only_directory_name_the_path_and_reason(read_only_dir):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(read_only_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    ro = str(read_only_dir)
    for case, message in out.items():
        assert message.startswith("KetchIOError: "), (case, message)
        assert "Permission denied" in message, (case, message)
        assert ro in message, (case, message)
        assert ".tmp" not in message, (case, message)
    assert f"write_parquet: cannot write '{ro}/" in out["write_parquet"]
    assert out["write_parquet"].rstrip().endswith(".parquet': Permission denied")
    assert f"cannot create directory '{ro}/sub'" in out["write_parquet_subdir"]
    assert out["write_csv"].rstrip().endswith(".csv': Permission denied")
    assert out["write_json"].rstrip().endswith(".json': Permission denied")
    assert (
        f"write_json: cannot create directory '{ro}/p=x': Permission denied" in out["write_json_partitioned"]
    )
    assert f"url.upload failed at row 0 ('{ro}/" in out["upload"]
    assert f"spill directory '{ro}' is not writable" in out["spill"]
    assert os.listdir(read_only_dir) == []  # nothing left behind, no .tmp


@pytest.fixture
def full_disk(tmp_path) -> Iterator[Path]:
    """A 1 MiB tmpfs: writes beyond it fail with ENOSPC."""
    mount_point = tmp_path / "full"
    mount_point.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {proc.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


def _noise(nbytes: int) -> bytes:
    return np.random.default_rng(3).bytes(nbytes)  # incompressible


def test_write_parquet_to_a_full_disk(full_disk):
    rng = np.random.default_rng(4)
    table = pa.table({"b": pa.array([rng.bytes(64 * 1024) for _ in range(48)], pa.large_binary())})  # 3 MiB
    with pytest.raises(KetchIOError) as info:
        ketch.from_arrow(table).write_parquet(full_disk, compression="none")
    message = str(info.value)
    assert f"write_parquet: cannot write '{full_disk}/" in message
    assert message.endswith(".parquet': No space left on device")
    assert ".tmp" not in message
    assert os.listdir(full_disk) == []  # the partial temporary was removed


def test_url_upload_to_a_full_disk(full_disk):
    df = ketch.from_pydict({"d": [b"small", _noise(2 * 1024 * 1024)]})
    with pytest.raises(KetchIOError) as info:
        df.with_column("p", col("d").url.upload(str(full_disk))).collect()
    message = str(info.value)
    assert f"url.upload failed at row 1 ('{full_disk}/" in message
    assert message.endswith("': No space left on device")
    assert ".tmp" not in message
    assert [name for name in os.listdir(full_disk) if name.endswith(".tmp")] == []
    assert len(os.listdir(full_disk)) == 1  # row 0's file, written whole
    # on_error="null": the failed row is null, the other row's path is returned.
    out = df.with_column("p", col("d").url.upload(str(full_disk), on_error="null")).to_pydict()["p"]
    assert out[1] is None and Path(out[0]).read_bytes() == b"small"


def test_spill_to_a_full_disk(full_disk):
    rng = np.random.default_rng(5)
    table = pa.table({"k": rng.integers(0, 1 << 40, 400_000), "v": rng.random(400_000)})  # 6.4 MB
    with ketch.execution_config_ctx(
        memory_budget_bytes=1_000_000, morsel_size_rows=8_000, spill_dir=str(full_disk)
    ):
        with pytest.raises(KetchIOError) as info:
            ketch.from_arrow(table).sort("k").collect()
    message = str(info.value)
    assert f"cannot write a spill file in '{full_disk}': No space left on device" in message
    assert os.listdir(full_disk) == []
