"""The benchmark harness's memory sampler (benchmarks/memory_sampler.py) sees descendants' memory."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from memory_sampler import TreeSampler  # noqa: E402

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

# A grandchild allocates 200 MiB of touched pages when told to (a line on stdin), says "allocated"
# and holds them until stdin closes; its parent (the sampled root) only waits for it.
GRANDCHILD = textwrap.dedent(
    """
    import sys
    print("ready", flush=True)
    sys.stdin.readline()
    block = b"\\x01" * (200 << 20)
    print("allocated", flush=True)
    sys.stdin.read()
    """
)
ROOT = textwrap.dedent(
    f"""
    import subprocess, sys
    sys.exit(subprocess.call([sys.executable, "-c", {GRANDCHILD!r}]))
    """
)


def test_sampler_counts_a_grandchild_allocating_200_mb() -> None:
    root = subprocess.Popen(
        [sys.executable, "-c", ROOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    sampler = TreeSampler(root.pid, interval_s=0.02)
    sampler.start()
    try:
        assert root.stdout.readline().strip() == "ready"
        baseline = sampler.reset_peak()
        assert baseline.processes == 2  # the root and the grandchild, both interpreters
        root.stdin.write("go\n")
        root.stdin.flush()
        assert root.stdout.readline().strip() == "allocated"
        # Two samples of the sampler's own thread after the allocation (no timing assumption).
        assert sampler.wait_for_samples(sampler.samples + 2)
    finally:
        root.stdin.close()
        root.wait()
    peak = sampler.stop()
    assert root.returncode == 0
    assert peak.pss_mb - baseline.pss_mb >= 150, (baseline, peak)
    assert peak.rss_mb >= peak.pss_mb
    assert sampler.measure().processes == 0  # the tree is gone


def test_root_hwm_keeps_a_spike_freed_before_any_sample() -> None:
    # The root allocates 200 MiB and frees it before it says so: a sample may never see it, the
    # kernel's VmHWM (reset by reset_peak) does.
    spike = textwrap.dedent(
        """
        import sys
        print("ready", flush=True)
        sys.stdin.readline()
        block = b"\\x01" * (200 << 20)
        del block
        print("freed", flush=True)
        sys.stdin.read()
        """
    )
    root = subprocess.Popen(
        [sys.executable, "-c", spike], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    sampler = TreeSampler(root.pid)
    try:
        assert root.stdout.readline().strip() == "ready"
        baseline = sampler.reset_peak()
        start_hwm = sampler.root_hwm()
        root.stdin.write("go\n")
        root.stdin.flush()
        assert root.stdout.readline().strip() == "freed"
        hwm = sampler.root_hwm()
    finally:
        root.stdin.close()
        root.wait()
    assert start_hwm is not None and hwm is not None
    assert start_hwm < baseline.rss + (50 << 20)  # the reset took: the peak restarted near Rss
    assert (hwm - baseline.rss) / 2**20 >= 150, (baseline, hwm)
    assert sampler.root_hwm() is None  # gone
