"""Workload 4, video object detection (Daft's ``benchmarking/ai/video_object_detection``): MP4
clips → ``read_video_frames`` at 640x640 (Ketch's native streaming decoder, resized in FFmpeg's
scaler) → an object detector (``@ketch.cls``, batches of 32 frames) → the two best detections per
frame, exploded → each object cropped from its frame and encoded as PNG (native kernels) → Parquet.

    python examples/ai/video_object_detection.py --small [--ray]

The detector is a tiny random YOLOS (transformers' ViT-based YOLO, ``tiny_models.build_yolos``;
ultralytics' YOLO is AGPL and needs torchvision's CUDA build here): boxes and labels are
meaningless, the compute per frame is real, and every engine runs the same model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tiny_models  # noqa: E402
import workload_data  # noqa: E402
from workload_models import Detector  # noqa: E402

import ketch  # noqa: E402
from ketch import DataType, col  # noqa: E402

FRAME_SIZE = 640
BATCH_SIZE = 32

DETECTION = {
    "label": DataType.string(),
    "confidence": DataType.float32(),
    "bbox": DataType.list(DataType.int32()),
}
DETECTIONS = DataType.list(DataType.struct(DETECTION))


def prepare(data: Path, size: str) -> dict[str, Any]:
    return {
        "videos": str(workload_data.make_videos(data, workload_data.SIZES[size]["videos"])),
        "model_dir": str(tiny_models.build_yolos(data / "models")),
    }


def pipeline(videos: str, model_dir: str) -> ketch.DataFrame:
    detector = ketch.cls(Detector, return_dtype=DETECTIONS, batch_size=BATCH_SIZE, use_process=False)
    df = ketch.read_video_frames(f"{videos}/*.mp4", image_height=FRAME_SIZE, image_width=FRAME_SIZE)
    df = df.with_column("features", detector(model_dir)(col("data"))).explode("features")
    df = df.with_column("object", col("data").image.crop(col("features")["bbox"]).image.encode("png"))
    return df.exclude("data")


def run(videos: str, model_dir: str, out: str) -> dict[str, Any]:
    pipeline(videos, model_dir).write_parquet(out)
    result = ketch.read_parquet(out).select("features", "object").to_pydict()
    area = sum(f["bbox"][2] * f["bbox"][3] for f in result["features"])
    return {"rows": len(result["object"]), "check": float(area)}


if __name__ == "__main__":
    from workload_common import main

    main("video_object_detection", prepare, run)
