"""``decode_media``: one call that decodes a column of mixed media, each row routed by the MIME
type its first bytes tell (images, audio, video, PDF) to the native kernel of its kind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ketch.expressions.expression import Expression, _expr

if TYPE_CHECKING:
    from ketch.io.config import IOConfig

__all__ = ["decode_media"]


def decode_media(expr: Any, *, on_error: str = "raise", io_config: IOConfig | None = None) -> Expression:
    """Decodes each row of encoded bytes (binary) or File references by the MIME type sniffed
    from its first bytes (``.file.guess_mime_type()``'s rules, never the file name), giving
    struct ``{mime_type: string, image: Image, audio: Tensor[float32], video: struct{width,
    height: int64, fps: float64, frame_count: int64, time_base: float64}, pdf: list<struct{
    page_number: int64, text: string}>}``. A row's bytes go to one kernel: ``image/*`` to
    :func:`decode_image`, ``audio/*`` to :func:`decode_audio` (the file's own rate and channels;
    shape (frames,) or (frames, channels)), ``video/*`` to :func:`video_metadata` (frames are not
    decoded here: a whole video would not fit a morsel; use :func:`video_frames` or
    :func:`ketch.read_video_frames`), ``application/pdf`` to :func:`pdf_text`; the other fields
    of that row are null. A row of another type (text, zip, ...) has only its ``mime_type``;
    a null row is null. Also ``col(...).decode()`` (no charset) and ``col(...).file.decode()``.

    Example:
        >>> df = ketch.from_glob_path("inbox/*").with_column("d", decode_media(col("path").url.to_file()))
        >>> df.select(col("d")["mime_type"], col("d")["image"].image.resize(224, 224))

    Errors: a row its kernel cannot decode raises ``ValueError`` naming the source row, the file
    (for File input), its MIME type, the kernel and the cause; ``on_error="null"`` gives null in
    that kernel's field instead (``mime_type`` still set)."""
    from ketch.io.config import io_options

    if on_error not in ("raise", "null"):
        raise ValueError(f"on_error must be 'raise' or 'null', got {on_error!r}")
    return Expression._call("media_decode", _expr(expr), on_error=on_error, **io_options(io_config))
