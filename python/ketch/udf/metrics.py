"""Custom counters from inside a UDF (Daft's ``daft.udf.metrics``): ``ketch.udf.metrics``.

    from ketch.udf.metrics import increment_counter

    @ketch.func
    def clean(text: str) -> str:
        if not text:
            increment_counter("empty_rows")
        return text.strip()

``increment_counter(name, amount=1, *, description=None, attributes=None)`` adds ``amount`` to the
counter ``name`` (with its ``attributes``, a str → str mapping, as a separate series) of the UDF
that is running. Counters are totalled per UDF over a query and printed by ``explain_analyze``
under "UDF metrics" (``last_query_metrics()`` returns them). Thread-mode and process-mode UDFs on
the native runner are counted (a worker process sends its counts back with each batch); on the
Ray runner, counts made in engine workers and actors stay in those processes. Outside a UDF call
it warns (RuntimeWarning) and records nothing, as Daft. Argument errors are Daft's ValueErrors."""

from __future__ import annotations

import contextlib
import contextvars
import threading
import warnings
from collections.abc import Iterator, Mapping

# The UDF whose call is running in this thread (or task), or None.
_CURRENT_UDF: contextvars.ContextVar[str | None] = contextvars.ContextVar("ketch_udf_metrics", default=None)

# (UDF name, counter name, sorted attribute pairs) -> total; guarded by _LOCK.
Key = tuple[str, str, tuple[tuple[str, str], ...]]
_LOCK = threading.Lock()
_TOTALS: dict[Key, int] = {}
_DESCRIPTIONS: dict[tuple[str, str], str] = {}


def increment_counter(
    name: str,
    amount: int = 1,
    *,
    description: str | None = None,
    attributes: Mapping[str, str] | None = None,
) -> None:
    """Adds ``amount`` (an int) to the running UDF's counter ``name`` (a non-empty str), in the
    series of its ``attributes`` (non-empty str keys, str values). ValueError for a bad name,
    description or attribute (Daft's messages); RuntimeWarning and nothing recorded outside a
    UDF call."""
    if not isinstance(name, str) or not name:
        raise ValueError("Metric name must be a non-empty string")
    if description is not None and not isinstance(description, str):
        raise ValueError("Metric description must be a string if provided")
    pairs: tuple[tuple[str, str], ...] = ()
    if attributes is not None:
        if not isinstance(attributes, Mapping):
            raise ValueError("Metric attributes must be a mapping of string keys to string values")
        for key, value in attributes.items():
            if not isinstance(key, str) or not key:
                raise ValueError("Metric attribute keys must be non-empty strings")
            if not isinstance(value, str):
                raise ValueError("Metric attribute values must be strings")
        pairs = tuple(sorted(attributes.items()))
    udf = _CURRENT_UDF.get()
    if udf is None:
        warnings.warn(
            "Custom UDF metrics will only be recorded during execution within a UDF function or class "
            "method.",
            RuntimeWarning,
            stacklevel=2,
        )
        return
    with _LOCK:
        key = (udf, name, pairs)
        _TOTALS[key] = _TOTALS.get(key, 0) + int(amount)
        if description is not None:
            _DESCRIPTIONS[(udf, name)] = description


@contextlib.contextmanager
def recording(udf_name: str) -> Iterator[None]:
    """Counters incremented inside the block belong to ``udf_name`` (the engine wraps each call)."""
    token = _CURRENT_UDF.set(udf_name)
    try:
        yield
    finally:
        _CURRENT_UDF.reset(token)


def snapshot() -> dict[Key, int]:
    """A copy of every total recorded in this process so far."""
    with _LOCK:
        return dict(_TOTALS)


def take() -> dict[Key, int] | None:
    """The totals recorded since the last ``take`` (a worker process sends them with its reply),
    or None when there are none; clears them."""
    with _LOCK:
        if not _TOTALS:
            return None
        out = dict(_TOTALS)
        _TOTALS.clear()
        return out


def merge(delta: Mapping[Key, int] | None) -> None:
    """Adds totals a worker process sent."""
    if not delta:
        return
    with _LOCK:
        for key, amount in delta.items():
            _TOTALS[key] = _TOTALS.get(key, 0) + amount


_LAST: dict[Key, int] = {}


def since(before: Mapping[Key, int]) -> dict[Key, int]:
    """What was added after ``before`` (a snapshot); kept as the last query's metrics."""
    now = snapshot()
    out = {k: v - before.get(k, 0) for k, v in now.items() if v != before.get(k, 0)}
    _LAST.clear()
    _LAST.update(out)
    return out


def last_query_metrics() -> dict[str, dict[str, int]]:
    """The counters of the last ``explain_analyze``, per UDF: ``{udf: {"name{k=v}": total}}``."""
    out: dict[str, dict[str, int]] = {}
    for (udf, name, pairs), total in sorted(_LAST.items()):
        out.setdefault(udf, {})[_label(name, pairs)] = total
    return out


def _label(name: str, pairs: tuple[tuple[str, str], ...]) -> str:
    return name + ("{" + ", ".join(f"{k}={v}" for k, v in pairs) + "}" if pairs else "")


def format_metrics(delta: Mapping[Key, int]) -> str:
    """The "UDF metrics" lines explain_analyze prints ("" when nothing was counted)."""
    if not delta:
        return ""
    lines = ["UDF metrics:"]
    for (udf, name, pairs), total in sorted(delta.items()):
        description = _DESCRIPTIONS.get((udf, name))
        suffix = f"  ({description})" if description else ""
        lines.append(f"  {udf}: {_label(name, pairs)} = {total}{suffix}")
    return "\n".join(lines)


__all__ = ["increment_counter"]
