"""``Expression.image``: native image kernels (libpng / libjpeg-turbo, Pillow-compatible resize)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ketch.datatype import mode_name

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


def _check_on_error(on_error: str) -> str:
    if on_error not in ("raise", "null"):
        raise ValueError(f"on_error must be 'raise' or 'null', got {on_error!r}")
    return on_error


class ImageNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def decode(self, on_error: str = "raise", mode: Any = None) -> Expression:
        """Decodes encoded image bytes (PNG, JPEG; format sniffed from the magic bytes) into an
        Image column: pixels HWC uint8, converted to ``mode`` ("L", "LA", "RGB", "RGBA") when given.

        Errors: a corrupt, truncated, empty or oversized image (more than 2**28 pixels, refused from
        its header) raises ``KetchValueError`` naming the row, or yields null with ``on_error="null"``.
        A non-binary input column fails at plan time with ``KetchTypeError``.
        """
        from ketch.expressions.expression import Expression

        return Expression._call(
            "image_decode", self._expr, mode=mode_name(mode), on_error=_check_on_error(on_error)
        )

    def resize(self, w: int, h: int) -> Expression:
        """Resizes every image to ``w`` x ``h`` pixels with Pillow's bilinear filter (antialiased when
        shrinking; within 1 of Pillow's values). With a known mode the result is
        FixedShapeImage[mode; h x w], one contiguous (N, h, w, C) uint8 block."""
        from ketch.expressions.expression import Expression

        if not isinstance(w, int) or not isinstance(h, int) or w <= 0 or h <= 0:
            raise ValueError(f"resize needs positive integer width and height, got {w!r}, {h!r}")
        return Expression._call("image_resize", self._expr, w=w, h=h)
