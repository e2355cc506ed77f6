"""Shared by the image benchmarks (bench_image_pipeline, bench_image_url, bench_image_decode): the
check's tolerance per engine, with its measured cause, and Daft's pixels handed over as Ketch's."""

from __future__ import annotations

from typing import Any


def check_rtol(engine: str) -> float:
    """The check is the mean pixel. Ketch and the Pillow loop both decode with libjpeg-turbo and
    resize with Pillow's bilinear filter; Ketch decodes a JPEG at least twice the target size in
    the DCT first (shrink-on-load, Pillow's ``draft`` as its ``thumbnail`` does), the loop decodes
    full size: on the 5,000 photos of up to 12 MP the means differ by 4e-5 relative (on the
    smaller photos of the pipeline benchmark, by 5e-8): the Pillow loop within 1e-4. Daft's mean is
    about 0.09 % higher, and the cause is its JPEG decoder, not its resize: on the first 100 images
    Daft's decode (the Rust image crate) gives a mean pixel 0.098 levels above libjpeg-turbo's
    (max |diff| 9, mean |diff| 0.22: IDCT and chroma upsampling), while Daft's resize of
    Pillow-decoded pixels is within 0.003 of Pillow's bilinear: Daft within 2e-3."""
    return 2e-3 if engine.startswith("daft") else 1e-4


def daft_pixels(df: Any, size: int) -> Any:
    """Daft's result column ``img`` as one (n, size, size, 3) uint8 array, converted once from
    Arrow (its FixedShapeImage storage is a fixed-size list): the same vectorised hand-over Ketch
    gets (``ketch.Series(...).to_numpy()``)."""
    import numpy as np

    column = df.to_arrow().column("img").combine_chunks()
    return np.asarray(column.storage.flatten()).reshape(len(column), size, size, 3)
