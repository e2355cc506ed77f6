"""The errors of user code inside UDFs: each exception is stashed under a token that travels in
the native error message, and ``reraise_udf_error`` turns the query's error back into
:class:`ketch.errors.UDFError` from the original exception (traceback kept). Also the UDF logger
(``ketch.udf``, with secrets redacted) and the pause a ``RetryAfterError`` asks for."""

from __future__ import annotations

import itertools
import logging
import os
import threading
import traceback

from ketch.errors import RetryAfterError, UDFError
from ketch.io.redact import RedactingFilter

# Exceptions raised inside UDFs, kept until the query's error reaches Python (keyed by a token that
# travels in the native error message).
_errors: dict[int, BaseException] = {}


_error_ids = itertools.count(1)


_errors_lock = threading.Lock()


_TOKEN = "[ketch-udf-error:"


def _stash(exc: BaseException) -> str:
    # The frames of the traceback keep their locals (the UDF's runner, its process pool and
    # workers) alive for as long as the exception is stashed, and a failed query may stash errors
    # that are never re-raised: their locals are cleared (file and line of every entry survive).
    # The stasher's own frame is still running; it drops its references itself.
    traceback.clear_frames(exc.__traceback__)
    with _errors_lock:
        token = next(_error_ids)
        _errors[token] = exc
        # The process id tells a token stashed here from one that came with an error from another
        # process (an engine worker of the Ray runner): only this process's can be looked up.
        return f"{os.getpid()}:{token}"


def reraise_udf_error(error: BaseException) -> None:
    """Turns a native error that carries a UDF token into UDFError(...) from the original exception."""
    message = str(error)
    start = message.find(_TOKEN)
    if start < 0:
        return
    end = message.find("]", start)
    pid, _, number = message[start + len(_TOKEN) : end].partition(":")
    with _errors_lock:
        original = _errors.pop(int(number), None) if pid == str(os.getpid()) and number.isdigit() else None
        # Other batches of a failed query may have stashed errors too (never reported): keep the
        # stash bounded without dropping errors other queries are about to re-raise.
        while len(_errors) > 1024:
            _errors.pop(next(iter(_errors)))
    clean = (message[:start].rstrip() + " " + message[end + 1 :].lstrip()).strip()
    raise UDFError(clean) from original


_log = logging.getLogger("ketch.udf")
_log.addFilter(RedactingFilter())  # on_error="log" warnings carry exception text: URLs with credentials


# The longest pause a RetryAfterError may ask for between two attempts (seconds).
_MAX_RETRY_AFTER_S = 300.0


def _retry_pause(exc: BaseException) -> float:
    """Seconds to wait before retrying after `exc`: a RetryAfterError's `retry_after` (clamped to
    [0, 300]), else 0 (retry at once)."""
    if isinstance(exc, RetryAfterError):
        try:
            return min(max(float(exc.retry_after), 0.0), _MAX_RETRY_AFTER_S)
        except (TypeError, ValueError):
            return 0.0
    return 0.0
