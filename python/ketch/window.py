"""Window specifications for window functions (Daft's ``daft.window.Window``)."""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any

from ketch.expressions import Expression, col


class _WindowBoundary:
    """An unbounded end of a window frame (``Window.unbounded_preceding`` / ``unbounded_following``)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"Window.{self._name}"


_UNBOUNDED_PRECEDING = _WindowBoundary("unbounded_preceding")
_UNBOUNDED_FOLLOWING = _WindowBoundary("unbounded_following")


def _expressions(cols: tuple[Any, ...]) -> list[Expression]:
    out: list[Expression] = []
    for c in cols:
        if isinstance(c, str):
            out.append(col(c))
        elif isinstance(c, Expression):
            out.append(c)
        elif isinstance(c, Iterable):
            out.extend(_expressions(tuple(c)))
        else:
            raise TypeError(f"window keys must be column names or expressions, got {type(c).__name__}")
    return out


def _flags(value: bool | list[bool], count: int, what: str) -> list[bool]:
    if isinstance(value, bool):
        return [value] * count
    flags = [bool(v) for v in value]
    if len(flags) != count:
        raise ValueError(f"Length of {what} flags must match number of order by columns")
    return flags


class Window:
    """Describes how to partition rows and in what order (and over which frame) a window function
    is computed, as in Daft: ``Window().partition_by("g").order_by("t").rows_between(-2, 0)``.

    Frames: without one, an aggregate sees its whole partition, with or without ``order_by``
    (Daft's rule; a running total asks for ``rows_between(unbounded_preceding, current_row)``).
    Boundaries are ``Window.unbounded_preceding``, ``Window.unbounded_following``,
    ``Window.current_row`` (0) or integer offsets (negative = preceding) for ``rows_between``,
    numeric offsets in units of the single order key for ``range_between`` (``timedelta``s over a
    temporal key). Invalid frames (start after end, range frames without exactly one numeric or
    temporal order key) raise ValueError / TypeError when the window expression is used.
    """

    unbounded_preceding: Any = _UNBOUNDED_PRECEDING
    unbounded_following: Any = _UNBOUNDED_FOLLOWING
    current_row: Any = 0

    def __init__(self) -> None:
        self._partition_by: list[Expression] = []
        self._order_by: list[Expression] = []
        self._descending: list[bool] = []
        self._nulls_first: list[bool] = []
        self._frame = "default"
        self._start: Any = None
        self._end: Any = None
        self._min_periods = 1
        self._bound_unit: str | None = None  # "us": range bounds given as timedeltas

    def _copy(self) -> Window:
        w = Window()
        w.__dict__.update(self.__dict__)
        return w

    def partition_by(self, *cols: Any) -> Window:
        """Partitions the rows by one or more columns or expressions. Raises ValueError when none
        is given."""
        exprs = _expressions(cols)
        if not exprs:
            raise ValueError("At least one partition column must be specified")
        w = self._copy()
        w._partition_by = exprs
        return w

    def order_by(
        self, *cols: Any, desc: bool | list[bool] = False, nulls_first: bool | list[bool] | None = None
    ) -> Window:
        """Orders the rows within each partition. ``desc``: one flag for all keys or one per key;
        ``nulls_first``: likewise, default ``desc`` (nulls come first in descending order, as
        Daft's sort). Raises ValueError when a flag list's length does not match the keys."""
        exprs = _expressions(cols)
        w = self._copy()
        w._order_by = exprs
        w._descending = _flags(desc, len(exprs), "descending")
        w._nulls_first = (
            list(w._descending) if nulls_first is None else _flags(nulls_first, len(exprs), "nulls_first")
        )
        return w

    def _framed(self, kind: str, start: Any, end: Any, min_periods: int) -> Window:
        if start is _UNBOUNDED_FOLLOWING:
            raise ValueError(f"{kind}: the frame start cannot be Window.unbounded_following")
        if end is _UNBOUNDED_PRECEDING:
            raise ValueError(f"{kind}: the frame end cannot be Window.unbounded_preceding")
        durations = [b for b in (start, end) if isinstance(b, datetime.timedelta)]
        if durations:
            # timedelta bounds (a temporal order key): microseconds, scaled to the key's unit.
            if kind != "range_between":
                raise TypeError(f"{kind}: frame boundaries must be integers, got {durations[0]!r}")
            for bound in (start, end):
                if not isinstance(bound, (datetime.timedelta, _WindowBoundary)) and bound != 0:
                    raise TypeError(f"{kind}: mix of timedelta and number bounds, got {start!r} and {end!r}")
            start, end = (
                b / datetime.timedelta(microseconds=1) if isinstance(b, datetime.timedelta) else b
                for b in (start, end)
            )
        for bound in (start, end):
            if isinstance(bound, _WindowBoundary):
                continue
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                raise TypeError(
                    f"{kind}: frame boundaries must be numbers or Window boundaries, got {bound!r}"
                )
            if kind == "rows_between" and not isinstance(bound, int):
                raise TypeError(f"rows_between: frame boundaries must be integers, got {bound!r}")
        if not isinstance(min_periods, int) or min_periods < 1:
            raise ValueError(f"{kind}: min_periods must be an integer >= 1, got {min_periods!r}")
        w = self._copy()
        w._frame = "rows" if kind == "rows_between" else "range"
        w._start = None if isinstance(start, _WindowBoundary) else start
        w._end = None if isinstance(end, _WindowBoundary) else end
        w._min_periods = min_periods
        w._bound_unit = "us" if durations else None
        return w

    def rows_between(
        self,
        start: int | Any = unbounded_preceding,
        end: int | Any = unbounded_following,
        min_periods: int = 1,
    ) -> Window:
        """Each row's frame: the rows from ``start`` to ``end`` (inclusive) rows away from it,
        within its partition; aggregates over fewer than ``min_periods`` values are null."""
        return self._framed("rows_between", start, end, min_periods)

    def range_between(
        self,
        start: int | float | Any = unbounded_preceding,
        end: int | float | Any = unbounded_following,
        min_periods: int = 1,
    ) -> Window:
        """Each row's frame: the rows of its partition whose (single, numeric) order key lies
        between the current value + ``start`` and + ``end``, for either order direction (Daft's
        rule: under ``desc=True``, ``range_between(-2, 0)`` still holds the values x-2 .. x).
        Over a timestamp, date or duration order key the bounds are ``datetime.timedelta``s
        (``range_between(timedelta(days=-2), Window.current_row)``). Raises TypeError for
        timedelta bounds over a numeric key (when the query is planned) or mixed with numbers."""
        return self._framed("range_between", start, end, min_periods)

    def _apply(self, function: Expression) -> Expression:
        from ketch import _core

        natives = (
            [function._native] + [e._native for e in self._partition_by] + [e._native for e in self._order_by]
        )
        options = {
            "num_partition_by": len(self._partition_by),
            "descending": "".join("1" if d else "0" for d in self._descending),
            "nulls_first": "".join("1" if n else "0" for n in self._nulls_first),
            "frame": self._frame,
            "start": None if self._start is None else self._start,
            "end": None if self._end is None else self._end,
            "min_periods": self._min_periods,
        }
        if self._bound_unit:
            options["bound_unit"] = self._bound_unit
        return Expression(_core.call("window", natives, options))

    def __repr__(self) -> str:
        parts = [f"partition_by={[e.name() for e in self._partition_by]}"]
        if self._order_by:
            parts.append(f"order_by={[e.name() for e in self._order_by]}, desc={self._descending}")
        if self._frame != "default":
            parts.append(
                f"{self._frame}_between({self._start}, {self._end}), min_periods={self._min_periods}"
            )
        return f"Window({', '.join(parts)})"
