"""One harness for every benchmark: ``make bench`` (or ``python benchmarks/run.py [name ...]``).

Each ``benchmarks/bench_<name>.py`` defines ``prepare(data_dir)`` (makes its input once, in Ketch's
venv) and one function per engine, ``run_<engine>(data_dir) -> dict`` returning at least
``{"rows": int, "check": float}``; an optional ``setup(engine)`` runs first, untimed (imports).
Every case runs in its own subprocess, Ketch in ``.venv`` and the
peers (Daft, Polars, DuckDB, pandas, Pillow) in ``benchmarks/.venv-peers``, best of ``--repeat``
runs, wall-clock seconds and peak RSS (``ru_maxrss`` of the child). The harness prints a table of
times and ratios to Ketch and writes ``benchmarks/results/<name>.json``. A module with several queries
names its cases ``<engine>_q<N>`` (``ketch_q1``, ``duckdb_q1``, ...): they are listed per query and
compared with that query's ``ketch_q<N>``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
KETCH_PY = REPO / ".venv" / "bin" / "python"
PEERS_VENV = ROOT / ".venv-peers"
PEERS_PY = PEERS_VENV / "bin" / "python"
DATA = ROOT / ".data"
RESULTS = ROOT / "results"


def ensure_peers() -> None:
    stamp = PEERS_VENV / ".requirements.stamp"
    wanted = (ROOT / "peers-requirements.txt").read_text()
    if stamp.exists() and stamp.read_text() == wanted:
        return
    print("bench: installing peers into benchmarks/.venv-peers ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
    subprocess.run(
        [str(PEERS_PY), "-m", "pip", "install", "-q", "-r", str(ROOT / "peers-requirements.txt")], check=True
    )
    stamp.write_text(wanted)


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / f"bench_{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def query_of(engine: str) -> str:
    """The query suffix of a multi-query case (``duckdb_q3`` -> ``q3``), else ""."""
    match = re.search(r"_(q\d+)$", engine)
    return match.group(1) if match else ""


def run_case(name: str, engine: str, data_dir: Path) -> dict:
    python = KETCH_PY if engine.startswith("ketch") else PEERS_PY
    code = (
        "import json, resource, sys, time, importlib.util;"
        f"spec = importlib.util.spec_from_file_location('b', {str(ROOT / f'bench_{name}.py')!r});"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m);"
        f"getattr(m, 'setup', lambda engine: None)({engine!r});"
        f"t = time.perf_counter(); out = m.run_{engine}({str(data_dir)!r});"
        "out['seconds'] = time.perf_counter() - t;"
        "out.setdefault('peak_rss_mb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024);"
        "print('RESULT ' + json.dumps(out))"
    )
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=REPO)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    names = args.names or sorted(p.stem[len("bench_") :] for p in ROOT.glob("bench_*.py"))
    ensure_peers()
    RESULTS.mkdir(exist_ok=True)
    for name in names:
        module = load(name)
        data_dir = DATA / getattr(module, "DATA_NAME", name)
        if not (data_dir / ".ready").exists():
            data_dir.mkdir(parents=True, exist_ok=True)
            print(f"bench {name}: preparing data in {data_dir} ...", flush=True)
            module.prepare(str(data_dir))
            (data_dir / ".ready").write_text("ok")
        engines = [f[len("run_") :] for f in dir(module) if f.startswith("run_")]
        engines.sort(key=lambda e: (int(query_of(e)[1:] or -1), not e.startswith("ketch"), e))
        results: dict[str, dict] = {}
        for engine in engines:
            best: dict | None = None
            for _ in range(args.repeat):
                out = run_case(name, engine, data_dir)
                if "error" in out:
                    best = out
                    break
                if best is None or out["seconds"] < best["seconds"]:
                    best = out
            results[engine] = best or {}
        print(f"\n== {name}: {module.__doc__.strip().splitlines()[0]}")
        print(f"{'engine':<26}{'seconds':>10}{'x ketch':>10}{'rows':>10}{'peak MB':>10}  check")
        for engine, out in results.items():
            if "error" in out:
                print(f"{engine:<26}{'error':>10}  {out['error']}")
                continue
            query = query_of(engine)
            base = results.get(f"ketch_{query}" if query else "ketch", {}).get("seconds")
            ratio = out["seconds"] / base if base else float("nan")
            bound = f"  (RSS bound {out['rss_bound_mb']:.0f} MB)" if "rss_bound_mb" in out else ""
            metric = f"  {out['metric']}" if "metric" in out else ""
            print(
                f"{engine:<26}{out['seconds']:>10.3f}{ratio:>10.2f}{out['rows']:>10}{out['peak_rss_mb']:>10.0f}"
                f"  {out['check']:.4f}{bound}{metric}"
            )
        (RESULTS / f"{name}.json").write_text(
            json.dumps(
                {
                    "benchmark": name,
                    "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                    "machine": platform.platform(),
                    "cores": os.cpu_count(),
                    "results": results,
                    "max_rss_harness_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
