"""Daft's multimodal and predicate free functions (``decode_image(col("b"))``, ``is_in(...)``):
each is the Expression method (or namespace method) of the same name, so both spellings share one
implementation."""

from __future__ import annotations

from typing import Any

from ketch.expressions.expression import Expression, _expr

__all__ = [
    "between",
    "convert_image",
    "cosine_distance",
    "cosine_similarity",
    "crop",
    "decode_image",
    "dot_product",
    "download",
    "encode_image",
    "euclidean_distance",
    "file_path",
    "file_size",
    "guess_mime_type",
    "image_attribute",
    "image_channel",
    "image_height",
    "image_mode",
    "image_width",
    "is_in",
    "pearson_correlation",
    "resize",
    "upload",
]


def decode_image(bytes: Expression, on_error: str = "raise", mode: Any = "RGB") -> Expression:
    """See :meth:`Expression.decode_image` (encoded bytes -> image, converted to ``mode``)."""
    return _expr(bytes).decode_image(on_error=on_error, mode=mode)


def encode_image(image: Expression, image_format: str) -> Expression:
    """See :meth:`Expression.encode_image` (image -> encoded bytes in ``image_format``)."""
    return _expr(image).encode_image(image_format)


def resize(image: Expression, w: int, h: int) -> Expression:
    """See :meth:`Expression.resize` (each image resized to ``w`` x ``h`` pixels)."""
    return _expr(image).resize(w, h)


def crop(image: Expression, bbox: Any) -> Expression:
    """See :meth:`Expression.crop` (``bbox`` = (x, y, w, h) or a column of them)."""
    return _expr(image).crop(bbox)


def convert_image(image: Expression, mode: Any) -> Expression:
    """See :meth:`Expression.convert_image` (each image converted to ``mode``)."""
    return _expr(image).convert_image(mode)


def image_width(image: Expression) -> Expression:
    """Width in pixels (int64) of each image."""
    return _expr(image).image.width()


def image_height(image: Expression) -> Expression:
    """Height in pixels (int64) of each image."""
    return _expr(image).image.height()


def image_mode(image: Expression) -> Expression:
    """Mode of each image as a string."""
    return _expr(image).image.mode()


def image_channel(image: Expression) -> Expression:
    """Number of channels (int64) of each image."""
    return _expr(image).image.channels()


def download(
    expr: Expression, max_connections: int = 32, on_error: str = "raise", io_config: Any = None
) -> Expression:
    """See :meth:`Expression.download` (URL strings -> bytes)."""
    return _expr(expr).download(max_connections=max_connections, on_error=on_error, io_config=io_config)


def upload(
    expr: Expression,
    location: str,
    max_connections: int = 32,
    on_error: str = "raise",
    io_config: Any = None,
) -> Expression:
    """See ``Expression.url.upload`` (bytes -> files under ``location``; returns their paths)."""
    return _expr(expr).url.upload(
        location, max_connections=max_connections, on_error=on_error, io_config=io_config
    )


def file_path(file: Expression) -> Expression:
    """See :meth:`Expression.file_path`."""
    return _expr(file).file_path()


def file_size(file: Expression) -> Expression:
    """See :meth:`Expression.file_size`."""
    return _expr(file).file_size()


def is_in(expr: Expression, other: Any) -> Expression:
    """See :meth:`Expression.is_in` (bool: the value is one of ``other``)."""
    return _expr(expr).is_in(other)


def between(expr: Expression, lower: Any, upper: Any) -> Expression:
    """See :meth:`Expression.between` (bool: lower <= value <= upper)."""
    return _expr(expr).between(lower, upper)


def cosine_distance(left: Expression, right: Any) -> Expression:
    """Cosine distance (float64) between two embedding/list columns."""
    return _expr(left).embedding.cosine_distance(right)


def euclidean_distance(left: Expression, right: Any) -> Expression:
    """Euclidean distance (float64) between two embedding/list columns."""
    return _expr(left).embedding.euclidean_distance(right)


def cosine_similarity(left: Expression, right: Any) -> Expression:
    """Cosine similarity (float64) between two embedding/list columns: ``1 - cosine_distance``."""
    return 1.0 - _expr(left).embedding.cosine_distance(right)


def dot_product(left: Expression, right: Any) -> Expression:
    """Dot product (float64) of two embedding/list columns, row by row."""
    return _expr(left).embedding.dot_product(right)


def pearson_correlation(left: Expression, right: Any) -> Expression:
    """Pearson correlation (float64) of the two vectors of each row."""
    return _expr(left).embedding.pearson_correlation(right)


_IMAGE_ATTRIBUTES = {
    "width": image_width,
    "height": image_height,
    "channel": image_channel,
    "mode": image_mode,
}


def image_attribute(image: Expression, name: str) -> Expression:
    """One property of each image: ``"width"``, ``"height"``, ``"channel"`` (int64) or ``"mode"``
    (string). Raises ValueError for another name."""
    key = str(getattr(name, "name", name)).lower()
    if key not in _IMAGE_ATTRIBUTES:
        raise ValueError(f"image_attribute: name must be one of {sorted(_IMAGE_ATTRIBUTES)}, got {name!r}")
    return _IMAGE_ATTRIBUTES[key](image)


def guess_mime_type(bytes_expr: Any) -> Expression:
    """Daft's ``functions.guess_mime_type``: the MIME type (String) told by a binary value's first
    bytes (magic numbers): image/png, image/jpeg, image/gif, image/webp, application/pdf,
    application/zip, audio/mpeg, audio/wav, audio/ogg, video/mp4, video/mpeg,
    application/vnd.hdfgroup.hdf5 (IANA's signature) or text/html; null for anything else and for
    null. A File column (``from_files``) uses ``.file.guess_mime_type()``, which reads the file's
    head and knows more types. A non-binary column: KetchTypeError at plan time."""
    return Expression._call("bytes_guess_mime_type", _expr(bytes_expr))
