"""Decode (+ resize to 224x224) 5,000 real JPEGs of mixed sizes up to 4000x3000: megapixels/s per core.

The photos bundled with scikit-learn (china.jpg, flower.jpg) are cropped and rescaled to 5,000 JPEGs:
70% of 0.05-0.5 MP, 25% of 0.5-2 MP, 5% of 2-12 MP (up to 4000x3000), quality 90, in one Parquet
file. Engines decode to RGB; the "decode + resize" engines also resize to 224x224 bilinear (Ketch,
Daft, a Pillow loop); the "decode only" engines stop after decoding (Ketch, and libjpeg-turbo's own
decoder through PyTurboJPEG, single-threaded: the reference rate). `metric` reports decoded
megapixels per second per core used (Ketch and Daft use all cores; the loops one).

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

N_IMAGES = 5000
SIZE = 224
DATA_NAME = "image_decode_5000"
# The decode-only cases answer another question (the sum of decoded widths): their own reference.
CHECK_REFERENCES = {"ketch_decode_only": None, "libjpeg_turbo_decode_only": "ketch_decode_only"}


def prepare(data_dir: str) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image
    from sklearn.datasets import load_sample_images

    photos = [Image.fromarray(img) for img in load_sample_images().images]  # 427x640 each
    rng = np.random.default_rng(0)
    blobs, pixels = [], []
    for i in range(N_IMAGES):
        photo = photos[i % len(photos)]
        tier = rng.random()
        megapixels = (
            rng.uniform(0.05, 0.5)
            if tier < 0.7
            else rng.uniform(0.5, 2)
            if tier < 0.95
            else rng.uniform(2, 12)
        )
        aspect = rng.uniform(0.75, 1.5)
        w = int(min(4000, np.sqrt(megapixels * 1e6 * aspect)))
        h = int(min(3000, megapixels * 1e6 / w))
        cw, ch = int(rng.integers(200, 640)), int(rng.integers(150, 427))
        x, y = int(rng.integers(0, 640 - cw + 1)), int(rng.integers(0, 427 - ch + 1))
        image = photo.crop((x, y, x + cw, y + ch)).resize((w, h), Image.BILINEAR)
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=90)
        blobs.append(buffer.getvalue())
        pixels.append(w * h)
    pq.write_table(
        pa.table(
            {"id": list(range(N_IMAGES)), "pixels": pixels, "bytes": pa.array(blobs, pa.large_binary())}
        ),
        os.path.join(data_dir, "images.parquet"),
        row_group_size=256,
    )


def _path(data_dir: str) -> str:
    return os.path.join(data_dir, "images.parquet")


def _megapixels(data_dir: str) -> float:
    import pyarrow.parquet as pq

    return sum(pq.read_table(_path(data_dir), columns=["pixels"]).column("pixels").to_pylist()) / 1e6


def _metric(data_dir: str, seconds_since: float, cores: int) -> str:
    import time

    seconds = time.perf_counter() - seconds_since
    rate = _megapixels(data_dir) / seconds / cores
    return f"{rate:.1f} MP/s per core ({cores} cores)"


def run_ketch(data_dir: str) -> dict:
    import time

    import ketch
    from ketch import col

    start = time.perf_counter()
    df = ketch.read_parquet(_path(data_dir))
    df = df.select(col("bytes").image.decode(mode="RGB").image.resize(SIZE, SIZE).alias("img"))
    pixels = ketch.Series(df.to_arrow().column("img")).to_numpy()
    metric = _metric(data_dir, start, os.cpu_count() or 1)
    return {"rows": len(pixels), "check": float(pixels.mean()), "metric": metric}


def run_ketch_decode_only(data_dir: str) -> dict:
    import time

    import ketch
    from ketch import col

    start = time.perf_counter()
    df = ketch.read_parquet(_path(data_dir))
    df = df.select(col("bytes").image.decode(mode="RGB").image.width().alias("w"))
    widths = df.to_pydict()["w"]
    metric = _metric(data_dir, start, os.cpu_count() or 1)
    return {"rows": len(widths), "check": float(sum(widths)), "metric": metric}


def run_daft(data_dir: str) -> dict:
    import time

    import daft
    from daft import col

    start = time.perf_counter()
    df = daft.read_parquet(_path(data_dir))
    df = df.select(col("bytes").decode_image(mode="RGB").resize(SIZE, SIZE).alias("img"))
    pixels = daft_pixels(df, SIZE)
    metric = _metric(data_dir, start, os.cpu_count() or 1)
    return {"rows": len(pixels), "check": float(pixels.mean()), "metric": metric}


def run_pillow_loop(data_dir: str) -> dict:
    import time

    import numpy as np
    import pyarrow.parquet as pq
    from PIL import Image

    start = time.perf_counter()
    blobs = pq.read_table(_path(data_dir), columns=["bytes"]).column("bytes").to_pylist()
    means = [
        np.asarray(Image.open(io.BytesIO(b)).convert("RGB").resize((SIZE, SIZE), Image.BILINEAR)).mean()
        for b in blobs
    ]
    return {"rows": len(means), "check": float(np.mean(means)), "metric": _metric(data_dir, start, 1)}


def run_libjpeg_turbo_decode_only(data_dir: str) -> dict:
    import time

    import pyarrow.parquet as pq
    from turbojpeg import TJPF_RGB, TurboJPEG

    start = time.perf_counter()
    decoder = TurboJPEG()
    blobs = pq.read_table(_path(data_dir), columns=["bytes"]).column("bytes").to_pylist()
    widths = [decoder.decode(b, pixel_format=TJPF_RGB).shape[1] for b in blobs]
    return {"rows": len(widths), "check": float(sum(widths)), "metric": _metric(data_dir, start, 1)}
