"""Workload 2, audio transcription (Daft's ``benchmarking/ai/audio_transcription``): FLAC speech
clips → resample to 16 kHz mono (Ketch's native kernel: FFmpeg + soxr, no Python) → Whisper
feature extraction (batch UDF) → Whisper generate (``@ketch.cls``, batches of 64) → decode to
text (batch UDF) → text length → Parquet.

    python examples/ai/audio_transcription.py --small [--ray]

The Whisper is tiny and random (``tiny_models.build_whisper``): transcripts are meaningless, the
encoder and decoder compute per clip is real, and every engine runs the same model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tiny_models  # noqa: E402
import workload_data  # noqa: E402
from workload_models import SAMPLE_RATE, Decoder, FeatureExtractor, Transcriber  # noqa: E402

import ketch  # noqa: E402
from ketch import col  # noqa: E402
from ketch.functions import audio_file, resample  # noqa: E402

BATCH_SIZE = 64


def prepare(data: Path, size: str) -> dict[str, Any]:
    return {
        "clips": str(workload_data.make_speech(data, workload_data.SIZES[size]["clips"])),
        "model_dir": str(tiny_models.build_whisper(data / "models")),
    }


def pipeline(clips: str, model_dir: str) -> ketch.DataFrame:
    # Threads, not worker processes: the models' weights stay in one process (torch releases the GIL).
    features = ketch.cls(
        FeatureExtractor, return_dtype=ketch.DataType.tensor(ketch.DataType.float32()), use_process=False
    )
    transcriber = ketch.cls(
        Transcriber,
        return_dtype=ketch.DataType.list(ketch.DataType.int32()),
        batch_size=BATCH_SIZE,
        use_process=False,
    )
    decoder = ketch.cls(Decoder, return_dtype=ketch.DataType.string(), use_process=False)
    df = ketch.from_glob_path(f"{clips}/*.flac").select("path")
    samples = resample(audio_file(col("path")), SAMPLE_RATE, mono=True, dtype="float32")
    df = df.with_column("resampled", samples)
    df = df.with_column("features", features(model_dir)(col("resampled")))
    df = df.with_column("token_ids", transcriber(model_dir)(col("features")))
    df = df.with_column("transcription", decoder(model_dir)(col("token_ids")))
    df = df.with_column("transcription_length", col("transcription").str.length())
    return df.exclude("token_ids", "features", "resampled")


def run(clips: str, model_dir: str, out: str) -> dict[str, Any]:
    pipeline(clips, model_dir).write_parquet(out)
    result = ketch.read_parquet(out).to_pydict()
    return {"rows": len(result["path"]), "check": float(sum(result["transcription_length"]))}


if __name__ == "__main__":
    from workload_common import main

    main("audio_transcription", prepare, run)
