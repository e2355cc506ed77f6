"""The benchmark harness counts a timing only with the right answer: each case's rows and check are
compared with Ketch's, a mismatch is marked in the JSON and fails the run, and the digest of a
whole result finds a wrong value, a value paired with the wrong key and a wrong order."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import checks  # noqa: E402


def _load_run_module():
    spec = importlib.util.spec_from_file_location("bench_run_under_test", BENCH / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FAKE = '''"""A fake benchmark for the harness test."""
import os

KNOWN_MISMATCHES = {"peer_known": "a documented peer bug"}


def prepare(data_dir):
    pass


def _table(values):
    import pyarrow as pa
    return pa.table({"k": [1, 2, 3], "v": values})


def run_ketch(d):
    return {"rows": 3, "result": _table([1.0, 2.0, 3.0])}


def run_ketch_close(d):  # float rounding only: equal within the tolerance
    return {"rows": 3, "result": _table([1.0, 2.0, 3.0 + 1e-13])}


def run_ketch_wrong(d):  # one value off
    return {"rows": 3, "result": _table([1.0, 2.0, 3.5])}


def run_ketch_rows(d):  # a row missing
    return {"rows": 2, "check": 1}
'''


def _run_fake(tmp_path, monkeypatch) -> tuple[int, dict]:
    run = _load_run_module()
    (tmp_path / "bench_fake.py").write_text(FAKE)
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(run, "DATA", tmp_path / "data")
    # The case's interpreter must find checks.py: it is put on sys.path from the harness's folder.
    (tmp_path / "checks.py").write_text((BENCH / "checks.py").read_text())
    monkeypatch.setattr(
        sys, "argv", ["run.py", "fake", "--repeat", "1", "--json", str(tmp_path / "out.json")]
    )
    monkeypatch.setattr(run, "KETCH_PY", Path(sys.executable))
    code = run.main()
    return code, json.loads((tmp_path / "out.json").read_text())


def test_a_wrong_answer_is_marked_and_fails_the_run(tmp_path, monkeypatch):
    code, out = _run_fake(tmp_path, monkeypatch)
    results = out["results"]
    assert results["ketch"]["check_status"] == "reference"
    assert results["ketch_close"]["check_status"] == "ok"
    assert results["ketch_wrong"]["check_status"] == "mismatch"
    # digest: rows, then per column nulls, sum, key-weighted sum: [5] is the sum of v.
    assert results["ketch_wrong"]["check_difference"] == "[5]: 6.5 != 6.0"
    assert results["ketch_rows"]["check_status"] == "mismatch"
    assert results["ketch_rows"]["check_difference"] == "rows 2 != 3"
    assert sorted(out["check_mismatches"]) == ["ketch_rows", "ketch_wrong"]
    assert code == 1
    # The digest replaced the result after the timed region: a list, not a table.
    assert results["ketch"]["check"][0] == 3


def test_digest_is_order_independent_but_binds_values_to_keys():
    t = pa.table({"k": [1, 2, 3, None], "s": ["a", "bb", None, ""], "f": [1.5, 2.5, None, 3.0]})
    assert checks.digest(t) == checks.digest(t.take([3, 1, 0, 2]))
    swapped = pa.table({"k": [1, 2, 3, None], "s": ["bb", "a", None, ""], "f": [1.5, 2.5, None, 3.0]})
    assert not checks.same(checks.digest(t), checks.digest(swapped))  # same column sums, other pairing
    changed = pa.table({"k": [1, 2, 3, None], "s": ["a", "bc", None, ""], "f": [1.5, 2.5, None, 3.0]})
    assert not checks.same(checks.digest(t), checks.digest(changed))
    null_vs_empty = pa.table({"k": [1, 2, 3, None], "s": ["a", "bb", "", ""], "f": [1.5, 2.5, None, 3.0]})
    assert not checks.same(checks.digest(t), checks.digest(null_vs_empty))


def test_ordered_digest_sees_the_row_order():
    t = pa.table({"k": np.arange(100), "v": np.arange(100) * 0.5})
    assert checks.digest(t, ordered=True) != checks.digest(t.take(np.arange(100)[::-1]), ordered=True)
    assert checks.digest(t) == checks.digest(t.take(np.arange(100)[::-1]))


def test_partition_digest_counts_keys_split_over_partitions():
    good = [pa.table({"k": [1, 1, 3]}), pa.table({"k": [2, 2]})]
    bad = [pa.table({"k": [1, 2, 3]}), pa.table({"k": [2, 1]})]
    assert checks.digest(good)[-1] == {"keys_split": 0}
    assert checks.digest(bad)[-1] == {"keys_split": 2}


def test_same_compares_ints_exactly_and_floats_within_the_tolerance():
    assert checks.same([1, 2.0], [1, 2.0 + 1e-12])
    assert not checks.same([1, 2.0], [1, 2.001])
    assert not checks.same(10**18, 10**18 + 1)
    assert checks.same(float("nan"), float("nan"))
    with pytest.raises(TypeError, match="cannot read"):
        checks.digest(object())
