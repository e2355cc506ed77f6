"""Decode + resize 2,000 real JPEGs (the photos bundled with scikit-learn, mixed sizes) to 224x224 RGB.

Each engine reads the same Parquet file of JPEG bytes, decodes to RGB, resizes to 224x224 with a
bilinear filter and reduces the pixels to their mean (the "check" column: see ``check_rtol`` for
the tolerance per engine and why Daft's differs).

Hand-over (inside the timed region, the same for both engines): Ketch and Daft each convert their
result once from Arrow to one numpy array (both store a FixedShapeImage as a fixed-size list); a
Pillow loop makes one array per image as it goes.
"""

from __future__ import annotations

import io
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from image_checks import check_rtol, daft_pixels  # noqa: E402,F401

N_IMAGES = 2000
SIZE = 224


def prepare(data_dir: str) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image
    from sklearn.datasets import load_sample_images

    photos = [Image.fromarray(img) for img in load_sample_images().images]  # 427x640 each
    rng = np.random.default_rng(0)
    blobs = []
    for i in range(N_IMAGES):
        photo = photos[i % len(photos)]
        w, h = int(rng.integers(160, 640)), int(rng.integers(120, 427))
        x, y = int(rng.integers(0, 640 - w + 1)), int(rng.integers(0, 427 - h + 1))
        scale = float(rng.choice([0.5, 1.0, 2.0]))
        crop = photo.crop((x, y, x + w, y + h)).resize((max(1, int(w * scale)), max(1, int(h * scale))))
        buffer = io.BytesIO()
        crop.save(buffer, format="JPEG", quality=90)
        blobs.append(buffer.getvalue())
    pq.write_table(
        pa.table({"id": list(range(N_IMAGES)), "bytes": pa.array(blobs, pa.large_binary())}),
        os.path.join(data_dir, "images.parquet"),
    )


def _path(data_dir: str) -> str:
    return os.path.join(data_dir, "images.parquet")


def run_ketch(data_dir: str) -> dict:
    import ketch
    from ketch import col

    df = ketch.read_parquet(_path(data_dir))
    df = df.select(col("bytes").image.decode(mode="RGB").image.resize(SIZE, SIZE).alias("img"))
    pixels = ketch.Series(df.to_arrow().column("img")).to_numpy()
    return {"rows": len(pixels), "check": float(pixels.mean())}


def run_daft(data_dir: str) -> dict:
    import daft
    from daft import col

    df = daft.read_parquet(_path(data_dir))
    df = df.select(col("bytes").decode_image(mode="RGB").resize(SIZE, SIZE).alias("img"))
    pixels = daft_pixels(df, SIZE)
    return {"rows": len(pixels), "check": float(pixels.mean())}


def run_pillow_loop(data_dir: str) -> dict:
    import numpy as np
    import pyarrow.parquet as pq
    from PIL import Image

    blobs = pq.read_table(_path(data_dir), columns=["bytes"]).column("bytes").to_pylist()
    means = [
        np.asarray(Image.open(io.BytesIO(b)).convert("RGB").resize((SIZE, SIZE), Image.BILINEAR)).mean()
        for b in blobs
    ]
    return {"rows": len(means), "check": float(np.mean(means))}
