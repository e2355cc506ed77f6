"""Audio test files made on this machine, no network: speech from espeak-ng (Debian), tones from
numpy, each converted by the ffmpeg CLI into the formats under test."""

from __future__ import annotations

import shutil
import subprocess
import wave
from pathlib import Path

import numpy as np

SENTENCE = "Ketch reads audio natively. The quick brown fox jumps over the lazy dog."


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


def write_pcm_wav(path: Path, samples: np.ndarray, rate: int) -> None:
    """16-bit PCM WAV of int16 ``samples`` shaped (frames,) or (frames, channels)."""
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.astype("<i2").tobytes())


def make_audio_files(root: Path) -> dict[str, Path]:
    """name -> path: speech.wav (espeak-ng, 22,050 Hz mono PCM_16) and its FLAC, MP3, Ogg/Vorbis and
    Opus encodings; stereo.wav (44,100 Hz, 0.5 s of 440 Hz left / 660 Hz right), stereo24.flac
    (the same at 24 bits), float.wav (PCM float32)."""
    if shutil.which("espeak-ng") is None or shutil.which("ffmpeg") is None:
        raise RuntimeError("espeak-ng and ffmpeg are needed (deps/apt-test.txt installs them)")
    root.mkdir(parents=True, exist_ok=True)
    files = {"speech.wav": root / "speech.wav"}
    subprocess.run(["espeak-ng", "-w", str(files["speech.wav"]), SENTENCE], check=True)
    for name, codec in [
        ("speech.flac", ["-c:a", "flac"]),
        ("speech.mp3", ["-c:a", "libmp3lame", "-b:a", "64k"]),
        ("speech.ogg", ["-c:a", "libvorbis", "-q:a", "4"]),
        ("speech.opus", ["-c:a", "libopus", "-b:a", "48k"]),
    ]:
        files[name] = root / name
        _ffmpeg("-i", str(files["speech.wav"]), *codec, str(files[name]))
    t = np.arange(22050) / 44100
    stereo = np.stack([np.sin(2 * np.pi * 440 * t), 0.5 * np.sin(2 * np.pi * 660 * t)], axis=1)
    files["stereo.wav"] = root / "stereo.wav"
    write_pcm_wav(files["stereo.wav"], np.round(stereo * 20000), 44100)
    files["stereo24.flac"] = root / "stereo24.flac"
    _ffmpeg(
        "-i",
        str(files["stereo.wav"]),
        "-c:a",
        "flac",
        "-sample_fmt",
        "s32",
        "-bits_per_raw_sample",
        "24",
        str(files["stereo24.flac"]),
    )
    files["float.wav"] = root / "float.wav"
    _ffmpeg("-i", str(files["stereo.wav"]), "-c:a", "pcm_f32le", str(files["float.wav"]))
    return files
