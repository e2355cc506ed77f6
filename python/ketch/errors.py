"""Exceptions raised by Ketch. Every one derives from :class:`KetchError` and from the matching
built-in exception, so ``except ValueError`` and ``except TypeError`` keep working."""

from __future__ import annotations


class KetchError(Exception):
    """Base class of every Ketch error."""


class KetchValueError(KetchError, ValueError):
    """Bad input data or arguments (e.g. a corrupt image, a negative limit)."""


class KetchTypeError(KetchError, TypeError):
    """An expression applied to a column of the wrong type; raised at plan time."""


class KetchSchemaError(KetchTypeError, ValueError):
    """A column of the wrong type where Daft raises a ValueError (``explode`` of a column that is
    not a list): both ``except TypeError`` and Daft code's ``except ValueError`` catch it."""


class ColumnNotFoundError(KetchError, ValueError):
    """An expression names a column that does not exist; the message lists the columns that do."""


class KetchIOError(KetchError, OSError):
    """A file or URL could not be read or written; the message names it."""


class KetchFileNotFoundError(KetchIOError, FileNotFoundError):
    """A path or glob matched no file."""


class KetchNotImplementedError(KetchError, NotImplementedError):
    """A feature this version does not support yet."""


class UDFError(KetchError):
    """A user-defined function raised; the original exception (with its traceback) is ``__cause__``."""

    @property
    def original_exception(self) -> BaseException | None:
        """The exception the UDF raised (Daft's ``UDFException.original_exception``)."""
        return self.__cause__


class RetryAfterError(Exception):
    """Raised by a UDF (or an AI provider) for a retryable failure that says how long to wait, e.g.
    an HTTP 429 with a ``Retry-After`` header (Daft's ``daft.errors.RetryAfterError``). The UDF
    runtime waits ``retry_after`` seconds (at most 300) before the next of its ``max_retries``
    attempts, instead of retrying at once; ``original`` is the ``__cause__``."""

    def __init__(self, retry_after: float, original: Exception | None = None) -> None:
        super().__init__(str(original) if original else "RetryAfterError")
        self.retry_after = retry_after
        self.__cause__ = original


# Daft's names in ``daft.errors``: ``except daft.errors.UDFException`` ports by changing the import.
UDFException = UDFError  # the original exception is ``__cause__``
ExpressionTypeError = KetchTypeError
