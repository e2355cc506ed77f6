"""Download + decode + resize 2,000 real JPEGs from a loopback HTTP server to 224x224 RGB.

The same images as bench_image_pipeline (the photos bundled with scikit-learn, mixed sizes), each a
file served by a separate ``python -m http.server`` process on 127.0.0.1; each engine runs
``col("url").url.download().image.decode().image.resize(224, 224)`` and reduces the pixels to their
mean ("check": within ``check_rtol``, where Daft's JPEG decoder makes the difference). Ketch
splits the download into an I/O stage and decodes/resizes on the compute pool (explain: "Runs on =
I/O pool" only on the download).

Hand-over (inside the timed region, the same for both engines): Ketch and Daft each convert their
result once from Arrow to one numpy array (both store a FixedShapeImage as a fixed-size list); a
Pillow loop makes one array per image as it goes.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from image_checks import check_rtol, daft_pixels  # noqa: E402,F401

N_IMAGES = 2000
SIZE = 224
_server: subprocess.Popen | None = None
_port = 0


def prepare(data_dir: str) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "pipeline", os.path.join(os.path.dirname(__file__), "bench_image_pipeline.py")
    )
    pipeline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pipeline)
    import pyarrow.parquet as pq

    parquet = os.path.join(data_dir, "images.parquet")
    pipeline.prepare(data_dir)
    blobs = pq.read_table(parquet, columns=["bytes"]).column("bytes").to_pylist()
    jpegs = os.path.join(data_dir, "jpegs")
    os.makedirs(jpegs, exist_ok=True)
    for i, blob in enumerate(blobs):
        with open(os.path.join(jpegs, f"{i}.jpg"), "wb") as f:
            f.write(blob)


def setup(engine: str) -> None:
    """Starts the HTTP server (untimed) and imports the engine."""
    global _server, _port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        _port = s.getsockname()[1]
    data_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".data", "image_url")
    _server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "http.server",
            str(_port),
            "--bind",
            "127.0.0.1",
            "--directory",
            os.path.join(data_dir, "jpegs"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    atexit.register(_server.terminate)
    for _ in range(200):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", _port)) == 0:
                break
        time.sleep(0.05)
    if engine.startswith("ketch"):
        import ketch  # noqa: F401
    else:
        import daft  # noqa: F401


def _urls() -> list[str]:
    return [f"http://127.0.0.1:{_port}/{i}.jpg" for i in range(N_IMAGES)]


def run_ketch(data_dir: str) -> dict:
    import ketch
    from ketch import col

    df = ketch.from_pydict({"url": _urls()})
    df = df.select(col("url").url.download().image.decode(mode="RGB").image.resize(SIZE, SIZE).alias("img"))
    pixels = ketch.Series(df.to_arrow().column("img")).to_numpy()
    return {"rows": len(pixels), "check": float(pixels.mean())}


def run_daft(data_dir: str) -> dict:
    import daft
    from daft import col

    df = daft.from_pydict({"url": _urls()})
    df = df.select(col("url").download().decode_image(mode="RGB").resize(SIZE, SIZE).alias("img"))
    pixels = daft_pixels(df, SIZE)
    return {"rows": len(pixels), "check": float(pixels.mean())}
