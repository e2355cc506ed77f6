"""The README's Python code blocks run as written (each in a fresh interpreter, in a scratch
directory holding the demo's data), and every ``print(...)  # value`` line prints what its comment
says (the printed text is the start of the comment). So the README cannot drift from the code."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
PRINT_WITH_COMMENT = re.compile(r"^print\(.*\)\s+#\s*(.+)$")


def readme_blocks() -> list[str]:
    return BLOCK.findall((REPO / "README.md").read_text())


def test_the_readme_has_python_blocks():
    assert len(readme_blocks()) >= 2


@pytest.mark.parametrize("index", range(len(readme_blocks())))
def test_readme_block_runs_and_prints_what_it_says(index, tmp_path):
    # By path: another test puts examples/ai (which has its own image_classification) on sys.path.
    spec = importlib.util.spec_from_file_location(
        "readme_demo_job", REPO / "examples" / "image_classification.py"
    )
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    prepare_dataset = demo.prepare_dataset
    block = readme_blocks()[index]
    if ".cache/demo/digits.parquet" in block:
        (tmp_path / ".cache" / "demo").mkdir(parents=True)
        prepare_dataset(tmp_path / ".cache" / "demo" / "digits.parquet")
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    proc = subprocess.run(
        [sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"README block {index} failed:\n{block}\n{proc.stderr[-3000:]}"
    expected = [m.group(1) for line in block.splitlines() if (m := PRINT_WITH_COMMENT.match(line.strip()))]
    printed = proc.stdout.splitlines()[-len(expected) :] if expected else []
    for want, got in zip(expected, printed, strict=True):
        assert want.startswith(got.strip()), f"README block {index}: printed {got!r}, comment says {want!r}"


def test_benchmark_tables_match_the_committed_results():
    """The README's benchmark section is what ``scripts/bench_readme.py`` renders from
    ``benchmarks/results/*.json``: no number in it can drift from the results."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench_readme.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
