"""Perceptual hashes of an Image column.

- ``image_hash``: Daft 0.7.26's ``daft.functions.image_hash`` (same signature, methods, output
  layout and values; native kernel ``cpp/ketch/functions/image/image_hash_daft.cc``).
- ``imagehash_hash``: Ketch's hashes bit-identical to the ``imagehash`` package (kernel
  ``image_hash.cc``), behind ``Expression.image.hash``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression

HashAlgorithm = Literal["average", "perceptual", "difference", "wavelet", "crop_resistant"]
HashMethod = Literal[
    "phash", "phash_simple", "dhash", "dhash_vertical", "ahash", "whash", "crop_resistant", "colorhash"
]
_METHODS = (
    "phash",
    "phash_simple",
    "dhash",
    "dhash_vertical",
    "ahash",
    "whash",
    "crop_resistant",
    "colorhash",
)
_SUPPORTED = ("average", "perceptual", "difference", "wavelet")


def imagehash_hash(image: Expression, algorithm: HashAlgorithm = "average", hash_size: int = 8) -> Expression:
    """Computes a perceptual hash of every image, bit for bit the one the ``imagehash`` package
    (4.3.2, on Pillow) gives for the same pixels.

    Every hash starts like imagehash: Pillow's ``convert("L")`` (L = (19595 R + 38470 G + 7471 B
    + 0x8000) >> 16, alpha ignored) and ``resize(..., LANCZOS)`` (Pillow's separable fixed-point
    Lanczos-3 from Resample.c), reproduced exactly in C++. Then:

    - ``"average"`` (``imagehash.average_hash``): hash_size x hash_size thumbnail, bit = pixel > mean.
    - ``"difference"`` (``imagehash.dhash``): (hash_size + 1) x hash_size thumbnail, bit = pixel <
      its right neighbour.
    - ``"perceptual"`` (``imagehash.phash``, highfreq_factor 4): 4·hash_size square thumbnail,
      ``scipy.fftpack.dct`` type II along axis 0 then 1, low hash_size x hash_size block, bit =
      coefficient > ``numpy.median``.
    - ``"wavelet"`` (``imagehash.whash``, 'haar', remove_max_haar_ll): square thumbnail of
      max(2^floor(log2(min(w, h))), hash_size) pixels / 255, ``pywt.wavedec2``/``waverec2`` with
      the lowest band zeroed, then the LL band of log2(size / hash_size) levels, bit = LL > median.
    - ``"crop_resistant"`` is Daft's name for ``imagehash.crop_resistant_hash``; not implemented.

    Args:
        image: an Image or FixedShapeImage expression (modes L, LA, RGB, RGBA).
        algorithm: one of the names above.
        hash_size: bits per side, 2..1024 (a power of two for ``"wavelet"``).

    Returns:
        Expression: ``fixed_size_binary(ceil(hash_size**2 / 8))``; the hash bits row-major, most
        significant first: ``bytes.fromhex(str(imagehash_value))``. Null images give null.

    Raises:
        ValueError: an unknown ``algorithm`` or a bad ``hash_size``, when the expression is built.
        NotImplementedError: ``algorithm="crop_resistant"``.
        KetchTypeError: when the plan is built, if ``image`` is not an Image column (the message
            names ``image_hash_imagehash``, the expression and its type).
    """
    from ketch.expressions.expression import Expression

    if algorithm == "crop_resistant":
        raise NotImplementedError("image_hash: algorithm 'crop_resistant' is not supported yet")
    if algorithm not in _SUPPORTED:
        raise ValueError(f"image_hash: algorithm must be one of {_SUPPORTED}, got {algorithm!r}")
    if isinstance(hash_size, bool) or not isinstance(hash_size, int) or not 2 <= hash_size <= 1024:
        raise ValueError(f"image_hash: hash_size must be an int in 2..1024, got {hash_size!r}")
    if algorithm == "wavelet" and hash_size & (hash_size - 1):
        raise ValueError(f"image_hash: the wavelet hash needs a power-of-two hash_size, got {hash_size}")
    return Expression._call("image_hash_imagehash", image, algorithm=algorithm, hash_size=hash_size)


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def image_hash(
    image: Expression,
    *,
    method: HashMethod = "phash",
    hash_size: int = 8,
    binbits: int = 3,
    segments: int = 3,
) -> Expression:
    """Computes a perceptual hash of an image column for near-duplicate detection, as Daft 0.7.26's
    ``daft.functions.image_hash`` does (same arguments, output layout and bits).

    Every spatial method starts from Daft's thumbnail: image-rs's grayscale (L and LA keep L; RGB and
    RGBA use sRGB luminance weights 0.21265 R + 0.71518 G + 0.07217 B, rounded; alpha ignored) and
    its triangle-filter (bilinear) resize, not Pillow's convert("L") + Lanczos, so the values
    differ from the ``imagehash`` package's (``Expression.image.hash`` gives those). Then:

    - ``"phash"`` (default): 4·hash_size square thumbnail, 2D DCT-II, low hash_size x hash_size
      block, bit = coefficient > median.
    - ``"phash_simple"``: 4·hash_size square thumbnail, row DCT only, rows 0..hash_size, columns
      1..hash_size, bit = coefficient > mean.
    - ``"dhash"``: (hash_size + 1) x hash_size thumbnail, bit = pixel < right neighbour;
      ``"dhash_vertical"``: hash_size x (hash_size + 1), bit = pixel below > pixel.
    - ``"ahash"``: hash_size x hash_size thumbnail, bit = pixel > mean.
    - ``"whash"``: multi-level Haar wavelet with the DC removed (as ``imagehash.whash``), then the
      min-max normalised LL band > its mean. ``hash_size`` must be a power of 2.
    - ``"crop_resistant"``: the ``segments x segments`` grid of crops (integer boundaries
      ``col * width // segments``), the phash of each, concatenated row by row.
    - ``"colorhash"``: 14 bins of Pillow's HSV (black, gray, 6 faint and 6 bright hues), each
      quantised to ``binbits`` bits like ``imagehash.colorhash``.

    Args:
        image: an Image or FixedShapeImage expression (modes L, LA, RGB, RGBA).
        method: one of the names above.
        hash_size: grid size of the spatial methods, a positive int (Ketch caps it at 1024); a
            power of 2 for ``"whash"``; with ``hash_size**2`` a multiple of 8 for
            ``"crop_resistant"`` (Daft panics otherwise); ignored by ``"colorhash"``.
        binbits: bits per bin of ``"colorhash"`` (positive; capped at 31); ignored otherwise.
        segments: grid dimension of ``"crop_resistant"`` (positive; capped at 64); ignored otherwise.

    Returns:
        Expression: ``FixedSizeBinary``: ``ceil(hash_size**2 / 8)`` bytes, ``ceil(segments**2 *
        hash_size**2 / 8)`` for ``"crop_resistant"``, ``ceil(14 * binbits / 8)`` for
        ``"colorhash"``. Bits row-major, most significant bit of the first byte first, zero padding
        at the end. Null images give null.

    Raises:
        ValueError: an unknown ``method`` or a bad ``hash_size`` / ``binbits`` / ``segments``, when
            the expression is built (Daft's messages).
        KetchTypeError: when the plan is built, if ``image`` is not an Image column (the message
            names ``image_hash``, the expression and its type).

    Notes:
        Bit-exact with Daft except (1) 170 of the 2^24 RGB colours whose luminance is an exact .5
        tie in Daft's f32 conversion come out one gray level apart, and (2) DCT coefficients that
        are 0 in exact arithmetic (flat thumbnail rows/columns, e.g. constant images) are rounding
        noise in both engines, so those phash bits may differ.
    """
    from ketch.expressions.expression import Expression

    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS!r}, but got: {method!r}")
    if not _positive_int(hash_size):
        raise ValueError(f"hash_size must be a positive integer, but got: {hash_size!r}")
    if method == "whash" and (hash_size & (hash_size - 1)) != 0:
        raise ValueError(f"hash_size must be a power of 2 for 'whash', but got: {hash_size}")
    if method == "crop_resistant" and hash_size * hash_size % 8 != 0:
        # Daft concatenates whole bytes per segment and then panics on the column width.
        raise ValueError(
            f"hash_size * hash_size must be a multiple of 8 for 'crop_resistant', but got: {hash_size}"
        )
    if not _positive_int(binbits):
        raise ValueError(f"binbits must be a positive integer, but got: {binbits!r}")
    if not _positive_int(segments):
        raise ValueError(f"segments must be a positive integer, but got: {segments!r}")
    return Expression._call(
        "image_hash", image, method=method, hash_size=hash_size, binbits=binbits, segments=segments
    )
