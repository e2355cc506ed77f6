"""Audio kernels on the Ray runner: File[Audio] columns and their kernels cross the plan
serializer and run on the engine workers unchanged, with the native runner's results."""

from __future__ import annotations

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
