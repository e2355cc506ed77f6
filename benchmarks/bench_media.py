"""Audio, video and documents, side by side (issue 26): Ketch's native kernels against Daft's
functions (Python UDFs over soundfile/librosa, PyAV) and plain Python loops.

- q1 audio: 2,000 short speech clips (espeak-ng, 1.5-4 s, 22,050 Hz mono; a third each WAV, FLAC,
  MP3), decoded and resampled to 16 kHz: Ketch ``resample(audio_file(path), 16000)``, Daft's
  ``resample`` (soundfile + librosa's soxr_hq), and a soundfile + soxr loop (one core).
  ``check`` is the total number of output samples (equal across engines: Ketch's resample ends as
  librosa's).
- q2 video: 50 clips (4 s, 25 fps, 640x360 H.264, GOP 50; ffmpeg's testsrc2 and mandelbrot
  sources), every frame decoded and resized to 224x224 RGB: ``read_video_frames(dir, 224, 224)``
  in Ketch and Daft, and a PyAV loop (``frame.reformat(224, 224).to_ndarray()``, one core).
  ``check`` is the number of frames.

Memory is the harness's (peak Pss above the start, all processes of the case).
"""

from __future__ import annotations

import os
import subprocess

N_CLIPS = int(os.environ.get("KETCH_BENCH_AUDIO_CLIPS", "2000"))
N_VIDEOS = int(os.environ.get("KETCH_BENCH_VIDEOS", "50"))
FRAME = 224
DATA_NAME = f"media_{N_CLIPS}_{N_VIDEOS}"
RATE = 16000
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Ketch decodes audio in native code.",
    "Data engineers turn speech into training data.",
    "One two three four five six seven eight nine ten.",
    "A multimodal engine sees every file it reads.",
]


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
    shapes = table.column("x").combine_chunks().field("shape").to_pylist()
    return {"rows": table.num_rows, "check": float(sum(s[0] for s in shapes))}


def run_daft_q1(data_dir: str) -> dict:
    import daft
    from daft import col
    from daft.functions import audio_file, resample

    df = daft.from_pydict({"path": _clips(data_dir)})
    df = df.select(resample(audio_file(col("path")), RATE).alias("x"))
    out = df.to_pydict()["x"]
    return {"rows": len(out), "check": float(sum(len(x) for x in out))}


def run_soundfile_soxr_loop_q1(data_dir: str) -> dict:
    import soundfile as sf
    import soxr

    total = 0
    paths = _clips(data_dir)
    for path in paths:
        data, rate = sf.read(path, dtype="float32")
        total += len(soxr.resample(data, rate, RATE, quality="HQ"))
    return {"rows": len(paths), "check": float(total)}


def run_ketch_q2(data_dir: str) -> dict:
    import ketch

    table = ketch.read_video_frames(_videos(data_dir), FRAME, FRAME).to_arrow()
    return {"rows": table.num_rows, "check": float(table.num_rows)}


def run_daft_q2(data_dir: str) -> dict:
    import daft

    table = daft.read_video_frames(
        _videos(data_dir) + "/*.mp4", image_height=FRAME, image_width=FRAME
    ).to_arrow()
    return {"rows": table.num_rows, "check": float(table.num_rows)}


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
