"""``Expression.file``: kernels over File columns (lazy references made by ``ketch.from_files``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


class FileNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def _call(self, function: str, io_config: Any = None, on_error: str | None = None) -> Expression:
        from ketch.expressions.expression import Expression
        from ketch.io.config import io_options

        options = io_options(io_config)
        if on_error is not None:
            if on_error not in ("raise", "null"):
                raise ValueError(f"on_error must be 'raise' or 'null', got {on_error!r}")
            options["on_error"] = on_error
        return Expression._call(function, self._expr, **options)

    def path(self) -> Expression:
        """The file's path or URL (large_string); nothing is read."""
        return self._call("file_path")

    def size(self, io_config: Any = None, on_error: str = "raise") -> Expression:
        """Size in bytes (int64): recorded when the column was listed, else one stat / HEAD."""
        return self._call("file_size", io_config, on_error)

    def guess_mime_type(self, io_config: Any = None, on_error: str = "raise") -> Expression:
        """MIME type from the file's first 64 bytes (one ranged read, never the whole file, never
        the name): image/png, image/jpeg, image/gif, image/webp, image/tiff, image/bmp,
        application/pdf, application/zip, application/gzip, application/vnd.apache.parquet,
        audio/wav, audio/mpeg, audio/flac, audio/ogg, audio/mp4 (M4A), video/mp4, video/quicktime,
        video/webm, video/x-matroska, video/x-msvideo (AVI), text/plain, application/x-empty,
        else application/octet-stream."""
        return self._call("file_guess_mime_type", io_config, on_error)

    def read(self, io_config: Any = None, on_error: str = "raise") -> Expression:
        """The file's whole contents (large_binary), read on the I/O pool."""
        return self._call("file_read", io_config, on_error)

    def decode(self, io_config: Any = None, on_error: str = "raise") -> Expression:
        """Each file decoded as the media its first bytes tell (images, audio, video metadata,
        PDF text): see :func:`ketch.functions.decode_media`."""
        from ketch.functions.media import decode_media

        return decode_media(self._expr, on_error=on_error, io_config=io_config)
