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
        """Reads the bytes at each URL into a large_binary column: local paths, ``file://`` and
        ``http(s)://`` (libcurl's multi interface: up to ``max_connections`` requests in flight
        from one I/O thread, kept-alive connections reused across morsels, redirects followed,
        connection errors / HTTP 429 / 5xx retried up to 3 attempts). The projection runs on the
        I/O pool (``explain`` shows "Runs on = I/O pool").

        Errors: a missing file, an HTTP status >= 400, a refused or reset connection raise
        ``KetchIOError`` naming the row, the URL and the cause, or yield null with
        ``on_error="null"``. ``s3://`` and other schemes raise ``KetchNotImplementedError``; so does
        ``io_config`` (S3 is not in this version).
        """
        from ketch.expressions.expression import Expression

        if on_error not in ("raise", "null"):
            raise ValueError(f"on_error must be 'raise' or 'null', got {on_error!r}")
        if not isinstance(max_connections, int) or max_connections <= 0:
            raise ValueError(f"max_connections must be a positive int, got {max_connections!r}")
        if io_config is not None:
            raise NotImplementedError("io_config (S3 credentials, endpoints) is not supported yet")
        return Expression._call(
            "url_download", self._expr, on_error=on_error, max_connections=max_connections
        )
