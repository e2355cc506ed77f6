"""Exceptions raised by Ketch. Every one derives from :class:`KetchError` and from the matching
built-in exception, so ``except ValueError`` and ``except TypeError`` keep working."""

from __future__ import annotations


class KetchError(Exception):
    """Base class of every Ketch error."""


class KetchValueError(KetchError, ValueError):
    """Bad input data or arguments (e.g. a corrupt image, a negative limit)."""


class KetchTypeError(KetchError, TypeError):
    """An expression applied to a column of the wrong type; raised at plan time."""


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


# Daft's names in ``daft.errors``: ``except daft.errors.UDFException`` ports by changing the import.
UDFException = UDFError  # the original exception is ``__cause__``
ExpressionTypeError = KetchTypeError
