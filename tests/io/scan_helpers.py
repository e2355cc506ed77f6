"""What the scan tests read back from Ketch: the optimized plan's text and the scan metrics."""

from __future__ import annotations

import io

import ketch


def optimized_plan(df: ketch.DataFrame) -> str:
    """The optimized logical plan section of ``explain(show_all=True)``."""
    buf = io.StringIO()
    df.explain(show_all=True, file=buf)
    text = buf.getvalue()
    return text[text.index("== Optimized") : text.index("== Physical")]


def scan_stats(df: ketch.DataFrame) -> dict:
    """Runs the query (keeping its result) and returns ``ExecutionStats.scan``."""
    return df.explain_analyze(file=io.StringIO()).scan
