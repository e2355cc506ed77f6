"""``Expression.url``: reading the objects that URLs point to, on the native I/O pool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


class UrlNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def download(
        self, max_connections: int = 32, on_error: str = "raise", io_config: Any = None
    ) -> Expression:
        """Reads the bytes at each URL (local paths and ``file://`` URLs in this version) with up to
        ``max_connections`` reads in flight; returns a binary column.

        Errors: a missing or unreadable file raises ``KetchIOError`` naming the row and the path, or
        yields null with ``on_error="null"``. Unsupported schemes raise ``KetchNotImplementedError``.
        """
        from ketch.expressions.expression import Expression

        if on_error not in ("raise", "null"):
            raise ValueError(f"on_error must be 'raise' or 'null', got {on_error!r}")
        if not isinstance(max_connections, int) or max_connections <= 0:
            raise ValueError(f"max_connections must be a positive int, got {max_connections!r}")
        if io_config is not None:
            raise NotImplementedError("io_config arrives with HTTP and S3 support")
        return Expression._call(
            "url_download", self._expr, on_error=on_error, max_connections=max_connections
        )
