"""Audio, video and documents, side by side (issue 26): Ketch's native kernels against Daft's
functions (Python UDFs over soundfile/librosa, PyAV) and plain Python loops.

- q1 audio: 2,000 short speech clips (espeak-ng, 1.5-4 s, 22,050 Hz mono; a third each WAV, FLAC,
  MP3), decoded and resampled to 16 kHz: Ketch ``resample(audio_file(path), 16000)``, Daft's
  ``resample`` (soundfile + librosa's soxr_hq), and a soundfile + soxr loop (one core).
  ``check``: the total number of output samples (exact: every engine ends each clip as librosa
  does, ``ceil(n * ratio)`` samples; the loop pads or cuts soxr's output to that) and the sum of
  squares of every sample (within ``Q1_RTOL``: the resamplers' filters differ in the last bits).
- q2 video: 50 clips (4 s, 25 fps, 640x360 H.264, GOP 50; ffmpeg's testsrc2 and mandelbrot
  sources), every frame decoded and resized to 224x224 RGB: ``read_video_frames(dir, 224, 224)``
  in Ketch and Daft, and a PyAV loop (``frame.reformat(224, 224).to_ndarray()``, one core).
  ``check`` is the number of frames.
- q3 PDF: text of 500 generated PDFs (reportlab, 8 letter pages of 45 lines each): Ketch
  ``pdf_text(file)``, Daft with a pypdfium2 UDF (Daft has no PDF functions), and a pypdfium2
  loop (one core). ``check``: the digest of every page's text (``checks.digest``, after the timed
  region: the same characters, CRLF as LF).

Memory is the harness's (peak Pss above the start, all processes of the case).
"""

from __future__ import annotations

import os
import subprocess

N_CLIPS = int(os.environ.get("KETCH_BENCH_AUDIO_CLIPS", "2000"))
N_VIDEOS = int(os.environ.get("KETCH_BENCH_VIDEOS", "50"))
N_PDFS = int(os.environ.get("KETCH_BENCH_PDFS", "500"))
PDF_PAGES = 8
Q1_RTOL = 1e-6


def check_rtol(engine: str) -> float:
    return Q1_RTOL if engine.endswith("_q1") else 1e-9


FRAME = 224
DATA_NAME = f"media_{N_CLIPS}_{N_VIDEOS}_{N_PDFS}"
RATE = 16000
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Ketch decodes audio in native code.",
    "Data engineers turn speech into training data.",
    "One two three four five six seven eight nine ten.",
    "A multimodal engine sees every file it reads.",
]


def setup(engine: str) -> None:
    """Imports (untimed, part of the baseline memory): each engine's libraries."""
    import numpy  # noqa: F401
    import pyarrow  # noqa: F401

    if engine.startswith("ketch"):
        import ketch
        import ketch.functions  # noqa: F401

        ketch.from_pydict({"x": [1]}).collect()  # the engine's pools and the function registry
    elif engine.startswith("daft"):
        import daft  # noqa: F401
        import daft.functions  # noqa: F401
    if engine.endswith("q1") and not engine.startswith("ketch"):
        import soundfile  # noqa: F401
        import soxr  # noqa: F401

        if engine.startswith("daft"):
            import librosa  # noqa: F401
    if engine.endswith("q2") and not engine.startswith("ketch"):
        import av  # noqa: F401
    if engine.endswith("q3") and not engine.startswith("ketch"):
        import pypdfium2  # noqa: F401


def prepare(data_dir: str) -> None:
    import numpy as np
    import soundfile as sf

    base = os.path.join(data_dir, "speech")
    os.makedirs(base, exist_ok=True)
    voices = []
    for i, text in enumerate(SENTENCES):
        path = os.path.join(base, f"voice{i}.wav")
        subprocess.run(["espeak-ng", "-s", str(150 + 20 * i), "-w", path, text], check=True)
        voices.append(sf.read(path, dtype="float32")[0])
    rng = np.random.default_rng(0)
    clips = os.path.join(data_dir, "clips")
    os.makedirs(clips, exist_ok=True)
    for i in range(N_CLIPS):
        voice = voices[i % len(voices)]
        n = int(rng.uniform(1.5, 4.0) * 22050)
        start = int(rng.integers(0, max(1, len(voice) - n)))
        clip = np.resize(voice[start:], n) * float(rng.uniform(0.5, 1.0))
        fmt = ("WAV", "FLAC", "MP3")[i % 3]
        sf.write(os.path.join(clips, f"clip{i:05d}.{fmt.lower()}"), clip, 22050, format=fmt)
    _prepare_videos(data_dir)
    _prepare_pdfs(data_dir)


def _prepare_videos(data_dir: str) -> None:
    folder = os.path.join(data_dir, "videos")
    os.makedirs(folder, exist_ok=True)
    for i in range(N_VIDEOS):
        source = "testsrc2" if i % 2 == 0 else "mandelbrot"
        subprocess.run(
            [
                "ffmpeg",
                "-hide_banner",
                "-loglevel",
                "error",
                "-y",
                "-f",
                "lavfi",
                "-i",
                f"{source}=size=640x360:rate=25",
                "-ss",
                str(i % 7),
                "-t",
                "4",
                "-c:v",
                "libx264",
                "-g",
                "50",
                "-pix_fmt",
                "yuv420p",
                os.path.join(folder, f"clip{i:03d}.mp4"),
            ],
            check=True,
        )


def _prepare_pdfs(data_dir: str) -> None:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    folder = os.path.join(data_dir, "pdfs")
    os.makedirs(folder, exist_ok=True)
    words = " ".join(SENTENCES).split()
    for i in range(N_PDFS):
        c = canvas.Canvas(os.path.join(folder, f"doc{i:04d}.pdf"), pagesize=letter)
        for page in range(PDF_PAGES):
            c.setFont("Helvetica", 10)
            for line in range(45):
                start = (i * 7 + page * 13 + line * 3) % len(words)
                text = " ".join((words * 2)[start : start + 12])
                c.drawString(54, 740 - 15 * line, f"{i}.{page}.{line} {text}")
            c.showPage()
        c.save()


def _pdfs(data_dir: str) -> list[str]:
    folder = os.path.join(data_dir, "pdfs")
    return sorted(os.path.join(folder, name) for name in os.listdir(folder))


def _videos(data_dir: str) -> str:
    return os.path.join(data_dir, "videos")


def _clips(data_dir: str) -> list[str]:
    folder = os.path.join(data_dir, "clips")
    return sorted(os.path.join(folder, name) for name in os.listdir(folder))


def run_ketch_q1(data_dir: str) -> dict:
    import ketch
    from ketch import col
    from ketch.functions import audio_file, resample

    df = ketch.from_pydict({"path": _clips(data_dir)})
    df = df.select(resample(audio_file(col("path")), RATE, dtype="float32").alias("x"))
    table = df.to_arrow()
    return {"rows": table.num_rows, "check": lambda: _audio_check(_ketch_samples(table))}


def _ketch_samples(table) -> list:
    import numpy as np
    import pyarrow.compute as pc

    data = pc.struct_field(table.column("x").combine_chunks(), "data")
    return [np.asarray(pc.list_flatten(data), dtype=np.float32)]


def _audio_check(clips: list) -> list:
    """[total samples (exact), the sum of squares over every sample (the signal's energy: equal
    within Q1_RTOL across resampler implementations)]; called by the harness after the timed
    region."""
    import math

    import numpy as np

    total = sum(len(c) for c in clips)
    energy = math.fsum(float(np.dot(c.astype(np.float64), c.astype(np.float64))) for c in clips)
    return [total, energy]


def run_daft_q1(data_dir: str) -> dict:
    import daft
    from daft import col
    from daft.functions import audio_file, resample

    df = daft.from_pydict({"path": _clips(data_dir)})
    df = df.select(resample(audio_file(col("path")), RATE).alias("x"))
    import numpy as np

    out = df.to_pydict()["x"]
    return {"rows": len(out), "check": lambda: _audio_check([np.asarray(x, dtype=np.float32) for x in out])}


def run_soundfile_soxr_loop_q1(data_dir: str) -> dict:
    import math

    import numpy as np
    import soundfile as sf
    import soxr

    clips = []
    paths = _clips(data_dir)
    for path in paths:
        data, rate = sf.read(path, dtype="float32")
        out = soxr.resample(data, rate, RATE, quality="HQ")
        # librosa's length convention (what Ketch and Daft give): ceil(n * ratio), padded or cut.
        n = math.ceil(len(data) * RATE / rate)
        clips.append(np.pad(out, (0, max(0, n - len(out))))[:n])
    return {"rows": len(paths), "check": lambda: _audio_check(clips)}


def run_ketch_q2(data_dir: str) -> dict:
    import ketch

    # Streamed, as a training loop reads it (the peers below also drop each file's frames).
    rows = sum(
        batch.num_rows for batch in ketch.read_video_frames(_videos(data_dir), FRAME, FRAME).to_arrow_iter()
    )
    return {"rows": rows, "check": float(rows)}


def run_daft_q2(data_dir: str) -> dict:
    import daft

    # One read_video_frames per file: Daft 0.7.26's read_video_frames over a glob or a list of two
    # or more files never finished on this machine (no CPU used, no error; a single file works).
    folder = _videos(data_dir)
    rows = 0
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        rows += daft.read_video_frames(path, image_height=FRAME, image_width=FRAME).to_arrow().num_rows
    return {"rows": rows, "check": float(rows)}


def run_pyav_loop_q2(data_dir: str) -> dict:
    import av

    folder = _videos(data_dir)
    frames = 0
    for name in sorted(os.listdir(folder)):
        with av.open(os.path.join(folder, name)) as container:
            for frame in container.decode(video=0):
                frame.reformat(width=FRAME, height=FRAME, format="rgb24").to_ndarray()
                frames += 1
    return {"rows": frames, "check": float(frames)}


def run_ketch_q3(data_dir: str) -> dict:
    import ketch
    from ketch import col
    from ketch.functions import pdf_text

    df = ketch.from_pydict({"path": _pdfs(data_dir)}).select(pdf_text(col("path").url.to_file()).alias("t"))
    pages = df.to_pydict()["t"]
    return {"rows": len(pages), **_text_result([p["text"] for doc in pages for p in doc])}


def _text_result(texts: list[str]) -> dict:
    """Every page's text (CRLF as LF), digested after the timed region: the same characters, not
    only the same count."""
    return {"result": lambda: __import__("pyarrow").table({"text": [t.replace("\r\n", "\n") for t in texts]})}


def _pypdfium2_text(data: bytes) -> list[str]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(data)
    try:
        return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    finally:
        doc.close()


def run_daft_q3(data_dir: str) -> dict:
    import daft
    from daft import col

    # pdfium is not thread-safe: Daft's threads crash it (segfault), so the UDF runs in processes.
    @daft.func(return_dtype=daft.DataType.list(daft.DataType.string()), use_process=True)
    def pdf_text(data: bytes) -> list[str]:
        return _pypdfium2_text(data)

    df = daft.from_pydict({"path": _pdfs(data_dir)}).select(pdf_text(col("path").download()).alias("t"))
    pages = df.to_pydict()["t"]
    return {"rows": len(pages), **_text_result([t for doc in pages for t in doc])}


def run_pypdfium2_loop_q3(data_dir: str) -> dict:
    texts = []
    paths = _pdfs(data_dir)
    for path in paths:
        with open(path, "rb") as f:
            texts += _pypdfium2_text(f.read())
    return {"rows": len(paths), **_text_result(texts)}
