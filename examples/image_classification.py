"""The main job: Daft's image-classification walkthrough, on real images, end to end in Ketch.

Data: the 1,797 handwritten digits bundled with scikit-learn (8x8, 17 grey levels), upscaled once to
32x32 and stored as PNG bytes in a Parquet file with their label, id and train/test split.
Model: an SVM trained on the training split, with features made by Pillow (decode → RGB → bilinear
resize to 16x16 → grey), cached after the first run.
Pipeline, all in Ketch: read_parquet → image.decode(mode="RGB") → image.resize(16, 16) → a stateful
classifier (@ketch.cls, batched, 2 instances) → exclude the bulky columns → write_parquet. The
held-out accuracy proves decode, resize and batching match Pillow's: it must be at least 0.90.

Run: ``make demo`` (or ``.venv/bin/python examples/image_classification.py``).
"""

from __future__ import annotations

import io
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import ketch
from ketch import col

CACHE = Path(os.environ.get("KETCH_DEMO_CACHE", Path(__file__).resolve().parent.parent / ".cache" / "demo"))
MODEL_SIZE = 16  # the classifier's input is MODEL_SIZE x MODEL_SIZE grey pixels


def prepare_dataset(path: Path) -> None:
    """Writes digits.parquet once: id, label, split ("train"/"test"), bytes (32x32 PNG)."""
    from PIL import Image
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    ids = np.arange(len(digits.images))
    _, test_ids = train_test_split(ids, test_size=0.3, random_state=0, stratify=digits.target)
    test = np.zeros(len(ids), dtype=bool)
    test[test_ids] = True
    pngs = []
    for image in digits.images:
        grey = np.round(image * 255.0 / 16.0).astype(np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(grey, mode="L").resize((32, 32), Image.NEAREST).save(buffer, format="PNG")
        pngs.append(buffer.getvalue())
    table = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "label": pa.array(digits.target, pa.int64()),
            "split": pa.array(np.where(test, "test", "train"), pa.large_string()),
            "bytes": pa.array(pngs, pa.large_binary()),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp)
    tmp.rename(path)


def pillow_features(png: bytes) -> np.ndarray:
    """The reference preprocessing, with Pillow: what the model is trained on."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB").resize((MODEL_SIZE, MODEL_SIZE), Image.BILINEAR)
    return np.asarray(image.convert("L"), dtype=np.float64).reshape(-1) / 255.0


def train_model(data: Path, model_path: Path) -> None:
    """Trains an SVM on the training split (features from Pillow) and pickles it."""
    from sklearn.svm import SVC

    table = pq.read_table(data, columns=["label", "split", "bytes"]).to_pydict()
    rows = [i for i, s in enumerate(table["split"]) if s == "train"]
    features = np.stack([pillow_features(table["bytes"][i]) for i in rows])
    labels = np.array([table["label"][i] for i in rows])
    model = SVC(gamma="scale", C=10.0).fit(features, labels)
    tmp = model_path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(model))
    tmp.rename(model_path)


@ketch.cls(return_dtype=ketch.DataType.int64(), batch_size=128, concurrency=2)
class DigitClassifier:
    """Stateful UDF: loads the model once per instance, then classifies batches of images."""

    def __init__(self, model_path: str) -> None:
        with open(model_path, "rb") as f:
            self.model = pickle.load(f)

    def __call__(self, images: ketch.Series) -> np.ndarray:
        pixels = images.to_numpy()  # (N, 16, 16, 3) uint8, a view of the column's buffer
        # Pillow's RGB → L transform (ITU-R 601-2 luma, fixed point), then scale to [0, 1].
        rgb = pixels.astype(np.int64)
        grey = (rgb[..., 0] * 19595 + rgb[..., 1] * 38470 + rgb[..., 2] * 7471 + 0x8000) >> 16
        return self.model.predict(grey.reshape(len(pixels), -1) / 255.0)


def main() -> int:
    data = CACHE / "digits.parquet"
    model_path = CACHE / "digits_svm.pkl"
    if not data.exists():
        print(f"preparing {data} from scikit-learn's bundled digits ...")
        prepare_dataset(data)
    if not model_path.exists():
        print(f"training the classifier on the training split -> {model_path} ...")
        train_model(data, model_path)

    df = ketch.read_parquet(str(data))
    df = df.with_column("image", col("bytes").image.decode(mode="RGB"))
    df = df.with_column("model_input", col("image").image.resize(MODEL_SIZE, MODEL_SIZE))
    df = df.with_column("prediction", DigitClassifier(str(model_path))(col("model_input")))
    df = df.exclude("bytes", "image", "model_input")

    print("\n=== Plan ===")
    df.explain(show_all=True)

    out_dir = CACHE / "predictions"
    start = time.perf_counter()
    written = df.write_parquet(str(out_dir), write_mode="overwrite")
    elapsed = time.perf_counter() - start

    results = ketch.read_parquet(str(out_dir)).where(col("split") == "test")
    held_out = results.select("label", "prediction").to_pydict()
    total_rows = ketch.read_parquet(str(out_dir)).count_rows()
    labels = np.array(held_out["label"])
    predictions = np.array(held_out["prediction"])
    accuracy = float((labels == predictions).mean())

    print("=== Result ===")
    print(f"wrote {written.to_pydict()['path']}")
    print(f"rows: {total_rows}, time: {elapsed:.3f} s, throughput: {total_rows / elapsed:,.0f} rows/s")
    print(f"held-out accuracy: {accuracy:.4f} on {len(labels)} test images")
    if accuracy < 0.90:
        print("FAILED: accuracy below 0.90", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
