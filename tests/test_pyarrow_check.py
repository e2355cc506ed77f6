"""import ketch with a pyarrow of another major version fails first, with the pip command that
fixes it (the native core links the pyarrow 26 wheels' libarrow.so.2600); any 26.x passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ketch._pyarrow_check import check_pyarrow


def test_only_the_major_version_the_core_links_passes():
    check_pyarrow("26.0.1")
    check_pyarrow("26.1.0")
    for other in ("25.0.1", "27.0.0", "nonsense"):
        with pytest.raises(ImportError, match=r"pyarrow>=26,<27"):
            check_pyarrow(other)


def test_import_ketch_with_another_pyarrow_says_what_to_install(tmp_path: Path):
    fake = tmp_path / "pyarrow"
    fake.mkdir()
    (fake / "__init__.py").write_text('__version__ = "25.0.1"\n')
    (fake / "fs.py").write_text("")
    python_dir = Path(__file__).resolve().parents[1] / "python"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{python_dir}"}
    run = subprocess.run(
        [sys.executable, "-c", "import ketch"], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode != 0
    assert "ImportError: Ketch needs pyarrow 26.x" in run.stderr and "has pyarrow 25.0.1" in run.stderr
    assert 'pip install "pyarrow>=26,<27"' in run.stderr
