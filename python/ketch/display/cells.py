"""How one value of a column is shown: as text in a terminal table, or as HTML in a notebook
(images as small PNG thumbnails, tensors and embeddings as their shapes, long strings cut)."""

from __future__ import annotations

import base64
import html
import struct
import zlib
from typing import Any

import numpy as np
import pyarrow as pa

from ketch.datatype import DataType
from ketch.display.value_text import value_kind, value_text

# Daft's cut: a value whose text has more than MAX_TEXT_CHARS characters (newlines included) shows
# its first MAX_TEXT_CHARS and "…".
MAX_TEXT_CHARS = 29
THUMBNAIL_MAX_PX = 128  # the longer side of an image thumbnail, in pixels


def _shape_text(kind: str, shape: tuple[int, ...]) -> str:
    return f"<{kind} shape={tuple(int(d) for d in shape)}>"


def _kind(arrow_type: pa.DataType) -> str:
    """ "image", "tensor", "embedding" or "value" for a column of ``arrow_type``."""
    dtype = DataType(arrow_type)
    if dtype.is_image() or dtype.is_fixed_shape_image():
        return "image"
    name = str(dtype)
    if name.startswith("Tensor["):
        return "tensor"
    if name.startswith("Embedding["):
        return "embedding"
    return value_kind(arrow_type)


def _tensor_shape(value: Any) -> tuple[int, ...]:
    if isinstance(value, np.ndarray):
        return value.shape
    if isinstance(value, dict) and "shape" in value:  # variable-shape tensor as a struct
        return tuple(value["shape"] or ())
    if isinstance(value, list):
        return (len(value),)
    return ()


def cell_text(value: Any, kind: str) -> str:
    """One cell of a terminal table (a newline in the text starts another line of the cell),
    cut as Daft cuts it."""
    return _cut(full_text(value, kind))


def full_text(value: Any, kind: str) -> str:
    """A value's text before any cut."""
    if value is None:
        return "None"
    if kind == "image" and isinstance(value, np.ndarray):
        height, width = value.shape[:2]
        channels = value.shape[2] if value.ndim == 3 else 1
        return f"<Image {width}x{height}x{channels}>"
    if kind in ("tensor", "embedding"):
        return _shape_text(kind.capitalize(), _tensor_shape(value))
    if isinstance(value, np.ndarray):
        return _shape_text("ndarray", value.shape)
    text = value_text(value, kind)
    if text is None:
        text = repr(value[:16]) + ("…" if len(value) > 16 else "") if isinstance(value, bytes) else str(value)
    return text


def _cut(text: str) -> str:
    """Daft's cut of a cell's text (a string keeps its line breaks: the cell spans lines)."""
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS] + "…"


def cell_html(value: Any, kind: str) -> str:
    """One cell of the notebook table, HTML-escaped and uncut (newlines as ``<br />``); images as
    ``<img>`` PNG data URIs whose longer side is at most ``THUMBNAIL_MAX_PX`` pixels."""
    if kind == "image" and isinstance(value, np.ndarray):
        thumbnail = _thumbnail(value)
        uri = "data:image/png;base64," + base64.b64encode(png_bytes(thumbnail)).decode("ascii")
        height, width = thumbnail.shape[:2]
        alt = html.escape(cell_text(value, kind))
        return f'<img src="{uri}" width="{width}" height="{height}" alt="{alt}">'
    # Daft's HTML keeps the whole text (the cell's CSS clips it) and breaks lines with <br />.
    return html.escape(full_text(value, kind)).replace("\n", "<br />")


def _thumbnail(image: np.ndarray) -> np.ndarray:
    """``image`` (H, W[, C]) uint8 scaled down (nearest neighbour) so that its longer side is at
    most THUMBNAIL_MAX_PX; smaller images are kept as they are."""
    if image.ndim == 2:
        image = image[:, :, None]
    height, width = image.shape[:2]
    longest = max(height, width, 1)
    if longest <= THUMBNAIL_MAX_PX:
        return np.ascontiguousarray(image)
    scale = THUMBNAIL_MAX_PX / longest
    out_h, out_w = max(1, round(height * scale)), max(1, round(width * scale))
    rows = (np.arange(out_h) * height // out_h).astype(np.intp)
    cols = (np.arange(out_w) * width // out_w).astype(np.intp)
    return np.ascontiguousarray(image[rows][:, cols])


def png_bytes(image: np.ndarray) -> bytes:
    """``image`` (H, W, C) uint8 with C in 1..4 (L, LA, RGB, RGBA) as PNG file bytes."""
    height, width, channels = image.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    raw = b"".join(b"\x00" + image[y].astype(np.uint8).tobytes() for y in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def column_kinds(schema: pa.Schema) -> list[str]:
    return [_kind(field.type) for field in schema]
