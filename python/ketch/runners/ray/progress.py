"""Progress bars of a query on Ray: one tqdm bar per stage (tasks done of the stage's tasks, rows
out), drawn on the driver as the coordinator collects the tasks' metadata. Shown as the native
runner shows its bars: only when ``enable_progress_bar`` is set, the stream is a terminal and the
stage runs longer than ``progress_bar_delay_seconds``. Stage names are redacted like every other
printed plan text (no URL credentials)."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any

from ketch.io.redact import redact


class StageProgress:
    """``with StageProgress(config, name, tasks) as bar: bar.task_done(rows)``."""

    # Where bars go; tests point it at a terminal-like stream.
    stream: Any = None

    def __init__(self, config: Any, name: str, tasks: int, position: int = 0) -> None:
        stream = StageProgress.stream or sys.stderr
        enabled = (
            bool(getattr(config, "enable_progress_bar", False)) and getattr(stream, "isatty", lambda: False)()
        )
        self._bar: Any = None
        self._rows = 0
        self._start = time.monotonic()
        self._delay = float(getattr(config, "progress_bar_delay_seconds", 0.0))
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(
                desc=redact(name),
                total=tasks if tasks >= 0 else None,  # < 0: known only when the stage ends
                unit=" tasks",
                file=stream,
                leave=False,
                position=position,
                delay=self._delay,
            )

    def task_done(self, rows: int) -> None:
        if self._bar is not None:
            self._rows += rows
            self._bar.set_postfix_str(f"{self._rows} rows", refresh=False)
            self._bar.update(1)
            # Tasks are coarse: draw each one (tqdm skips updates closer than its mininterval),
            # once the stage has run longer than the delay.
            if time.monotonic() - self._start >= self._delay:
                self._bar.refresh()

    def __enter__(self) -> StageProgress:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.close()
