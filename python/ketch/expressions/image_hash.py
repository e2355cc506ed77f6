"""``image_hash``: imagehash-compatible perceptual hashes of an Image column (native kernel
``cpp/ketch/functions/image/image_hash.cc``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression

HashAlgorithm = Literal["average", "perceptual", "difference", "wavelet", "crop_resistant"]
_SUPPORTED = ("average", "perceptual", "difference", "wavelet")


def image_hash(image: Expression, algorithm: HashAlgorithm = "average", hash_size: int = 8) -> Expression:
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
            names ``image_hash``, the expression and its type).
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
    return Expression._call("image_hash", image, algorithm=algorithm, hash_size=hash_size)
