"""Audio and video run in libketch_media.so, which the core loads on first use: the wheel does not
bundle FFmpeg (Debian's build is GPL), so a machine without FFmpeg's libraries must still import
Ketch and run everything else, and audio and video must say what to install.

The missing FFmpeg is real to the dynamic loader: ``LD_LIBRARY_PATH`` puts a broken
``libavformat.so.59`` ahead of the system's, so every attempt to load the media engine fails as it
does where FFmpeg is absent."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import wave
from pathlib import Path

import ketch
from ketch import col

ROOT = Path(__file__).resolve().parents[2]


def _wav_bytes() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x01" * 800)
    return out.getvalue()


def test_audio_decodes_through_the_media_engine() -> None:
    out = ketch.from_pydict({"b": [_wav_bytes()]}).select(col("b").audio.metadata().alias("m")).to_pydict()
    assert out["m"][0]["sample_rate"] == 8000
    assert out["m"][0]["channels"] == 1


def test_without_ffmpeg_everything_else_runs_and_audio_names_what_to_install(tmp_path: Path) -> None:
    broken = tmp_path / "lib"
    broken.mkdir()
    (broken / "libavformat.so.59").write_bytes(b"")  # the loader refuses it: "file too short"
    wav = tmp_path / "clip.wav"
    wav.write_bytes(_wav_bytes())
    script = textwrap.dedent(
        f"""
        import ketch
        from ketch import col
        df = ketch.from_pydict({{"k": [1, 2, 1], "v": [10, 20, 30]}})
        print("groupby", sorted(df.groupby("k").agg(col("v").sum()).to_pydict()["v"]))
        try:
            ketch.from_pydict({{"b": [open({str(wav)!r}, "rb").read()]}}).select(
                col("b").audio.decode().alias("x")
            ).collect()
        except Exception as exc:
            print("error", type(exc).__name__, exc)
        """
    )
    env = {**os.environ, "LD_LIBRARY_PATH": str(broken), "PYTHONPATH": str(ROOT / "python")}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "groupby [20, 40]"
    assert lines[1].startswith("error ")
    assert "apt install libavformat59 libavcodec59 libswscale6 libswresample4" in lines[1]
    assert "libketch_media.so could not be loaded" in lines[1]
    assert "libavformat.so.59" in lines[1] and "file too short" in lines[1]
