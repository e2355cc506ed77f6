"""One harness for every benchmark: ``make bench`` (or ``python benchmarks/run.py [name ...]``).

Each ``benchmarks/bench_<name>.py`` defines ``prepare(data_dir)`` (makes its input once, in Ketch's
venv) and one function per engine, ``run_<engine>(data_dir) -> dict`` returning at least
``{"rows": int, "check": float}``; an optional ``setup(engine)`` runs first, untimed (imports).
Every case runs in its own subprocess, Ketch in ``.venv`` and the peers (Daft, Polars, DuckDB,
pandas, Pillow) in ``benchmarks/.venv-peers``, best of ``--repeat`` runs (wall-clock seconds of
``run_<engine>``); a module's ``KETCH_VENV_ENGINES`` names peers that run in Ketch's venv instead
(e.g. Ray Data, whose Ray is the cluster's own there). The harness prints a table of times and
ratios to Ketch and writes ``benchmarks/results/<name>.json``. A module with several queries names
its cases ``<engine>_q<N>`` (``ketch_q1``, ``duckdb_q1``, ...): they are listed per query and
compared with that query's ``ketch_q<N>``. ``--cases REGEX`` runs only the matching engines (a smoke run: the
table is printed, the JSON is not written); ``KETCH_BENCH_*`` environment variables (e.g.
``KETCH_BENCH_ROWS`` of udf_pipeline's q5) are recorded in the JSON, with the load average
(1, 5, 15 minutes) before the first case and after the last (``load_average_before/after``).
``--json PATH`` writes the JSON to PATH after every case (with ``--cases`` too: ``complete`` is
false until the last case ran); ``--case-timeout S`` kills a case running longer than S seconds
(its result: an error). ``--size NAME`` picks a named size of a module that defines ``SIZES``
(``bench_ray_actors``: small, medium; passed as ``KETCH_BENCH_SIZE``) and writes
``benchmarks/results/<name>_<size>.json``.

Memory (``memory_sampler.py``): the harness starts the case with ``subprocess.Popen`` and a thread
samples, every 20 ms, the sum of Pss (``/proc/PID/smaps_rollup``: shared pages counted once) of the
case process and all its descendants (UDF worker processes, Daft's and Ray's workers). The case
runs ``setup()``, then waits; the harness takes the baseline (``baseline_rss_mb``: interpreter,
imports, setup) and lets it run; ``peak_rss_mb`` is the largest sum during the run and
``peak_above_start_mb`` the peak less the baseline (``peak_rss_sum_mb``: the same peak with plain
Rss, shared pages counted per process). A peak shorter than the 20 ms interval can be missed; for
the case process itself ``root_hwm_mb`` is the kernel's exact peak Rss over the run (``VmHWM``,
reset after setup; children excluded) and ``root_hwm_above_start_mb`` that less the Rss at the
baseline: where it exceeds ``peak_above_start_mb`` (a single-process case) the sampler missed a
spike. ``ru_maxrss`` is not used: on Linux it survives fork+exec (every case reported at least the
harness's RSS) and it ignores child processes. The method is written into the JSON
(``memory_method``).

Sessions (distributed benchmarks): a module may define ``session(data_dir)``, a context manager
entered once around all its cases (e.g. ``bench_ray.py`` starts one local Ray cluster every case
joins, and stops it after the last case). It yields a dict with optional keys ``env`` (variables
added to every case's environment, e.g. the cluster's address), ``trees`` (``{name: root pid}``:
more process trees sampled while each case runs, every ``TREE_SAMPLE_INTERVAL_S``, with the same
Pss sum and baseline as the case's own tree: e.g. each Ray node's raylet, whose descendants are
that node's workers; reported per case under ``trees`` as ``{name: {"peak_mb", "baseline_mb",
"peak_above_start_mb", "peak_processes"}}``) and ``info`` (written into the JSON as ``session``).
``uses_session(engine) -> bool`` (default: every case) names the cases that run on the session;
the others run with its trees unsampled (each sample walks /proc: a core's share on 2 cores).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import checks  # noqa: E402
from memory_sampler import TreeSampler  # noqa: E402

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


def compare_checks(module, results: dict[str, dict]) -> list[str]:
    """Compares each case's ``rows`` and ``check`` with its Ketch reference (``ketch`` or
    ``ketch_q<N>``; a module's ``CHECK_REFERENCES`` maps a case to another Ketch case, or to None
    for a Ketch case that is a reference itself, e.g. a decode-only variant): ``check_status``
    becomes "ok", "mismatch", "known mismatch" (a peer's bug
    the module lists in ``KNOWN_MISMATCHES``, with the reason in ``check_note``) or "unchecked"
    (no reference ran). Floats within the module's ``check_rtol(engine)`` (default
    ``CHECK_RTOL``, else ``checks.FLOAT_RTOL``); ints and strings exactly. Returns the cases that
    mismatch and are not known."""
    known = getattr(module, "KNOWN_MISMATCHES", {})
    references = getattr(module, "CHECK_REFERENCES", {})
    default_rtol = getattr(module, "CHECK_RTOL", checks.FLOAT_RTOL)
    rtol_of = getattr(module, "check_rtol", lambda engine: default_rtol)
    bad = []
    for engine, out in results.items():
        if "error" in out or "check" not in out:
            continue
        query = query_of(engine)
        ref_name = references.get(engine, f"ketch_{query}" if query else "ketch")
        ref = results.get(ref_name, {}) if ref_name else {}
        if engine == ref_name or (engine in references and ref_name is None):
            out["check_status"] = "reference"
            continue
        if "error" in ref or "check" not in ref:
            out["check_status"] = "unchecked"
            continue
        equal = out.get("rows") == ref.get("rows") and checks.same(
            out["check"], ref["check"], rtol_of(engine)
        )
        if equal:
            out["check_status"] = "ok"
        elif engine in known and not engine.startswith("ketch"):
            out["check_status"] = "known mismatch"
            out["check_note"] = known[engine]
        else:
            out["check_status"] = "mismatch"
            out["check_reference"] = {"engine": ref_name, "rows": ref.get("rows"), "check": ref["check"]}
            out["check_difference"] = (
                f"rows {out.get('rows')} != {ref.get('rows')}"
                if out.get("rows") != ref.get("rows")
                else checks.first_difference(out["check"], ref["check"], rtol_of(engine))
            )
            bad.append(engine)
    return bad


SAMPLE_INTERVAL_S = 0.02
# The session's extra trees (Ray nodes) are sampled less often: each sample walks all of /proc.
TREE_SAMPLE_INTERVAL_S = 0.1

# The case's side of the handshake: setup, "READY", wait for a line on stdin (the harness takes the
# baseline meanwhile), the timed run, "TIMED" (the harness stops measuring memory), the strong check
# (a digest of the result, outside the timed and measured region), "RESULT {json}".
_CASE = """
import importlib.util, json, sys, time
spec = importlib.util.spec_from_file_location("b", {path!r})
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
getattr(m, "setup", lambda engine: None)({engine!r})
print("READY", flush=True)
sys.stdin.readline()
t = time.perf_counter()
out = m.run_{engine}({data_dir!r})
out["seconds"] = time.perf_counter() - t
print("TIMED", flush=True)
sys.stdin.readline()
if callable(out.get("check")):  # a check computed after the timed region
    out["check"] = out["check"]()
if "result" in out:  # the strong check, computed after the timed region
    sys.path.insert(0, {bench_dir!r})
    import checks
    out["check"] = checks.digest(
        out.pop("result"), out.pop("result_columns", None), out.pop("result_ordered", False)
    )
print("RESULT " + json.dumps(out), flush=True)
"""


def run_case(
    name: str,
    engine: str,
    data_dir: Path,
    env: dict[str, str] | None = None,
    trees: dict[str, int] | None = None,
    timeout_s: float | None = None,
    ketch_venv: bool = False,
) -> dict:
    """Runs one case in a fresh interpreter (``env``: variables added to its environment); its
    result dict plus seconds and the memory fields (``peak_rss_mb``, ``peak_rss_sum_mb``,
    ``baseline_rss_mb``, ``peak_above_start_mb``, ``peak_processes``, ``baseline_rss_sum_mb``,
    ``root_hwm_mb``, ``root_hwm_above_start_mb``; ``trees``: the same peak and baseline for each of
    the session's process trees, by name), or ``{"error": [last line of its output]}`` (also when
    it ran longer than ``timeout_s``: then it is killed). Ketch's cases, and a peer's with
    ``ketch_venv``, run in ``.venv``; the other peers' in ``benchmarks/.venv-peers``."""
    python = KETCH_PY if engine.startswith("ketch") or ketch_venv else PEERS_PY
    code = _CASE.format(
        path=str(ROOT / f"bench_{name}.py"), engine=engine, data_dir=str(data_dir), bench_dir=str(ROOT)
    )
    tree_samplers = {tree: TreeSampler(pid, TREE_SAMPLE_INTERVAL_S) for tree, pid in (trees or {}).items()}
    tree_baselines = {}
    with tempfile.TemporaryFile("w+") as stderr:
        proc = subprocess.Popen(
            [str(python), "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=REPO,
            env={**os.environ, **(env or {})},
        )
        timer = threading.Timer(timeout_s, proc.kill) if timeout_s else None
        if timer is not None:
            timer.start()
        sampler = TreeSampler(proc.pid, SAMPLE_INTERVAL_S)
        sampler.start()
        for tree_sampler in tree_samplers.values():
            tree_sampler.start()
        baseline = None
        result = None
        root_hwm = None
        lines = []
        for line in proc.stdout:  # keeps reading: a chatty case must not block on a full pipe
            if line.startswith("READY") and baseline is None:
                baseline = sampler.reset_peak()
                tree_baselines = {tree: t.reset_peak() for tree, t in tree_samplers.items()}
                try:
                    proc.stdin.write("go\n")
                    proc.stdin.flush()
                except BrokenPipeError:
                    pass  # it died meanwhile: its output says why
            elif line.startswith("TIMED") and root_hwm is None:
                root_hwm = sampler.root_hwm()  # before the digest: it is not the engine's memory
                sampler.stop()  # the timed run is over: the peak stays as it is (teardown not measured)
                for tree_sampler in tree_samplers.values():
                    tree_sampler.stop()
                try:
                    proc.stdin.write("go\n")
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
            elif line.startswith("RESULT "):
                result = json.loads(line[len("RESULT ") :])
            else:
                lines.append(line)
        proc.wait()
        if not proc.stdin.closed:
            proc.stdin.close()
        if timer is not None:
            timer.cancel()
        peak = sampler.stop()
        tree_peaks = {tree: t.stop() for tree, t in tree_samplers.items()}
        stderr.seek(0)
        output = stderr.read() + "".join(lines)
    if result is None and timeout_s and proc.returncode == -9:
        return {"error": [f"killed after the --case-timeout of {timeout_s:.0f} s"]}
    if result is None or baseline is None:
        return {"error": output.strip().splitlines()[-1:] or [f"no output (exit code {proc.returncode})"]}
    result.update(
        peak_rss_mb=peak.pss_mb,
        peak_rss_sum_mb=peak.rss_mb,
        baseline_rss_mb=baseline.pss_mb,
        peak_above_start_mb=peak.pss_mb - baseline.pss_mb,
        peak_processes=peak.processes,
        baseline_rss_sum_mb=baseline.rss_mb,
        root_hwm_mb=root_hwm / 2**20 if root_hwm is not None else None,
        root_hwm_above_start_mb=(root_hwm - baseline.rss) / 2**20 if root_hwm is not None else None,
    )
    if tree_samplers:
        result["trees"] = {
            tree: {
                "peak_mb": tree_peaks[tree].pss_mb,
                "baseline_mb": tree_baselines[tree].pss_mb,
                "peak_above_start_mb": tree_peaks[tree].pss_mb - tree_baselines[tree].pss_mb,
                "peak_processes": tree_peaks[tree].processes,
            }
            for tree in tree_samplers
        }
    return result


def write_json(
    path: Path,
    name: str,
    results: dict[str, dict],
    context: dict,
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
    complete: bool,
    cases: str = "",
    mismatches: list[str] | None = None,
) -> None:
    """The benchmark's JSON: machine, memory method, KETCH_BENCH_* variables, load averages, the
    session's info and the results by case (``complete``: every selected case ran)."""
    path.write_text(
        json.dumps(
            {
                "benchmark": name,
                "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "machine": platform.platform(),
                "cores": os.cpu_count(),
                "memory_method": TreeSampler(0, SAMPLE_INTERVAL_S).method,
                "env": {k: v for k, v in os.environ.items() if k.startswith("KETCH_BENCH_")},
                "load_average_before": load_before,
                "load_average_after": load_after,
                "cases": cases or None,
                "complete": complete,
                "check_method": (
                    "each case's rows and check compared with its Ketch case (benchmarks/checks.py):"
                    " ints and strings exactly, floats within check_rtol relative; check_status per case"
                ),
                "check_mismatches": mismatches or [],
                "session": context.get("info"),
                "results": results,
            },
            indent=2,
        )
    )


def recheck(names: list[str], size: str) -> int:
    """Applies ``compare_checks`` again to committed result files (``--recheck``)."""
    bad = []
    for name in names:
        path = RESULTS / f"{name}_{size}.json" if size else RESULTS / f"{name}.json"
        data = json.loads(path.read_text())
        for out in data["results"].values():
            for key in ("check_status", "check_note", "check_reference", "check_difference"):
                out.pop(key, None)
        mismatches = compare_checks(load(name), data["results"])
        data["check_mismatches"] = mismatches
        data["rechecked"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        path.write_text(json.dumps(data, indent=2))
        print(f"{path.name}: {len(mismatches)} mismatches {mismatches}")
        bad += [f"{name}:{e}" for e in mismatches]
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--json",
        default="",
        help="write the JSON here after every case (with --cases too; 'complete': false until the last)",
    )
    parser.add_argument(
        "--case-timeout",
        type=float,
        default=None,
        help="seconds: kill a case (its result: an error) after this",
    )
    parser.add_argument(
        "--cases", default="", help="regex: run only the matching engines (e.g. ketch_q1$); writes no JSON"
    )
    parser.add_argument(
        "--recheck",
        action="store_true",
        help="compare the checks of the committed JSON of each named benchmark again (after a change"
        " of a module's tolerance); times are not touched, 'rechecked' records when",
    )
    parser.add_argument(
        "--size",
        default="",
        help="a named size of the modules that define SIZES (KETCH_BENCH_SIZE; JSON: <name>_<size>.json)",
    )
    args = parser.parse_args()
    names = args.names or sorted(p.stem[len("bench_") :] for p in ROOT.glob("bench_*.py"))
    RESULTS.mkdir(exist_ok=True)
    if args.size:
        os.environ["KETCH_BENCH_SIZE"] = args.size  # read by the module at import, here and in its cases
    if args.recheck:
        return recheck(names, args.size)
    all_mismatches: list[str] = []
    for name in names:
        module = load(name)
        if args.size and args.size not in getattr(module, "SIZES", {}):
            print(f"bench {name}: no size {args.size!r} (sizes: {sorted(getattr(module, 'SIZES', {}))})")
            return 2
        data_dir = DATA / getattr(module, "DATA_NAME", name)
        if not (data_dir / ".ready").exists():
            data_dir.mkdir(parents=True, exist_ok=True)
            print(f"bench {name}: preparing data in {data_dir} ...", flush=True)
            module.prepare(str(data_dir))
            (data_dir / ".ready").write_text("ok")
        engines = [f[len("run_") :] for f in dir(module) if f.startswith("run_")]
        engines.sort(key=lambda e: (int(query_of(e)[1:] or -1), not e.startswith("ketch"), e))
        engines = [e for e in engines if re.search(args.cases, e)]
        if any(not e.startswith("ketch") for e in engines):
            ensure_peers()
        results: dict[str, dict] = {}
        load_before = os.getloadavg()
        session = getattr(module, "session", None)
        # The session's process trees (Ray nodes) are sampled only for the cases that run on it:
        # each sample walks /proc, which costs a core's share on a 2-core machine.
        uses_session = getattr(module, "uses_session", lambda engine: True)
        with session(str(data_dir)) if session and engines else contextlib.nullcontext({}) as context:
            for engine in engines:
                best: dict | None = None
                for _ in range(args.repeat):
                    print(f"bench {name}: {engine} ...", end="", flush=True)
                    out = run_case(
                        name,
                        engine,
                        data_dir,
                        context.get("env"),
                        context.get("trees") if uses_session(engine) else None,
                        args.case_timeout,
                        engine.split("_")[0] in getattr(module, "KETCH_VENV_ENGINES", ()),
                    )
                    print(f" {out.get('seconds', float('nan')):.3f} s" if "error" not in out else " error")
                    if "error" in out:
                        best = out
                        break
                    if best is None or out["seconds"] < best["seconds"]:
                        best = out
                results[engine] = best or {}
                if args.json:
                    write_json(
                        Path(args.json),
                        name,
                        results,
                        context,
                        load_before,
                        os.getloadavg(),
                        False,
                        args.cases,
                    )
        load_after = os.getloadavg()
        mismatches = compare_checks(module, results)
        all_mismatches += [f"{name}:{engine}" for engine in mismatches]
        print(f"\n== {name}: {module.__doc__.strip().splitlines()[0]}")
        print(
            f"{'engine':<26}{'seconds':>10}{'x ketch':>10}{'rows':>10}{'peak MB':>10}{'+start MB':>10}"
            f"{'hwm+ MB':>8}{'procs':>6}  answer  check"
        )
        for engine, out in results.items():
            if "error" in out:
                print(f"{engine:<26}{'error':>10}  {out['error']}")
                continue
            query = query_of(engine)
            base = results.get(f"ketch_{query}" if query else "ketch", {}).get("seconds")
            status = out.get("check_status", "unchecked")
            ratio = f"{out['seconds'] / base:>10.2f}" if base else f"{'nan':>10}"
            if status in ("mismatch", "known mismatch"):
                ratio = f"{'WRONG':>10}"  # a timing counts only with the right answer
            bound = f"  (RSS bound {out['rss_bound_mb']:.0f} MB)" if "rss_bound_mb" in out else ""
            metric = f"  {out['metric']}" if "metric" in out else ""
            note = f"  ({out['check_note']})" if "check_note" in out else ""
            hwm = out.get("root_hwm_above_start_mb") or float("nan")
            memory = f"{out['peak_rss_mb']:>10.0f}{out['peak_above_start_mb']:>10.0f}{hwm:>8.0f}"
            memory += f"{out['peak_processes']:>6}"
            answer = {"reference": "ref", "ok": "ok", "unchecked": "-"}.get(status, "WRONG")
            print(
                f"{engine:<26}{out['seconds']:>10.3f}{ratio}{out['rows']:>10}{memory}"
                f"  {answer:<6}  {checks.short(out['check'])}{bound}{metric}{note}"
            )
            if status == "mismatch":
                ref = out["check_reference"]
                print(f"{'':<26}differs from {ref['engine']}: {out['check_difference']}")
            if "trees" in out:
                trees = ", ".join(
                    f"{tree} {t['peak_mb']:.0f} (+{t['peak_above_start_mb']:.0f})"
                    for tree, t in out["trees"].items()
                )
                print(f"{'':<26}peak MB per tree (+above start): {trees}")
        print(
            "peak MB: Pss of the case's process tree, peak during the run; +start MB: that peak less its"
            " value after setup(); hwm+ MB: the same for the case process's own exact peak Rss (VmHWM,"
            " children excluded: above +start MB, the sampler missed a spike);"
            " procs: most processes in the tree; answer: rows and check against Ketch's (ref), WRONG:"
            " a different answer (its time is not compared)"
        )
        if args.json:
            write_json(
                Path(args.json), name, results, context, load_before, load_after, True, args.cases, mismatches
            )
        if args.cases:
            print(f"(--cases {args.cases}: a partial run, {RESULTS / (name + '.json')} left as it was)")
            continue
        stem = f"{name}_{args.size}" if args.size else name
        write_json(
            RESULTS / f"{stem}.json", name, results, context, load_before, load_after, True, "", mismatches
        )
    if all_mismatches:
        print(f"bench: wrong answers (not Ketch's): {', '.join(all_mismatches)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
