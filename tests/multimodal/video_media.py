"""Test videos made with the ffmpeg CLI (Debian's FFmpeg; no network, no committed binaries), and
damaged variants of them built by patching bytes."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np

FPS = 25
WIDTH, HEIGHT = 320, 240
GOP = 10


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", *args], check=True)


def _source(seconds: float) -> list[str]:
    return ["-f", "lavfi", "-i", f"testsrc2=size={WIDTH}x{HEIGHT}:rate={FPS}", "-t", str(seconds)]


def make_videos(root: Path) -> dict[str, Path]:
    """The clips the tests use, by name: h264 (MP4, 2 s, GOP 10, no B-frames), h264_bframes (MP4,
    1 s, default B-frames), vp9 and vp8 (WebM, 1 s), mkv (H.264 in Matroska, 1 s), mjpeg (AVI, 1 s),
    audio (an M4A with AAC only), jpeg_as_mp4 (a JPEG renamed .mp4), empty (0 bytes)."""
    out = {
        "h264": root / "clip_h264.mp4",
        "h264_bframes": root / "clip_bframes.mp4",
        "vp9": root / "clip_vp9.webm",
        "vp8": root / "clip_vp8.webm",
        "mkv": root / "clip.mkv",
        "mjpeg": root / "clip_mjpeg.avi",
        "audio": root / "tone.m4a",
        "jpeg_as_mp4": root / "photo.mp4",
        "empty": root / "empty.mp4",
    }
    x264 = [
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-g",
        str(GOP),
        "-keyint_min",
        str(GOP),
    ]
    x264 += ["-sc_threshold", "0"]
    _ffmpeg(*_source(2), *x264, "-bf", "0", str(out["h264"]))
    _ffmpeg(*_source(1), "-c:v", "libx264", "-preset", "medium", "-pix_fmt", "yuv420p", "-g", str(GOP),
            "-sc_threshold", "0", str(out["h264_bframes"]))  # fmt: skip
    _ffmpeg(*_source(1), "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-g", str(GOP),
            "-keyint_min", str(GOP), "-auto-alt-ref", "0", str(out["vp9"]))  # fmt: skip
    _ffmpeg(*_source(1), "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-g", str(GOP),
            "-keyint_min", str(GOP), "-auto-alt-ref", "0", "-b:v", "1M", str(out["vp8"]))  # fmt: skip
    _ffmpeg(*_source(1), *x264, str(out["mkv"]))
    _ffmpeg(*_source(1), "-c:v", "mjpeg", "-q:v", "3", "-pix_fmt", "yuvj420p", str(out["mjpeg"]))
    _ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac", str(out["audio"]))
    jpeg = root / "photo.jpg"
    _ffmpeg(*_source(0.04), "-frames:v", "1", str(jpeg))
    jpeg.rename(out["jpeg_as_mp4"])
    out["empty"].write_bytes(b"")
    return out


def rgb_frames(path: Path, width: int | None = None, height: int | None = None) -> np.ndarray:
    """The ffmpeg CLI's own decode of every frame as RGB24 (N, H, W, 3): the oracle."""
    args = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(path)]
    if width is not None:
        args += ["-vf", f"scale={width}:{height}:flags=bilinear"]
    args += ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    raw = subprocess.run(args, check=True, capture_output=True).stdout
    w, h = (width, height) if width is not None else (WIDTH, HEIGHT)
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


def avi_chunks(data: bytes, tag: bytes = b"00dc") -> list[int]:
    """Offsets of the payloads of the AVI's video chunks, in file order."""
    movi = data.index(b"movi") + 4
    offsets = []
    at = movi
    while at + 8 <= len(data):
        fourcc, size = data[at : at + 4], struct.unpack("<I", data[at + 4 : at + 8])[0]
        if fourcc == b"idx1":
            break
        if fourcc == tag:
            offsets.append(at + 8)
        at += 8 + size + (size & 1)
    return offsets


def corrupt_mjpeg_avi(data: bytes, frames: list[int]) -> bytes:
    """The AVI with the JPEG data of the given frames (0-based, file order) overwritten by junk
    (the chunk headers kept, so the demuxer still finds every packet)."""
    patched = bytearray(data)
    chunks = avi_chunks(data)
    for i in frames:
        start = chunks[i]
        size = struct.unpack("<I", data[start - 4 : start])[0]
        patched[start : start + size] = bytes((j * 37 + 11) & 0xFF for j in range(size))
    return bytes(patched)


def huge_header_avi(data: bytes, width: int, height: int) -> bytes:
    """The MJPEG AVI with its main header (avih) and stream format (strf) claiming width x height."""
    patched = bytearray(data)
    avih = data.index(b"avih") + 8
    patched[avih + 32 : avih + 40] = struct.pack("<II", width, height)
    strf = data.index(b"strf") + 8
    patched[strf + 4 : strf + 12] = struct.pack("<ii", width, height)
    return bytes(patched)


def huge_y4m(width: int, height: int) -> bytes:
    """A raw YUV4MPEG2 stream whose text header claims width x height, with a few bytes of frame."""
    return f"YUV4MPEG2 W{width} H{height} F25:1 Ip A1:1 C420jpeg\nFRAME\n".encode() + bytes(4096)
