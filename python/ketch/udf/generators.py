"""Generator UDFs: each row's generator yields the items of that row's list (exploded above).
``_GeneratorRunner`` runs them on threads; ``_EngineStream`` / ``_GeneratorStream`` let the engine
pull items lazily, so a limit above the explode stops the generators early (``_MAX_ITEMS``)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ketch.execution.call_threads import (
    CallCancelled,
)
from ketch.udf.errors import _TOKEN, _stash
from ketch.udf.results import _item_bytes, _to_arrow_result
from ketch.udf.runners import _MAX_ITEMS, _RowFunctionRunner


class _GeneratorRunner(_RowFunctionRunner):
    """A generator function: each row's yielded values become one list (exploded into rows by
    the DataFrame)."""

    def _evaluate(self, row: tuple) -> Any:
        items = self.func(*row)
        limit = _MAX_ITEMS.get()
        if limit < 0:
            return list(items)
        try:  # a limit above needs no more than `limit` items of any row: stop pulling there
            return list(itertools.islice(items, limit))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    def _call_row(self, row: tuple) -> Any:
        out = super()._call_row(row)
        return out or None  # nothing yielded (or a failed row under on_error log/ignore): a null row

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        return [self._call_row(row) for row in self._rows(args)]

    def can_stream(self) -> bool:
        # Under timeout_s (which bounds a row's whole generator) a call takes every item at once.
        return self.timeout_s is None

    def start_stream(
        self, args: list[pa.Array], num_rows: int, cancelled: Callable[[], bool] | None, max_items: int
    ) -> _EngineStream | None:
        if not self.can_stream():
            return None
        if self.process is not None:
            pool = self.process
            started: list[Any] = []  # its worker starts the stream on the first pull

            def pull_from_worker(max_items_now: int, max_bytes: int) -> tuple[int, pa.Array, bool]:
                if not started:
                    started.append(pool.start_stream(args, num_rows, cancelled, max_items))
                return started[0].next(max_items_now, max_bytes, cancelled)

            def close_worker_stream() -> None:
                if started:
                    started[0].close()

            return _EngineStream(self.name, pull_from_worker, close_worker_stream)
        stream = _GeneratorStream(self, self._rows(args), max_items)

        def pull(max_items: int, max_bytes: int) -> tuple[int, pa.Array, bool]:
            return self._threads.run(functools.partial(stream.pull, max_items, max_bytes), cancelled, None)

        return _EngineStream(self.name, pull, stream.close)


class _EngineStream:
    """What the engine pulls a lazy generator call through (``next``, ``close``): a failure comes
    out as the RuntimeError the engine expects (the original exception stashed, as for batches)."""

    def __init__(
        self,
        name: str,
        pull: Callable[[int, int], tuple[int, pa.Array, bool]],
        close: Callable[[], None],
    ) -> None:
        self.name = name
        self._pull = pull
        self._close = close

    def next(self, max_items: int, max_bytes: int) -> tuple[int, pa.Array, bool]:
        """(first row, one list of items per row from it on, whether every row is finished)."""
        try:
            return self._pull(max_items, max_bytes)
        except CallCancelled:
            message = f"UDF '{self.name}' was stopped: the query was cancelled"
        except BaseException as exc:  # KeyboardInterrupt / SystemExit raised by user code too
            token = _stash(exc)
            message = f"UDF '{self.name}' failed: {type(exc).__name__}: {exc} {_TOKEN}{token}]"
        del self
        raise RuntimeError(message)

    def close(self) -> None:
        self._close()


class _GeneratorStream:
    """A generator UDF's call over a batch of rows, pulled lazily: each ``pull`` takes at most
    ``max_items`` items (and stops once about ``max_bytes`` are taken) from the rows' generators in
    order, so an endless generator under a filter and a limit stops when the limit is reached, and
    what is pulled at once stays bounded. Runs on a call thread of the UDF (thread mode) or in its
    worker process.

    Errors: ``on_error`` applies per row; a row that fails after it yielded items keeps them (they
    may already be downstream), and ``max_retries`` restarts a row's generator only while it has
    yielded nothing."""

    def __init__(self, runner: _GeneratorRunner, rows: list[tuple], max_items: int) -> None:
        self.runner = runner
        self.rows = rows
        self.per_row_cap = max_items  # a limit above: most items any row needs (-1: all)
        self.row = 0  # the row being pulled
        self.items: Any = None  # its iterator (None: not started)
        self.taken = 0  # items taken from it
        self.attempts = 0  # failed starts of it

    def pull(self, max_items: int, max_bytes: int) -> tuple[int, pa.Array, bool]:
        """(first row, one list of items per row from it on, whether every row is finished)."""
        first, lists = self._pull(max_items, max_bytes)
        array = _to_arrow_result(lists, self.runner.dtype, len(lists), self.runner.name)
        return first, array, self.row >= len(self.rows)

    def _pull(self, max_items: int, max_bytes: int) -> tuple[int, list[list[Any]]]:
        """``lists[i]``: the items taken now from row ``first + i`` (the rows up to the current one;
        None for a row whose generator yielded nothing)."""
        first = self.row
        lists: list[list[Any]] = []
        count = size = 0
        while self.row < len(self.rows) and count < max_items and size < max_bytes:
            if len(lists) == self.row - first:
                lists.append([])  # the current row's items in this chunk
            item, finished = self._next_item()
            if finished:
                if self.taken == 0:
                    lists[-1] = None  # the row yielded nothing: one null row (Daft's rule)
                elif not lists[-1]:
                    # Its items all went out in earlier chunks (only the chunk's first row can be
                    # so): it has no entry here, or the explode would add a null row for it.
                    lists.pop()
                    first += 1
                self._finish_row()
                continue
            lists[-1].append(item)
            count += 1
            size += _item_bytes(item)
        return first, lists

    def _next_item(self) -> tuple[Any, bool]:
        """The current row's next item, or (None, True) once it is finished (or failed)."""
        runner = self.runner
        while True:
            try:
                if self.items is None:
                    self.items = iter(runner.func(*self.rows[self.row]))
                    self.taken = 0
                if 0 <= self.per_row_cap <= self.taken:
                    return None, True
                item = next(self.items)
                self.taken += 1
                return item, False
            except StopIteration:
                return None, True
            except Exception as exc:
                if self.taken == 0 and self.attempts < runner.max_retries:
                    self.attempts += 1
                    self._close_items()
                    continue
                runner._row_failed(exc)  # raises with on_error="raise"
                return None, True

    def _finish_row(self) -> None:
        self._close_items()
        self.row += 1
        self.attempts = 0

    def _close_items(self) -> None:
        items, self.items = self.items, None
        close = getattr(items, "close", None)
        if close is not None:
            try:
                close()
            except ValueError:  # still running on an abandoned call thread
                pass

    def close(self) -> None:
        """The engine needs no more items: the current row's generator is closed."""
        self._close_items()
        self.row = len(self.rows)
