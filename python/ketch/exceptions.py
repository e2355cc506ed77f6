"""Daft's exception names (``daft.exceptions``) mapped onto Ketch's errors, so that
``except daft.exceptions.X`` ports by changing the import to ``ketch.exceptions``.

Each name is the Ketch class raised for that condition (an alias, not a new class), e.g.
``DaftCoreException`` is :class:`ketch.errors.KetchError`, the base of every engine error, and
``DaftTypeError`` is :class:`ketch.errors.KetchTypeError`. The transient network errors are
subclasses of :class:`ketch.errors.KetchIOError`; Ketch's object-store clients retry such
failures themselves and report the final one as a ``KetchIOError``, so code catching these
names keeps working but rarely sees them.
"""

from __future__ import annotations

from ketch.errors import (
    ColumnNotFoundError,
    ExpressionTypeError,  # noqa: F401  (Daft's daft.exceptions name: KetchTypeError)
    KetchError,
    KetchIOError,
    KetchNotImplementedError,
    KetchTypeError,
    KetchValueError,
)

DaftCoreException = KetchError
DaftTypeError = KetchTypeError
DaftValueError = KetchValueError
DaftFieldNotFoundError = ColumnNotFoundError
DaftNotImplementedError = KetchNotImplementedError


class DaftTransientError(KetchIOError):
    """A network failure that may succeed when retried (timeout, throttling)."""


class ConnectTimeoutError(DaftTransientError):
    """No connection to the server within the connect timeout."""


class ReadTimeoutError(DaftTransientError):
    """No bytes read from the server within the read timeout."""


class ByteStreamError(DaftTransientError):
    """An error while reading a byte stream from the server."""


class SocketError(DaftTransientError):
    """A socket error while reading from the server."""


class ThrottleError(DaftTransientError):
    """The server throttled the request."""


class MiscTransientError(DaftTransientError):
    """Another transient failure of a request."""


__all__ = [
    "ByteStreamError",
    "ConnectTimeoutError",
    "DaftCoreException",
    "DaftFieldNotFoundError",
    "DaftNotImplementedError",
    "DaftTransientError",
    "DaftTypeError",
    "DaftValueError",
    "MiscTransientError",
    "ReadTimeoutError",
    "SocketError",
    "ThrottleError",
]
