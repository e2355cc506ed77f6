"""Helpers shared by the AI providers (Daft's ``daft.ai.utils``): Retry-After parsing, the UDF
options a provider asks for, and a redacted holder for API keys."""

from __future__ import annotations

import email.utils
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, NoReturn

from ketch.errors import RetryAfterError

__all__ = ["RetryAfterError", "Secret", "UDFOptions", "parse_retry_after", "raise_retry_after_from_response"]


class Secret:
    """A credential (an API key) that never prints: ``repr``/``str`` give ``'***'``; ``value()``
    gives the key to the one place that sends it."""

    __slots__ = ("_value",)

    def __init__(self, value: str | None) -> None:
        self._value = value

    def value(self) -> str | None:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return "'***'" if self._value else "None"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> tuple:
        return (Secret, (self._value,))


@dataclass
class UDFOptions:
    """How the engine runs a provider's model: instances at once (None: one), GPUs per instance,
    rows per call, retries and on_error ("raise" | "log" | "ignore"), Daft's fields."""

    concurrency: int | None = None
    num_gpus: float | None = None
    batch_size: int | None = None
    max_retries: int = 0
    on_error: str = "raise"


def gpu_udf_options() -> UDFOptions:
    """Daft's rule for local-model providers: with N visible GPUs, N instances of one GPU each;
    without, one instance on the CPU threads."""
    from ketch.execution.gpu_slices import visible_gpus

    gpus = len(visible_gpus())
    return UDFOptions(concurrency=gpus, num_gpus=1) if gpus > 0 else UDFOptions()


def parse_retry_after(value: Any) -> float | None:
    """Seconds from a ``Retry-After`` header: a number of seconds or an HTTP date; None if neither."""
    try:
        seconds = float(value)
        return seconds if seconds >= 0 else None
    except (TypeError, ValueError):
        pass
    if isinstance(value, str):
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)
    return None


def raise_retry_after_from_response(response: Any, original: Exception) -> NoReturn:
    """Raises RetryAfterError when `response` (requests / httpx) carries a Retry-After header, else
    `original` (Daft's ``raise_retry_after_from_response``)."""
    headers = getattr(response, "headers", None) if response is not None else None
    header = (headers.get("Retry-After") or headers.get("retry-after")) if headers is not None else None
    seconds = parse_retry_after(header) if header is not None else None
    if seconds is None:
        raise original
    raise RetryAfterError(retry_after=seconds, original=original) from original
