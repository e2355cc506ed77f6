"""Runs SQL parsing and planning on a thread with a large stack: sqlglot's parser and Ketch's
translation recurse once or more per nesting level (a sum of 1,000 terms already passed Python's
default recursion limit of 1,000 frames). The thread gets a 512 MiB stack (virtual: only the
pages used are committed) and a recursion limit of 200,000 frames while it runs; a query deeper
than that raises KetchValueError naming the limit instead of a bare RecursionError."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from ketch.errors import KetchValueError

T = TypeVar("T")

STACK_BYTES = 512 << 20
RECURSION_LIMIT = 200_000
_limit_lock = threading.Lock()
_active = 0


def run_with_deep_stack(fn: Callable[[], T], what: str) -> T:
    """``fn()`` on a thread with a 512 MiB stack; its exception (if any) is re-raised here.
    RecursionError becomes KetchValueError ("<what> is nested too deeply ...")."""
    global _active
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    with _limit_lock:
        old_size = threading.stack_size()
        threading.stack_size(STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="ketch-sql-planner", daemon=True)
        finally:
            threading.stack_size(old_size)
        _active += 1
        if _active == 1:
            _active_old_limit[0] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_active_old_limit[0], RECURSION_LIMIT))
    try:
        thread.start()
        thread.join()
    finally:
        with _limit_lock:
            _active -= 1
            if _active == 0:
                sys.setrecursionlimit(_active_old_limit[0])
    error = outcome.get("error")
    if isinstance(error, RecursionError):
        raise KetchValueError(
            f"{what} is nested too deeply: planning it passed {RECURSION_LIMIT:,} levels of recursion "
            "(split it into smaller queries or views)"
        ) from None
    if isinstance(error, BaseException):
        raise error
    return outcome["value"]  # type: ignore[return-value]


_active_old_limit = [sys.getrecursionlimit()]
