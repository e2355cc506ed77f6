"""imagehash_hash / Expression.image.hash against the imagehash package (4.3.2, on Pillow): the same hash
bits for the same pixels, for real photographs (scikit-learn's bundled sample images), generated
gradients, noise, 1x1, non-square, L / LA / RGB / RGBA images and hash sizes 5, 8 and 16."""

from __future__ import annotations

import io
import math

import imagehash
import numpy as np
import pytest
import scipy.fftpack
from PIL import Image
from sklearn.datasets import load_sample_image

import ketch
from ketch import col
from ketch.errors import KetchTypeError
from ketch.expressions.image_hash import imagehash_hash

REFERENCE = {
    "average": imagehash.average_hash,
    "difference": imagehash.dhash,
    "perceptual": imagehash.phash,
    "wavelet": imagehash.whash,
}


def png(pixels: np.ndarray, mode: str) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels, mode).save(buf, "PNG")
    return buf.getvalue()


def expected_bytes(pixels: np.ndarray, mode: str, algorithm: str, hash_size: int) -> bytes:
    value = REFERENCE[algorithm](Image.fromarray(pixels, mode), hash_size=hash_size)
    return int(str(value), 16).to_bytes(math.ceil(hash_size * hash_size / 8), "big")


def ketch_hashes(images: list[tuple[np.ndarray, str]], algorithm: str, hash_size: int) -> list[bytes]:
    """Hashes through the engine: PNG bytes → image.decode(mode) → image.hash."""
    out = []
    for mode in sorted({m for _, m in images}):
        rows = [png(p, m) for p, m in images if m == mode]
        df = ketch.from_pydict({"b": rows}).select(
            col("b").image.decode(mode=mode).image.hash(algorithm, hash_size).alias("h")
        )
        out.append((mode, df.to_pydict()["h"]))
    by_mode = {mode: iter(hashes) for mode, hashes in out}
    return [next(by_mode[m]) for _, m in images]


def gray(pixels: np.ndarray) -> np.ndarray:
    return np.asarray(Image.fromarray(pixels, "RGB").convert("L"))


def photos() -> list[tuple[np.ndarray, str]]:
    china = load_sample_image("china.jpg")  # 427 x 640 RGB
    flower = load_sample_image("flower.jpg")
    return [
        (china, "RGB"),
        (flower, "RGB"),
        (gray(china), "L"),
        (np.ascontiguousarray(flower[100:400:2, 50:300]), "RGB"),  # 150 x 250, non-square
        (np.ascontiguousarray(china[::7, ::3]), "RGB"),  # 61 x 214
    ]


def generated() -> list[tuple[np.ndarray, str]]:
    rng = np.random.default_rng(17)
    y, x = np.mgrid[0:97, 0:131]
    diagonal = ((x * 255) // 130 + (y * 7) % 23).clip(0, 255).astype(np.uint8)
    radial = (np.hypot(x - 60.0, y - 40.0) * 2).clip(0, 255).astype(np.uint8)
    noise_rgb = rng.integers(0, 256, (64, 80, 3), dtype=np.uint8)
    rgba = rng.integers(0, 256, (45, 33, 4), dtype=np.uint8)
    la = np.stack([radial, diagonal], -1)
    return [
        (diagonal, "L"),
        (radial, "L"),
        (noise_rgb, "RGB"),
        (rgba, "RGBA"),
        (np.ascontiguousarray(la), "LA"),
        (rng.integers(0, 256, (300, 17), dtype=np.uint8), "L"),  # tall and thin
        (rng.integers(0, 256, (9, 9, 3), dtype=np.uint8), "RGB"),  # smaller than the thumbnails
        (np.array([[[200, 10, 30]]], dtype=np.uint8), "RGB"),  # 1 x 1
    ]


def flat() -> list[tuple[np.ndarray, str]]:
    """Images whose thumbnails have flat rows or columns: a horizontal gradient, a vertical one and
    a constant gray (and the 1 x 1 image of generated())."""
    x = np.tile(np.linspace(0, 255, 120).astype(np.uint8), (50, 1))
    return [(x, "L"), (np.ascontiguousarray(x.T), "L"), (np.full((30, 40, 3), 77, np.uint8), "RGB")]


def exact_zero_dct_bits(pixels: np.ndarray, mode: str, hash_size: int) -> np.ndarray:
    """Which phash bits look at DCT coefficients that are 0 in exact arithmetic (a flat thumbnail
    row or column): scipy's value there is rounding noise (~1e-12), so its bit is noise too."""
    n = hash_size * 4
    thumb = np.asarray(Image.fromarray(pixels, mode).convert("L").resize((n, n), Image.LANCZOS), float)
    dct = scipy.fftpack.dct(scipy.fftpack.dct(thumb, axis=0), axis=1)[:hash_size, :hash_size]
    return np.abs(dct).ravel() < 1e-6 * max(np.abs(dct).max(), 1.0)


def bits(data: bytes, n: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(data, np.uint8))[-n:].astype(bool)


def assert_same_hash(got: bytes, pixels: np.ndarray, mode: str, algorithm: str, hash_size: int) -> None:
    """Equal bytes; for the perceptual hash, equal bits wherever the DCT coefficient is not 0 in
    exact arithmetic (see test_perceptual_hash_of_flat_images_matches_off_the_rounding_noise)."""
    want = expected_bytes(pixels, mode, algorithm, hash_size)
    where = f"{mode} {pixels.shape} {algorithm} {hash_size}: {got.hex()} != {want.hex()}"
    if algorithm != "perceptual" or got == want:
        assert got == want, where
        return
    n = hash_size * hash_size
    noise = exact_zero_dct_bits(pixels, mode, hash_size)
    assert noise.any(), where
    assert (bits(got, n) == bits(want, n))[~noise].all(), where


@pytest.mark.parametrize("algorithm", ["average", "difference", "perceptual", "wavelet"])
@pytest.mark.parametrize("hash_size", [8, 16])
def test_hash_matches_imagehash_bit_for_bit(algorithm: str, hash_size: int) -> None:
    images = photos() + generated() + flat()
    got = ketch_hashes(images, algorithm, hash_size)
    exact = 0
    for (pixels, mode), g in zip(images, got, strict=True):
        assert_same_hash(g, pixels, mode, algorithm, hash_size)
        exact += g == expected_bytes(pixels, mode, algorithm, hash_size)
    # Every image is bit-exact except, for the perceptual hash, the four with flat thumbnails.
    assert exact == len(images) - (4 if algorithm == "perceptual" else 0)


@pytest.mark.parametrize("hash_size", [8, 16])
def test_perceptual_hash_of_flat_images_matches_off_the_rounding_noise(hash_size: int) -> None:
    """The one inexact case: where the thumbnail has flat rows or columns, DCT coefficients that are
    exactly 0 mathematically come out of scipy's FFT as ~1e-12 noise and out of Ketch's direct
    long-double sums as different noise, so those bits (and only those) may differ. Every bit of a
    coefficient that is not 0 matches, including the DC bit of the constant images."""
    images = generated()[-1:] + flat()
    got = ketch_hashes(images, "perceptual", hash_size)
    n = hash_size * hash_size
    for (pixels, mode), g in zip(images, got, strict=True):
        want = expected_bytes(pixels, mode, "perceptual", hash_size)
        noise = exact_zero_dct_bits(pixels, mode, hash_size)
        assert noise.sum() >= n // 2  # the case this test is about
        assert (bits(g, n) == bits(want, n))[~noise].all()


@pytest.mark.parametrize("algorithm", ["average", "difference", "perceptual"])
def test_odd_hash_size_packs_like_imagehash_hex(algorithm: str) -> None:
    images = photos()[:2] + generated()[:3]
    got = ketch_hashes(images, algorithm, 5)
    for (pixels, mode), g in zip(images, got, strict=True):
        assert_same_hash(g, pixels, mode, algorithm, 5)
    assert all(len(h) == 4 for h in got)  # 25 bits in 4 bytes, left-padded like imagehash's hex


def test_output_type_nulls_and_free_function() -> None:
    rows = [png(load_sample_image("flower.jpg"), "RGB"), None]
    df = ketch.from_pydict({"b": rows}).select(
        imagehash_hash(col("b").image.decode(mode="RGB"), "difference").alias("h")
    )
    table = df.to_arrow()
    assert str(table.schema.field("h").type) == "fixed_size_binary[8]"
    values = table.column("h").to_pylist()
    assert values[1] is None
    assert values[0] == expected_bytes(load_sample_image("flower.jpg"), "RGB", "difference", 8)


def test_fixed_shape_images_hash_like_variable_shape() -> None:
    photo = load_sample_image("china.jpg")
    df = ketch.from_pydict({"b": [png(photo, "RGB")]}).select(
        col("b").image.decode(mode="RGB").image.resize(64, 48).image.hash("perceptual").alias("h"),
        col("b").image.decode(mode="RGB").image.resize(64, 48).alias("img"),
    )
    out = df.to_pydict()
    resized = np.asarray(out["img"][0]).reshape(48, 64, 3)
    assert out["h"][0] == expected_bytes(np.ascontiguousarray(resized), "RGB", "perceptual", 8)


def test_hash_of_a_string_column_fails_at_plan_time() -> None:
    df = ketch.from_pydict({"s": ["a", "b"]})
    with pytest.raises(KetchTypeError, match=r"image_hash.*col\(s\).*string"):
        df.select(col("s").image.hash("perceptual"))


def test_bad_arguments_fail_when_the_expression_is_built() -> None:
    with pytest.raises(ValueError, match="algorithm must be one of"):
        col("x").image.hash("median")
    with pytest.raises(ValueError, match="hash_size"):
        col("x").image.hash("average", 1)
    with pytest.raises(ValueError, match="power-of-two"):
        col("x").image.hash("wavelet", 12)
    with pytest.raises(NotImplementedError, match="crop_resistant"):
        col("x").image.hash("crop_resistant")
