"""Audio kernels on the Ray runner: File[Audio] columns and their kernels cross the plan
serializer and run on the engine workers unchanged, with the native runner's results."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import numpy as np
from ray_compare import native_then_ray

import ketch
from ketch import col
from ketch.functions import audio_file, audio_metadata, resample

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "multimodal"))
from audio_fixtures import make_audio_files  # noqa: E402
from video_media import make_videos  # noqa: E402


def test_audio_kernels_run_on_the_workers_with_the_native_results(on_ray: Any, tmp_path: Path) -> None:
    files = make_audio_files(tmp_path)
    paths = [
        str(files[n]) for n in ("speech.wav", "speech.flac", "speech.mp3", "stereo.wav", "speech.opus")
    ] * 2

    def build() -> ketch.DataFrame:
        return (
            ketch.from_pydict({"id": list(range(len(paths))), "path": paths})
            .into_partitions(3)
            .with_column("f", audio_file(col("path")))
            .with_column("m", audio_metadata(col("f")))
            .with_column("x", resample(col("f"), 16000, mono=True, dtype="float32"))
            .sort("id")
        )

    native_df, on_df = native_then_ray(build)
    native, on = native_df.to_pydict(), on_df.to_pydict()
    assert on["m"] == native["m"] and on["m"][0]["frames"] == 102256.0
    assert [type(f).__name__ for f in on["f"]] == ["AudioFile"] * len(paths)
    for a, b in zip(native["x"], on["x"], strict=True):
        assert a.shape == b.shape and a.ndim == 1
        np.testing.assert_array_equal(a, b)


def test_read_video_frames_runs_one_task_per_video_on_the_workers(on_ray: Any, tmp_path: Path) -> None:
    """The video scan crosses the plan serializer: each video is a task on the engine workers, the
    rows equal the native runner's, and a pushed limit still stops the decoders early."""
    (tmp_path / "all").mkdir()
    videos = make_videos(tmp_path / "all")
    root = tmp_path / "clips"
    root.mkdir()
    for name in ("h264", "mjpeg", "vp9", "mkv"):
        (root / videos[name].name).write_bytes(videos[name].read_bytes())

    def build() -> ketch.DataFrame:
        return ketch.read_video_frames(str(root), 48, 64, sample_interval_seconds=0.1)

    native_df, on_df = native_then_ray(build)
    native, on = native_df.to_arrow(), on_df.to_arrow()
    assert on.schema == native.schema and on.num_rows == native.num_rows > 0
    assert on.equals(native)
    assert on_ray.last_stages[-1].tasks == 4
    limited = ketch.read_video_frames(str(root), 48, 64).limit(3)
    stats = limited.explain_analyze(file=io.StringIO())
    assert len(limited.to_pydict()["path"]) == 3
    # Each task stops at the limit (a task runs alone on a worker): at most 3 frames per video.
    assert stats.scan["frames_decoded"] <= 4 * 3


def test_one_long_video_is_split_into_parts_over_the_workers(on_ray: Any, tmp_path: Path) -> None:
    """One video with more workers than videos: the scan cuts its frames into parts (one task
    each, run on the engine workers), and the parts in order equal the native runner's whole-file
    decode: frame indexes, times and pixels."""
    import subprocess

    path = tmp_path / "long.mp4"
    source = "testsrc2=size=64x48:rate=25:duration=12"
    x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "50", "-bf", "2"]
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-nostdin", "-f", "lavfi", "-i", source, *x264, str(path)],
        check=True,
    )  # fmt: skip
    ray_runner = ketch.runners._runner
    ketch.set_runner_native()
    try:
        with ketch.execution_config_ctx(scan_tasks_min_size_bytes=384 << 20):  # parts of >= 24 MiB: whole
            whole = ketch.read_video_frames(str(path), 24, 32).to_arrow()
    finally:
        ketch.runners._runner = ray_runner
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=1024):
        parts = ketch.read_video_frames(str(path), 24, 32).to_arrow()
    assert on_ray.last_stages[-1].tasks > 1
    assert whole.num_rows == 300
    assert parts.equals(whole)
