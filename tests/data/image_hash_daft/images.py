"""The images the Daft image_hash reference values were computed on: built from numpy alone, the same
bytes in the generator (run under Daft) and in the test (run under Ketch)."""

from __future__ import annotations

import numpy as np

MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _smooth(rng: np.random.Generator, h: int, w: int, channels: int, cells: int) -> np.ndarray:
    """Low-frequency noise (bilinear upsampling of a cells x cells grid) plus a little fine noise:
    images with structure at every scale, so no thumbnail is flat."""
    grid = rng.uniform(0, 255, (cells, cells, channels))
    ys = np.linspace(0, cells - 1, h)
    xs = np.linspace(0, cells - 1, w)
    y0 = np.floor(ys).astype(int).clip(0, cells - 2)
    x0 = np.floor(xs).astype(int).clip(0, cells - 2)
    fy = (ys - y0)[:, None, None]
    fx = (xs - x0)[None, :, None]
    top = grid[y0][:, x0] * (1 - fx) + grid[y0][:, x0 + 1] * fx
    bottom = grid[y0 + 1][:, x0] * (1 - fx) + grid[y0 + 1][:, x0 + 1] * fx
    value = top * (1 - fy) + bottom * fy + rng.normal(0, 6, (h, w, channels))
    return value.clip(0, 255).astype(np.uint8)


def make_images() -> list[tuple[str, np.ndarray]]:
    """(name, H x W x C uint8 array); C = 1, 2, 3, 4 for L, LA, RGB, RGBA."""
    rng = np.random.default_rng(20261202)
    y, x = np.mgrid[0:97, 0:131]
    diagonal = ((x * 255) // 130 + (y * 7) % 23).clip(0, 255).astype(np.uint8)[..., None]
    radial = (np.hypot(x - 60.0, y - 40.0) * 2).clip(0, 255).astype(np.uint8)[..., None]
    hue = np.stack(
        [
            (127 + 127 * np.sin(x / 9.0)),
            (127 + 127 * np.sin(y / 7.0 + 1)),
            (127 + 127 * np.cos((x + y) / 11.0)),
        ],
        -1,
    ).astype(np.uint8)
    return [
        ("smooth_rgb_200x150", _smooth(rng, 150, 200, 3, 7)),
        ("smooth_rgb_64x64", _smooth(rng, 64, 64, 3, 5)),
        ("smooth_l_120x90", _smooth(rng, 90, 120, 1, 6)),
        ("smooth_rgba_77x53", _smooth(rng, 53, 77, 4, 6)),
        ("smooth_la_40x61", _smooth(rng, 61, 40, 2, 5)),
        ("smooth_rgb_tall_17x300", _smooth(rng, 300, 17, 3, 6)),
        ("diagonal_l", diagonal),
        ("radial_l", radial),
        ("colourful_rgb", hue),
        ("noise_rgb_80x64", rng.integers(0, 256, (64, 80, 3), dtype=np.uint8)),
        ("noise_l_9x9", rng.integers(0, 256, (9, 9, 1), dtype=np.uint8)),
        ("noise_rgb_3x5", rng.integers(0, 256, (5, 3, 3), dtype=np.uint8)),
        ("pixel_rgb_1x1", np.array([[[200, 10, 30]]], dtype=np.uint8)),
        ("flat_rgb", np.full((30, 40, 3), 77, np.uint8)),
    ]


# Images the DCT methods skip (none: flat thumbnails hash alike in both engines, see the test's
# KNOWN_DCT_NOISE for the one gradient crop that does not).
DCT_DEGENERATE: set[str] = set()

# (method, hash_size, binbits, segments) cases; the expected file maps "method/hash_size/binbits/
# segments" to the hex hash of every image (None where the method skips it).
SIZES = (8, 16, 5)
CASES = [
    *[
        (m, hs, 3, 3)
        for m in ("ahash", "dhash", "dhash_vertical", "phash", "phash_simple")
        for hs in (8, 16, 5)
    ],
    ("ahash", 1, 3, 3),
    ("whash", 8, 3, 3),
    ("whash", 16, 3, 3),
    ("whash", 4, 3, 3),
    ("crop_resistant", 8, 3, 3),
    ("crop_resistant", 4, 3, 2),
    ("crop_resistant", 8, 3, 4),
    ("colorhash", 8, 3, 3),
    ("colorhash", 8, 4, 3),
    ("colorhash", 8, 1, 3),
]

DCT_METHODS = {"phash", "phash_simple", "crop_resistant"}


def case_key(method: str, hash_size: int, binbits: int, segments: int) -> str:
    return f"{method}/{hash_size}/{binbits}/{segments}"


def luma_f32(pixels: np.ndarray) -> np.ndarray:
    """The grayscale Ketch computes for RGB(A) (see image_hash_daft.cc): used by the generator to
    check that no image hits one of the 170 colours where Daft's rounding differs."""
    xyz = lambda x, y: np.array([x / y, 1.0, (1 - x - y) / y])  # noqa: E731
    p = np.array([xyz(*c) for c in ((0.64, 0.33), (0.30, 0.60), (0.15, 0.06))]).T
    w = (p[1] * np.linalg.solve(p, xyz(0.31272, 0.32903))).astype(np.float32)
    f = pixels[..., :3].astype(np.float32)
    total = (w[0] * f[..., 0] + w[1] * f[..., 1]).astype(np.float32) + w[2] * f[..., 2]
    return np.floor((total + np.float32(0.5)).astype(np.float32)).clip(0, 255).astype(np.uint8)
