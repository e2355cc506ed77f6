"""Progress bars for long queries: a thread polls the native executor's per-operator counters
(``ExecutionStats``) while the query runs with the GIL released, and draws one tqdm bar per
operator (rows out). Off when stderr is not a terminal or ``enable_progress_bar=False``."""

from __future__ import annotations

import sys
import threading
from types import TracebackType
from typing import Any

from ketch import _core
from ketch.context import ExecutionConfig
from ketch.io.redact import redact


class ProgressBars:
    def __init__(self, stats: _core.ExecutionStats, config: ExecutionConfig, stream: Any = None) -> None:
        self._stats = stats
        self._stream = stream or sys.stderr
        self._enabled = config.enable_progress_bar and getattr(self._stream, "isatty", lambda: False)()
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
        from tqdm import tqdm

        if self._done.wait(self._delay):
            return  # short query: no bars at all
        bars: list[Any] = []
        try:
            while True:
                operators = self._stats.operators()
                while len(bars) < len(operators):
                    op = operators[len(bars)]
                    bars.append(
                        tqdm(
                            desc=redact(f"[{op['pipeline']}] {op['name']}"),
                            unit=" rows",
                            file=self._stream,
                            leave=False,
                            position=len(bars),
                        )
                    )
                for bar, op in zip(bars, operators, strict=False):
                    bar.n = op["rows_out"]
                    bar.refresh()
                if self._done.wait(0.2):
                    break
        finally:
            for bar in bars:
                bar.close()
