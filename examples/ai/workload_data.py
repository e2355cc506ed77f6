"""Local inputs for the four AI workloads (no network): photos from scikit-learn's bundled sample
images, speech from ``espeak-ng``, PDFs with real text from reportlab, videos from the ``ffmpeg``
CLI. Each ``make_*`` writes ``n`` files into a folder once (a marker file records a finished run)
and returns the folder."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

SIZES = {"small": {"images": 48, "clips": 16, "pdfs": 12, "videos": 4},
         "medium": {"images": 6000, "clips": 1500, "pdfs": 1500, "videos": 80}}  # fmt: skip


def _sentences() -> list[str]:
    from tiny_models import corpus

    return [line for line in corpus() if 40 <= len(line) <= 140]


def _finished(folder: Path, n: int) -> bool:
    marker = folder / ".complete"
    return marker.exists() and marker.read_text() == str(n)


def _finish(folder: Path, n: int) -> Path:
    (folder / ".complete").write_text(str(n))
    return folder


def make_images(root: str | os.PathLike[str], n: int) -> Path:
    """n JPEGs (quality 90) cut from scikit-learn's two sample photos: random crops of 160-420
    pixels a side, some flipped, resized by 0.6-1.4 (so sizes and content differ)."""
    from PIL import Image
    from sklearn.datasets import load_sample_images

    folder = Path(root) / f"images_{n}"
    if _finished(folder, n):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    photos = [Image.fromarray(a) for a in load_sample_images().images]
    rng = np.random.default_rng(0)
    for i in range(n):
        photo = photos[i % len(photos)]
        w, h = int(rng.integers(160, 421)), int(rng.integers(160, 421))
        x, y = int(rng.integers(0, photo.width - w)), int(rng.integers(0, photo.height - h))
        image = photo.crop((x, y, x + w, y + h))
        if rng.random() < 0.5:
            image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        scale = float(rng.uniform(0.6, 1.4))
        image = image.resize((max(16, int(w * scale)), max(16, int(h * scale))), Image.Resampling.BILINEAR)
        image.save(folder / f"img{i:05d}.jpg", quality=90)
    return _finish(folder, n)


def make_speech(root: str | os.PathLike[str], n: int) -> Path:
    """n FLAC clips of English speech (espeak-ng at 22,050 Hz, one sentence each, 2-8 s)."""
    import soundfile

    if shutil.which("espeak-ng") is None:
        raise RuntimeError("espeak-ng is needed (deps/apt-test.txt installs it)")
    folder = Path(root) / f"speech_{n}"
    if _finished(folder, n):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    sentences = _sentences()
    for i in range(n):
        wav = folder / f"clip{i:05d}.wav"
        # The text goes on stdin: a sentence starting with "-" would read as an option.
        subprocess.run(["espeak-ng", "-s", str(150 + i % 40), "-w", str(wav), "--stdin"],
                       input=sentences[i % len(sentences)].encode(), check=True)  # fmt: skip
        samples, rate = soundfile.read(wav, dtype="int16")
        soundfile.write(folder / f"clip{i:05d}.flac", samples, rate, format="FLAC")
        wav.unlink()
    return _finish(folder, n)


def make_pdfs(root: str | os.PathLike[str], n: int, pages: int = 4) -> Path:
    """n PDFs of `pages` letter pages, each 40 lines of 10 pt Helvetica prose."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    folder = Path(root) / f"pdfs_{n}_{pages}"
    if _finished(folder, n):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    sentences = _sentences()
    for i in range(n):
        c = canvas.Canvas(str(folder / f"doc{i:05d}.pdf"), pagesize=letter, invariant=1)
        for page in range(pages):
            c.setFont("Helvetica", 10)
            for line in range(40):
                text = sentences[(i * 131 + page * 41 + line) % len(sentences)][:100]
                c.drawString(54, 740 - 16 * line, text)
            c.showPage()
        c.save()
    return _finish(folder, n)


def make_videos(root: str | os.PathLike[str], n: int, seconds: float = 4.0) -> Path:
    """n H.264 MP4 clips (ffmpeg's testsrc2 with a moving overlay, 320x240, 12 fps)."""
    if shutil.which("ffmpeg") is None:
        raise RuntimeError("the ffmpeg CLI is needed (deps/apt-test.txt installs it)")
    folder = Path(root) / f"videos_{n}_{seconds:g}"
    if _finished(folder, n):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        source = f"testsrc2=size=320x240:rate=12:duration={seconds}"
        subprocess.run(
            ["ffmpeg", "-v", "error", "-y", "-nostdin", "-f", "lavfi", "-i", source, "-vf",
             f"hue=h={(i * 37) % 360}", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
             str(folder / f"clip{i:04d}.mp4")],
            check=True,
        )  # fmt: skip
    return _finish(folder, n)
