"""The base install is light: each feature's library comes with an extra (``ketch[ray]``,
``ketch[lance]``, ...). With the library absent, ``import ketch`` and everything else work, and
the feature fails with ModuleNotFoundError naming the exact pip command.

A library is made absent to Python's import system: a fresh interpreter whose first meta path
finder answers every import of it as CPython does for a package that is not installed
(ModuleNotFoundError "No module named ..." with its ``name``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

BLOCKED = ["ray", "lance", "sqlglot", "torch", "pandas", "transformers", "sentence_transformers", "openai"]

CASES = {
    "ray": ("ketch.set_runner_ray()", "The Ray runner (set_runner_ray)", "ray", "ray"),
    "lance": ("ketch.read_lance('/nowhere.lance')", "Lance (read_lance, write_lance)", "pylance", "lance"),
    "sql": ("ketch.sql('SELECT 1 AS x')", "SQL (ketch.sql)", "sqlglot", "sql"),
    "sql_expr": ("ketch.sql_expr('a + 1')", "SQL expressions", "sqlglot", "sql"),
    "torch": ("df.to_torch_map_dataset()", "PyTorch datasets", "torch", "torch"),
    "pandas": ("df.to_pandas()", "to_pandas", "pandas", "pandas"),
    "ai": (
        "df.select(embed_text(col('s'), provider='transformers', model='/nowhere'))",
        "The 'transformers' provider",
        "transformers",
        "ai",
    ),
}


def _run(code: str) -> subprocess.CompletedProcess[str]:
    prelude = textwrap.dedent(
        f"""
        import sys
        class Absent:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {set(BLOCKED)!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None
        sys.meta_path.insert(0, Absent())
        """
    )
    script = prelude + textwrap.dedent(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    return subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )


def test_the_base_install_runs_without_any_extra() -> None:
    done = _run(
        """
        import ketch
        from ketch import col
        df = ketch.from_pydict({"k": ["a", "b", "a"], "v": [1, 2, 3]})
        out = df.groupby("k").agg(col("v").sum()).sort("k").to_pydict()
        print(out)
        print(sorted(m for m in sys.modules if m.split(".")[0] in {"ray", "lance", "sqlglot", "torch"}))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["{'k': ['a', 'b'], 'v': [4, 2]}", "[]"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_feature_without_its_extra_names_the_pip_command(case: str) -> None:
    call, feature, package, extra = CASES[case]
    done = _run(
        f"""
        import ketch
        from ketch import col
        from ketch.functions.ai import embed_text
        df = ketch.from_pydict({{"s": ["x"]}})
        try:
            {call}
        except ModuleNotFoundError as exc:
            print(type(exc).__name__, exc)
        """
    )
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith(f"ModuleNotFoundError {feature}"), line
    assert f"needs the optional package {package!r}, which is not installed" in line
    assert line.endswith(f'pip install "ketch[{extra}]"'), line
