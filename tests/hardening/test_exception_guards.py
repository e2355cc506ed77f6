"""No C++ exception can escape a worker thread (it would std::terminate the process): every task
the engine hands to a thread pool runs inside GuardExceptions (cpp/ketch/common/exception_guard.h),
which turns std::bad_alloc into OutOfMemory and any other exception into an error Status. Python
entry points are guarded by nanobind, which translates C++ exceptions into Python ones."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2] / "cpp" / "ketch"

# Call sites whose task body guards itself further in (the executor's loops call every operator,
# source and sink through GuardExceptions), or runs only C code and Status-returning calls.
GUARDED_INSIDE = {
    ("exec/pipeline_run.cc", "RunSource"),  # Produce() is guarded in RunSource
    ("exec/pipeline_run.cc", "Step"),  # Execute/ExecuteStream/Push are guarded in Step and Deliver
    ("exec/sources/scan_source.cc", "std::move(task)"),  # video decoding: FFmpeg (C) and Status calls
}


def test_every_pool_task_is_guarded():
    unguarded = []
    for path in sorted(ROOT.rglob("*.cc")):
        lines = path.read_text().splitlines()
        rel = str(path.relative_to(ROOT))
        for i, line in enumerate(lines):
            if not re.search(r"(->|\.)(Spawn|Submit)\(", line):
                continue
            window = "\n".join(lines[max(0, i - 6) : i + 4])  # the task lambda may be defined just above
            if "GuardExceptions" in window:
                continue
            if any(rel == f and key in "\n".join(lines[i : i + 3]) for f, key in GUARDED_INSIDE):
                continue
            unguarded.append(f"{rel}:{i + 1}: {line.strip()}")
    assert not unguarded, "thread-pool tasks without GuardExceptions:\n" + "\n".join(unguarded)


def test_the_executor_guards_operators_sources_and_sinks():
    # The pipeline run (executor.cc's entry points hand every pipeline to it) and its re-chunk steps.
    files = ("pipeline_run.cc", "pipeline_rechunk.cc")
    text = "\n".join((ROOT / "exec" / name).read_text() for name in files)
    assert "->Produce(" in text and "sink->Push(" in text
    for call in ("->Execute(", ".ExecuteStream(", "->Produce(", "sink->Push(", ".Finalize()"):
        for line in [ln for ln in text.splitlines() if call in ln and not ln.strip().startswith("//")]:
            assert "GuardExceptions" in line or "return" in line, line
