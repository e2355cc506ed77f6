"""Shared by the image benchmarks (bench_image_pipeline, bench_image_url, bench_image_decode): the
check's tolerance per engine, with its measured cause, and Daft's pixels handed over as Ketch's."""

from __future__ import annotations

from typing import Any


def check_rtol(engine: str) -> float:
    """The check is the mean pixel. Ketch and the Pillow loop decode with libjpeg-turbo and resize
    with Pillow's bilinear filter (Ketch's shrink-on-load keeps Pillow's ``reducing_gap=2`` result):
    equal within 1e-6. Daft's mean is about 0.09 % higher, and the cause is its JPEG decoder, not
    its resize: on the first 100 images Daft's decode (the Rust image crate) gives a mean pixel
    0.098 levels above Pillow's libjpeg-turbo (max |diff| 9, mean |diff| 0.22: IDCT and chroma
    upsampling), while Daft's resize of Pillow-decoded pixels is within 0.003 of Pillow's bilinear.
    Tolerance for Daft: 2e-3 relative."""
    return 2e-3 if engine.startswith("daft") else 1e-6


def daft_pixels(df: Any, size: int) -> Any:
    """Daft's result column ``img`` as one (n, size, size, 3) uint8 array, converted once from
    Arrow (its FixedShapeImage storage is a fixed-size list): the same vectorised hand-over Ketch
    gets (``ketch.Series(...).to_numpy()``)."""
    import numpy as np

    column = df.to_arrow().column("img").combine_chunks()
    return np.asarray(column.storage.flatten()).reshape(len(column), size, size, 3)
