"""Runs the ``>>>`` examples of the installed Daft's docstrings with Daft and with Ketch
(``import daft`` → ``import ketch as daft``) and compares what they print (issue 28).

    python scripts/daft_doctest_check.py [--limit N] [--timeout S]
    python scripts/daft_doctest_check.py compare --work /tmp/daft_doctests_XXXX  (re-summarise a run)

Needs Daft 0.7.26 in ``benchmarks/.venv-peers`` (``make bench`` installs it) and Ketch's
``.venv``. Three steps, each in its own process:

1. ``collect`` (peers' Python): every docstring of the ``daft`` package with examples
   (``doctest.DocTestFinder``), as JSON: its name and examples (source and the text Daft's
   docstring expects).
2. ``run`` (once per engine): each docstring's examples run in order in fresh globals, each
   under an alarm of ``--timeout`` seconds, stdout captured per example (an expression's value
   printed as the interactive interpreter does). Ketch's run rewrites the imports first.
3. The comparison: per docstring, "ran" (Ketch raised nothing), "same output" (Ketch printed
   what Daft printed), "different output", "failed" (Ketch raised; grouped by the exception
   type and its first line). Docstrings whose examples fail under Daft itself (network, missing
   extras) are counted apart and not compared.

Prints the summary and writes it to ``scripts/daft_doctest_summary.txt`` (counts and reasons
only: Daft's docstrings are not copied into this repository)."""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PEERS_PY = ROOT / "benchmarks" / ".venv-peers" / "bin" / "python"
KETCH_PY = ROOT / ".venv" / "bin" / "python"
SUMMARY = ROOT / "scripts" / "daft_doctest_summary.txt"
_IMPORT = re.compile(r"^(\s*)import daft\b(?!\.)", re.M)
_FROM = re.compile(r"^(\s*)from daft(\.|\s)", re.M)
_IMPORT_SUB = re.compile(r"^(\s*)import daft\.([\w.]+)(\s+as\s+\w+)?", re.M)


def collect(out: str) -> None:
    """Step 1, in Daft's venv: the docstrings with examples, as JSON in `out`."""
    import doctest
    import importlib
    import pkgutil

    import daft

    finder = doctest.DocTestFinder(exclude_empty=True)
    seen: set[str] = set()
    tests: list[dict[str, Any]] = []
    for info in pkgutil.walk_packages(daft.__path__, "daft."):
        if ".tests" in info.name or info.name.endswith("_pb2"):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 (optional extras)
            continue
        try:
            found = finder.find(module)
        except Exception:  # noqa: BLE001 (a lazily imported extra that is not installed)
            continue
        for test in found:
            if test.name in seen or not test.examples:
                continue
            seen.add(test.name)
            examples = [{"source": e.source, "want": e.want} for e in test.examples]
            tests.append({"name": test.name, "examples": examples})
    Path(out).write_text(json.dumps(tests))


def to_ketch(source: str) -> str:
    """An example's source with Daft's imports pointing at Ketch."""
    source = _IMPORT_SUB.sub(lambda m: f"{m.group(1)}import ketch.{m.group(2)}{m.group(3) or ''}", source)
    source = _IMPORT.sub(r"\1import ketch as daft", source)
    return _FROM.sub(r"\1from ketch\2", source)


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def _reset_runner(engine: str) -> None:
    """An example that switched to the Ray runner does not leave the next ones on it."""
    try:
        if engine == "ketch":
            from ketch import runners

            if getattr(runners._runner, "name", "native") != "native":
                runners._runner = None  # the next query picks the native runner again
        import ray

        if ray.is_initialized():
            ray.shutdown()
    except Exception:  # noqa: BLE001 (best effort between docstrings)
        pass


def run(tests_json: str, engine: str, out: str, timeout: int) -> None:
    """Step 2: every docstring's examples, outputs and the first error, as JSON in `out`."""
    signal.signal(signal.SIGALRM, _alarm)
    results = []
    os.chdir(tempfile.mkdtemp(prefix=f"doctest_{engine}_"))
    for test in json.loads(Path(tests_json).read_text()):
        globs: dict[str, Any] = {"__name__": "__main__"}
        outputs: list[str] = []
        error = None
        for example in test["examples"]:
            source = to_ketch(example["source"]) if engine == "ketch" else example["source"]
            buffer = io.StringIO()
            signal.alarm(timeout)
            try:
                with contextlib.redirect_stdout(buffer):
                    exec(compile(source, "<doctest>", "single"), globs)  # noqa: S102
            except _Timeout:
                error = "Timeout: over the time limit"
            except BaseException as exc:  # noqa: BLE001
                first = (str(exc).strip().splitlines() or [""])[0][:160]
                error = f"{type(exc).__name__}: {first}"
                if os.environ.get("DOCTEST_TRACEBACKS"):
                    traceback.print_exc()
            finally:
                signal.alarm(0)
            outputs.append(buffer.getvalue())
            if error:
                break
        results.append({"name": test["name"], "outputs": outputs, "error": error})
        _reset_runner(engine)
    Path(out).write_text(json.dumps(results))


def _normalized(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def compare(daft_json: str, ketch_json: str) -> str:
    """Step 3: the summary text."""
    daft = {r["name"]: r for r in json.loads(Path(daft_json).read_text())}
    ketch = {r["name"]: r for r in json.loads(Path(ketch_json).read_text())}
    counts: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for name, d in daft.items():
        k = ketch[name]
        counts["docstrings"] += 1
        if d["error"]:
            counts["failed under Daft too (not compared)"] += 1
            continue
        counts["compared"] += 1
        if k["error"]:
            counts["failed"] += 1
            reason = k["error"][:140]  # the names stay: a missing attribute is the thing to add
            reasons[reason] += 1
            examples.setdefault(reason, name)
            continue
        counts["ran"] += 1
        if [_normalized(o) for o in d["outputs"]] == [_normalized(o) for o in k["outputs"]]:
            counts["same output"] += 1
        else:
            counts["different output"] += 1
    lines = ["Daft 0.7.26 docstring examples, run with Daft and with `import ketch as daft`", ""]
    for key in ("docstrings", "failed under Daft too (not compared)", "compared", "ran", "same output",
                "different output", "failed"):  # fmt: skip
        lines.append(f"{key:40s} {counts[key]}")
    lines += ["", "Ketch failures by reason (count, reason, one docstring):"]
    for reason, n in reasons.most_common():
        lines.append(f"{n:4d}  {reason}  [{examples[reason]}]")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", nargs="?", default="all", choices=["all", "collect", "run", "compare"])
    parser.add_argument("--work", help="compare: the folder of an earlier run (daft.json, ketch.json)")
    parser.add_argument("--tests", help="collect: where to write; run: the collected JSON")
    parser.add_argument("--engine", choices=["daft", "ketch"])
    parser.add_argument("--out")
    parser.add_argument("--timeout", type=int, default=60, help="seconds per example")
    parser.add_argument("--limit", type=int, default=0, help="only the first N docstrings")
    args = parser.parse_args()
    if args.step == "collect":
        collect(args.tests)
        return 0
    if args.step == "run":
        run(args.tests, args.engine, args.out, args.timeout)
        return 0
    if args.step == "compare":
        summary = compare(str(Path(args.work) / "daft.json"), str(Path(args.work) / "ketch.json"))
        print(summary)
        SUMMARY.write_text(summary)
        return 0
    work = Path(tempfile.mkdtemp(prefix="daft_doctests_"))
    print(f"work folder: {work}", file=sys.stderr)
    tests = work / "tests.json"
    me = str(Path(__file__).resolve())
    subprocess.run([str(PEERS_PY), me, "collect", "--tests", str(tests)], check=True)
    if args.limit:
        tests.write_text(json.dumps(json.loads(tests.read_text())[: args.limit]))
    # A Ray runner started by an example gets a cluster of its own (never one found on the
    # machine, e.g. a test suite's), and no model hub is tried.
    isolated = {**os.environ, "RAY_ADDRESS": "local", "HF_HUB_OFFLINE": "1"}
    env = {**isolated, "PYTHONPATH": str(ROOT / "python")}
    for engine, python in (("daft", PEERS_PY), ("ketch", KETCH_PY)):
        subprocess.run(
            [str(python), me, "run", "--tests", str(tests), "--engine", engine,
             "--out", str(work / f"{engine}.json"), "--timeout", str(args.timeout)],
            check=True, env=env if engine == "ketch" else isolated, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    summary = compare(str(work / "daft.json"), str(work / "ketch.json"))
    print(summary)
    if not args.limit:
        SUMMARY.write_text(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
