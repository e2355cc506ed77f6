"""``Expression.image``: native image kernels (libpng / libjpeg-turbo, Pillow-compatible resize)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ketch.datatype import mode_name
from ketch.expressions.image_hash import HashAlgorithm

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
        """Decodes encoded image bytes (PNG, JPEG, WebP, GIF, TIFF, BMP incl. RLE8/RLE4; format
        sniffed from the magic bytes) into an Image column: pixels HWC uint8, converted to ``mode``
        ("L", "LA", "RGB", "RGBA") when given. Each row's outcome depends on its own bytes only.

        Errors: a corrupt, truncated or empty image (refused where Pillow refuses it), one over
        178,956,970 pixels (Pillow's decompression-bomb limit) or one whose decoded pixels need more
        bytes than the query's ``memory_budget_bytes`` (both refused from the header, before
        allocation) raises ``KetchValueError`` naming the row and the cause, or yields null with
        ``on_error="null"``. A non-binary input column fails at plan time with ``KetchTypeError``.
        """
        from ketch.expressions.expression import Expression

        return Expression._call(
            "image_decode", self._expr, mode=mode_name(mode), on_error=_check_on_error(on_error)
        )

    def resize(self, w: int, h: int) -> Expression:
        """Resizes every image to ``w`` x ``h`` pixels with Pillow's bilinear filter (antialiased when
        shrinking; within 1 of Pillow's values). With a known mode the result is
        FixedShapeImage[mode; h x w], one contiguous (N, h, w, C) uint8 block.

        Errors: ``KetchValueError`` when building the expression for a size outside 1..65535 or an
        output over 178,956,970 pixels (the decoder's limit), before anything is allocated."""
        from ketch.expressions.expression import Expression

        if not isinstance(w, int) or not isinstance(h, int) or w <= 0 or h <= 0:
            raise ValueError(f"resize needs positive integer width and height, got {w!r}, {h!r}")
        return Expression._call("image_resize", self._expr, w=w, h=h)

    def encode(self, image_format: str, quality: int = 75) -> Expression:
        """Encodes every image into ``image_format`` bytes (large_binary): "PNG" (lossless, libpng),
        "JPEG" (libjpeg-turbo, ``quality`` 1-100, 4:2:0 chroma as Pillow's default; L and RGB only),
        "WEBP" (lossless, libwebp; L/LA widened to RGB/RGBA), "TIFF" (LZW, libtiff).

        Errors: an unknown format raises ValueError; JPEG of an LA/RGBA column fails at plan time
        with ``KetchTypeError`` (of an Image[MIXED] row with alpha: at run time, naming the row)."""
        from ketch.expressions.expression import Expression

        name = getattr(image_format, "name", image_format)
        if not isinstance(name, str) or name.upper() not in ("PNG", "JPEG", "JPG", "WEBP", "TIFF", "TIF"):
            raise ValueError(f"image.encode: format must be PNG, JPEG, WEBP or TIFF, got {image_format!r}")
        if not isinstance(quality, int) or not 1 <= quality <= 100:
            raise ValueError(f"image.encode: quality must be an int in 1..100, got {quality!r}")
        return Expression._call("image_encode", self._expr, format=name.upper(), quality=quality)

    def crop(self, bbox: Any) -> Expression:
        """Crops every image to ``bbox`` = (x, y, width, height) in pixels: one tuple for all rows,
        or an expression giving a list of 4 integers per row. The box is clipped to the image; a
        box that misses the image raises ``KetchValueError`` naming the row."""
        from ketch.expressions.expression import Expression

        if isinstance(bbox, Expression):
            return Expression._call("image_crop", self._expr, bbox)
        values = list(bbox)
        if len(values) != 4 or not all(isinstance(v, int | float) for v in values):
            raise ValueError(f"image.crop: bbox must be (x, y, width, height), got {bbox!r}")
        x, y, w, h = (int(v) for v in values)
        if w <= 0 or h <= 0:
            raise ValueError(f"image.crop: bbox width and height must be positive, got {bbox!r}")
        return Expression._call("image_crop", self._expr, x=x, y=y, w=w, h=h)

    def to_mode(self, mode: Any) -> Expression:
        """Converts every image to ``mode`` ("L", "LA", "RGB", "RGBA"; Pillow's convert rules:
        L = R*299/1000 + G*587/1000 + B*114/1000, alpha added as 255 or dropped). A FixedShapeImage
        stays fixed-shape."""
        from ketch.expressions.expression import Expression

        return Expression._call("image_to_mode", self._expr, mode=mode_name(mode))

    def width(self) -> Expression:
        """Width in pixels (int64), read from the column without touching pixels."""
        from ketch.expressions.expression import Expression

        return Expression._call("image_width", self._expr)

    def height(self) -> Expression:
        """Height in pixels (int64)."""
        from ketch.expressions.expression import Expression

        return Expression._call("image_height", self._expr)

    def channels(self) -> Expression:
        """Number of channels (int64): 1 (L), 2 (LA), 3 (RGB) or 4 (RGBA)."""
        from ketch.expressions.expression import Expression

        return Expression._call("image_channels", self._expr)

    def mode(self) -> Expression:
        """The image mode as a string ("L", "LA", "RGB", "RGBA")."""
        from ketch.expressions.expression import Expression

        return Expression._call("image_mode", self._expr)

    def hash(self, algorithm: HashAlgorithm = "average", hash_size: int = 8) -> Expression:
        """Perceptual hash of every image, identical to the ``imagehash`` package's (a Ketch
        extension; Daft's hashes are ``ketch.functions.image_hash`` / ``Expression.image_hash``);
        see :func:`ketch.expressions.image_hash.imagehash_hash` for algorithms, output type and
        errors."""
        from ketch.expressions.image_hash import imagehash_hash

        return imagehash_hash(self._expr, algorithm, hash_size)
