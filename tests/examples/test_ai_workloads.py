"""The four AI workloads of examples/ai at their ``small`` size: each runs end to end and its
output is checked against an independent computation (the model or library called directly on the
same inputs), and one workload runs on the Ray runner with the native runner's answer."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ai"
sys.path.insert(0, str(EXAMPLES))

import audio_transcription  # noqa: E402
import document_embedding  # noqa: E402
import tiny_models  # noqa: E402
import video_object_detection  # noqa: E402
import workload_models  # noqa: E402

import image_classification  # noqa: E402
import ketch  # noqa: E402


class Rows:
    """What the workloads' UDF classes read from a batch: ``to_pylist()``."""

    def __init__(self, values: list[Any]) -> None:
        self.values = list(values)

    def to_pylist(self) -> list[Any]:
        return self.values


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ai_workloads")


def test_image_classification(data: Path, tmp_path: Path) -> None:
    inputs = image_classification.prepare(data, "small")
    result = image_classification.run(**inputs, out=str(tmp_path / "out"))
    out = ketch.read_parquet(str(tmp_path / "out")).to_pydict()
    files = sorted(Path(inputs["images"]).glob("*.jpg"))
    assert result["rows"] == len(files) == 48
    assert sorted(Path(p).name for p in out["path"]) == [f.name for f in files]
    assert set(out["label"]) <= set(tiny_models.IMAGE_LABELS)
    # The classifier on Ketch's 224x224 RGB images: the same labels when called directly.
    images = ketch.from_glob_path(f"{inputs['images']}/*.jpg").with_column(
        "image", ketch.col("path").url.download().image.decode(mode="RGB").image.resize(224, 224)
    )
    rows = images.select("path", "image").to_pydict()
    model = workload_models.ResNetClassifier(inputs["model_dir"])
    expected = dict(zip(rows["path"], model(Rows(rows["image"])), strict=True))
    assert {p: label for p, label in zip(out["path"], out["label"], strict=True)} == expected


def test_audio_transcription(data: Path, tmp_path: Path) -> None:
    import soundfile
    import soxr

    inputs = audio_transcription.prepare(data, "small")
    result = audio_transcription.run(**inputs, out=str(tmp_path / "out"))
    out = ketch.read_parquet(str(tmp_path / "out")).sort("path").to_pydict()
    clips = sorted(Path(inputs["clips"]).glob("*.flac"))
    assert result["rows"] == len(clips) == 16
    assert out["transcription_length"] == [len(t) for t in out["transcription"]]
    # The same models on soundfile + soxr's resampling (librosa's default) of the same clips.
    audio = []
    for clip in clips:
        samples, rate = soundfile.read(clip, dtype="float32")
        audio.append(soxr.resample(samples, rate, workload_models.SAMPLE_RATE, quality="HQ"))
    features = workload_models.FeatureExtractor(inputs["model_dir"])(Rows(audio))
    ids = workload_models.Transcriber(inputs["model_dir"])(Rows(features))
    texts = workload_models.Decoder(inputs["model_dir"])(Rows(ids))
    assert out["transcription"] == texts


def test_document_embedding(data: Path, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    inputs = document_embedding.prepare(data, "small")
    out_dir = str(tmp_path / "out.lance")
    result = document_embedding.run(**inputs, out=out_dir)
    out = ketch.read_lance(out_dir).to_pydict()
    assert result["rows"] == len(out["chunk"]) > 12
    assert all(len(c.split()) <= document_embedding.CHUNK_WORDS for c in out["chunk"])
    # Every word of every page is in exactly one chunk, in order.
    pages = (
        ketch.from_glob_path(f"{inputs['pdfs']}/*.pdf")
        .select("path", ketch.functions.pdf_text(ketch.col("path").url.to_file()).alias("pages"))
        .to_pydict()
    )
    words = sum(len((p["text"] or "").split()) for doc in pages["pages"] for p in doc)
    assert sum(len(c.split()) for c in out["chunk"]) == words
    expected = SentenceTransformer(inputs["model_dir"], device="cpu").encode(
        out["chunk"], convert_to_numpy=True
    )
    np.testing.assert_allclose(np.stack(out["embedding"]), expected, rtol=1e-4, atol=1e-5)
    import lance

    assert [i["name"] for i in lance.dataset(out_dir).list_indices()] == ["embedding_idx"]


def test_video_object_detection(data: Path, tmp_path: Path) -> None:
    from PIL import Image

    inputs = video_object_detection.prepare(data, "small")
    result = video_object_detection.run(**inputs, out=str(tmp_path / "out"))
    out = ketch.read_parquet(str(tmp_path / "out")).to_pydict()
    frames = ketch.read_video_frames(f"{inputs['videos']}/*.mp4", 64, 64).count_rows()
    assert result["rows"] == frames * workload_models.PER_FRAME == 4 * 48 * 2
    for feature, png in zip(out["features"], out["object"], strict=True):
        assert feature["label"] in tiny_models.OBJECT_LABELS
        x, y, w, h = feature["bbox"]
        size = Image.open(io.BytesIO(png)).size
        assert size == (min(w, 640 - x), min(h, 640 - y))


def _image_labels(inputs: dict[str, Any], out: str) -> dict[str, str]:
    image_classification.run(**inputs, out=out)
    rows = ketch.read_parquet(out).to_pydict()
    return dict(zip(rows["path"], rows["label"], strict=True))


def test_image_classification_on_ray_equals_native(on_ray: Any, data: Path, tmp_path: Path) -> None:
    import cloudpickle

    cloudpickle.register_pickle_by_value(image_classification)
    cloudpickle.register_pickle_by_value(workload_models)
    inputs = image_classification.prepare(data, "small")
    on = _image_labels(inputs, str(tmp_path / "ray"))
    ray_runner = ketch.runners._runner
    ketch.set_runner_native()
    try:
        native = _image_labels(inputs, str(tmp_path / "native"))
    finally:
        ketch.runners._runner = ray_runner
    assert on == native and len(on) == 48
