"""Workload 1, image classification (Daft's ``benchmarking/ai/image_classification``): JPEGs →
download → decode (RGB) → resize 224x224 (native kernels) → a ResNet classifier (``@ketch.cls``,
batches of 64, ImageNet normalisation inside) → labels → Parquet.

    python examples/ai/image_classification.py --small [--ray]

The ResNet is tiny and random (``tiny_models.build_resnet``): the labels are meaningless, the
compute per image is real, and every engine in the benchmark runs the same model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tiny_models  # noqa: E402
import workload_data  # noqa: E402
from workload_models import ResNetClassifier  # noqa: E402

import ketch  # noqa: E402
from ketch import col  # noqa: E402

BATCH_SIZE = 64


def prepare(data: Path, size: str) -> dict[str, Any]:
    return {
        "images": str(workload_data.make_images(data, workload_data.SIZES[size]["images"])),
        "model_dir": str(tiny_models.build_resnet(data / "models")),
    }


def pipeline(images: str, model_dir: str) -> ketch.DataFrame:
    classifier = ketch.cls(
        ResNetClassifier, return_dtype=ketch.DataType.string(), batch_size=BATCH_SIZE, use_process=False
    )
    df = ketch.from_glob_path(f"{images}/*.jpg")
    df = df.with_column("image", col("path").url.download().image.decode(mode="RGB").image.resize(224, 224))
    df = df.with_column("label", classifier(model_dir)(col("image")))
    return df.select("path", "label")


def run(images: str, model_dir: str, out: str) -> dict[str, Any]:
    pipeline(images, model_dir).write_parquet(out)
    result = ketch.read_parquet(out).to_pydict()
    check = sum(int(label.split("_")[1]) for label in result["label"])
    return {"rows": len(result["path"]), "check": float(check)}


if __name__ == "__main__":
    from workload_common import main

    main("image_classification", prepare, run)
