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
        ``http(s)://`` (libcurl's multi interface: at most ``max_connections`` requests in flight
        over all of the query's I/O threads together — downloads asking for the same limit share
        it —, kept-alive connections reused across morsels, redirects followed,
        connection errors, timeouts (a stalled transfer too) and HTTP 429 / 5xx retried up to 3
        attempts) and ``s3://bucket/key``
        (Arrow's S3FileSystem; credentials, region and endpoint from ``io_config=IOConfig(s3=
        S3Config(...))`` or the AWS SDK's defaults). The projection runs on the I/O pool
        (``explain`` shows "Runs on = I/O pool").

        Errors: a missing file, an HTTP status >= 400, a refused or reset connection raise
        ``KetchIOError`` naming the row, the URL and the cause, or yield null with
        ``on_error="null"``. Other schemes raise ``KetchNotImplementedError``. Credentials in
        URLs (``user:password@``, ``token=``/``X-Amz-Signature=`` query values) and S3 keys show as
        ``***`` in errors and ``explain()``.
        """
        from ketch.expressions.expression import Expression

        if on_error not in ("raise", "null"):
            raise ValueError(f"on_error must be 'raise' or 'null', got {on_error!r}")
        if not isinstance(max_connections, int) or max_connections <= 0:
            raise ValueError(f"max_connections must be a positive int, got {max_connections!r}")
        from ketch.io.config import io_options

        return Expression._call(
            "url_download",
            self._expr,
            on_error=on_error,
            max_connections=max_connections,
            **io_options(io_config),
        )

    def to_file(self) -> Expression:
        """File references (type File) to these paths / URLs, size unknown; nothing is read. Use
        ``.file.guess_mime_type()`` / ``.file.read()`` on the result."""
        from ketch.expressions.expression import Expression

        return Expression._call("file_from_path", self._expr)

    def upload(
        self,
        location: str,
        max_connections: int = 32,
        on_error: str = "raise",
        io_config: Any = None,
    ) -> Expression:
        """Writes each row's bytes to a new object under ``location`` (a local directory, created
        if missing, a ``file://`` URL or an ``s3://bucket/prefix``) and returns the written paths
        (large_string; null for null rows). Names are a random 16-hex prefix per morsel plus the
        source row, so reruns never overwrite. Local files appear atomically (temporary name, then
        rename); S3 objects appear whole. Writes run on the I/O pool.

        Errors: a failed write raises ``KetchIOError`` naming the row and the path, or yields null
        with ``on_error="null"``; a non-binary column fails at plan time."""
        from ketch.expressions.expression import Expression
        from ketch.io.config import io_options

        if on_error not in ("raise", "null"):
            raise ValueError(f"on_error must be 'raise' or 'null', got {on_error!r}")
        if not isinstance(location, str) or not location:
            raise ValueError(f"url.upload needs a location string, got {location!r}")
        del max_connections  # writes share the I/O pool's threads
        return Expression._call(
            "url_upload", self._expr, location=location, on_error=on_error, **io_options(io_config)
        )
