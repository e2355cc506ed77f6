"""Progress bars for long queries: a thread polls the native executor's per-operator counters
(``ExecutionStats``) while the query runs with the GIL released, and draws one tqdm bar per
pipeline stage (a source and the operators it feeds, up to the blocking sink that ends it).

A stage's bar counts the rows its source produced, with tqdm's rate (rows/s); its label names
the stage's operators as users know them (``Read Parquet → Filter → Aggregate``) and the
``out`` figure gives the rows that reached the stage's end. Bars come from ``tqdm.auto``, so in
Jupyter they are notebook widgets (when ipywidgets is installed; text bars otherwise).
Shown when ``enable_progress_bar`` is on and the query runs longer than
``progress_bar_delay_seconds``, on a terminal or in a notebook kernel; never when stderr is a
pipe or a file."""

from __future__ import annotations

import dataclasses
import re
import sys
import threading
from types import TracebackType
from typing import Any

from ketch import _core
from ketch.context import ExecutionConfig
from ketch.io.redact import redact

# Engine operator names → what users call them; None: plumbing that gets no mention.
_USER_NAMES: dict[str, str | None] = {
    "ScanParquet": "Read Parquet",
    "ScanCsv": "Read CSV",
    "ScanCSV": "Read CSV",
    "ScanJson": "Read JSON",
    "ScanJSON": "Read JSON",
    "ScanLance": "Read Lance",
    "InMemoryScan": "In-memory source",
    "UDFProject": "UDF",
    "AggregatePartial": "Aggregate",
    "AggregateFinal": None,
    "AggregateFinalOutput": "Aggregate",
    "SortRuns": "Sort",
    "Sort": None,
    "SortOutput": "Sort",
    "JoinInput": "Join (build)",
    "HashJoinProbe": "Join",
    "Collect": None,
    "Rechunk": None,
}


def user_name(engine_name: str) -> str | None:
    """The user-facing name of an engine operator (``ScanParquet`` → ``Read Parquet``,
    ``Rechunk[...]`` → None: not shown); other names pass through, split into words
    (``IntoBatches`` → ``Into Batches``)."""
    base = engine_name.split("[", 1)[0]
    if base in _USER_NAMES:
        return _USER_NAMES[base]
    if base.endswith("Output") and base != "Output":
        base = base[: -len("Output")]  # a blocking sink's output side: named as the sink
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", base)


@dataclasses.dataclass(frozen=True)
class Stage:
    """One pipeline of the query, as its bar shows it."""

    pipeline: int
    label: str  # its operators' user-facing names, "A → B → C"
    rows: int  # rows its source produced so far
    rows_out: int  # rows that reached its last operator


def stages(operators: list[dict[str, Any]]) -> list[Stage]:
    """Groups ``ExecutionStats.operators()`` by pipeline, in pipeline order."""
    by_pipeline: dict[int, list[dict[str, Any]]] = {}
    for op in operators:
        by_pipeline.setdefault(int(op["pipeline"]), []).append(op)
    out = []
    for pipeline in sorted(by_pipeline):
        ops = by_pipeline[pipeline]
        names: list[str] = []
        for op in ops:
            name = user_name(str(op["name"]))
            if name and (not names or names[-1] != name):
                names.append(name)
        label = " → ".join(names) or user_name(str(ops[0]["name"])) or str(ops[0]["name"])
        out.append(Stage(pipeline, label, int(ops[0]["rows_out"]), int(ops[-1]["rows_in"])))
    return out


def _in_notebook() -> bool:
    """True inside a Jupyter (ipykernel) session: its stderr is no terminal, yet bars help."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = getattr(ipython, "get_ipython", lambda: None)()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class ProgressBars:
    def __init__(self, stats: _core.ExecutionStats, config: ExecutionConfig, stream: Any = None) -> None:
        self._stats = stats
        self._stream = stream or sys.stderr
        shown_here = getattr(self._stream, "isatty", lambda: False)() or (stream is None and _in_notebook())
        self._enabled = config.enable_progress_bar and shown_here
        self._delay = config.progress_bar_delay_seconds
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ProgressBars:
        if self._enabled:
            self._thread = threading.Thread(target=self._run, name="ketch-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tqdm.auto's "no ipywidgets" notice: text bars then
            from tqdm.auto import tqdm

        if self._done.wait(self._delay):
            return  # short query: no bars at all
        bars: dict[int, Any] = {}
        try:
            while True:
                for stage in stages(self._stats.operators()):
                    bar = bars.get(stage.pipeline)
                    if bar is None:
                        bar = bars[stage.pipeline] = tqdm(
                            desc=redact(f"[{stage.pipeline}] {stage.label}"),
                            unit=" rows",
                            unit_scale=True,
                            file=self._stream,
                            leave=False,
                            position=len(bars),
                            dynamic_ncols=True,
                        )
                    if stage.rows > bar.n:
                        bar.update(stage.rows - bar.n)  # update(): tqdm's rate follows
                    bar.set_postfix_str(f"out={stage.rows_out}", refresh=False)
                    bar.refresh()
                if self._done.wait(0.2):
                    break
        finally:
            for bar in bars.values():
                bar.close()
