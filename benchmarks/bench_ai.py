"""The four AI workloads of the design articles (issue 27), side by side: Ketch and Daft, each
native and on a local 3-node Ray cluster (``python benchmarks/run.py ai --size small|medium``).

- q1 image classification: JPEGs → download → decode RGB → resize 224x224 → a ResNet (batches
  of 64) → labels → Parquet. check: the number of rows.
- q2 audio transcription: FLAC speech → resample to 16 kHz (Ketch's native kernel; Daft's
  ``resample``, soundfile + librosa's soxr) → Whisper features → Whisper generate (batches of 64)
  → decode → Parquet. check: total transcript characters (equal: both resample to the same samples).
- q3 document embedding: PDFs → page text (Ketch's native pdfium; Daft: a pypdfium2 UDF, Daft has
  no PDF functions) → chunks of up to 120 words (the same RE2 pattern) → ``embed_text`` with the
  transformers provider (both run sentence-transformers) → Lance. check: total words in chunks.
- q4 video object detection: ``read_video_frames`` 640x640 → a YOLOS detector (batches of 32) →
  the 2 best detections per frame, exploded → crop + PNG → Parquet. check: the number of objects.
  Daft runs one query per video (its read_video_frames over several files never finishes here).
- q5 few-shot prompting: ``prompt([shot, question])`` with the transformers provider over a 28M
  random Llama (``tiny_models.build_fewshot_lm``), 4 few-shot templates of about 450 tokens
  interleaved by row, 4 new tokens per reply, native only. Engines: Ketch (prefix bucketing, the
  default), ``ketch_nobucket`` (``prefix_bucketing=False``: the same engine, each row prefilling
  its whole prompt) and Daft (its transformers prompter, a text-generation pipeline per row).
  check: the rows answered; ``reply_chars`` shows Ketch's two modes give the same replies.

Ketch's cases run the examples' own ``pipeline()`` functions; models and data come from
``examples/ai`` (``tiny_models``: seeded random weights built from configs; ``workload_data``:
local inputs); the model classes are ``examples/ai/workload_models``,
wrapped by each engine's own class-UDF API (one instance, on the engine's threads: torch releases
the GIL), so every engine runs the same compute per row. Ray Data (``raydata``, on the same
cluster) runs Daft's ``ray_data_main.py`` of each workload ported the same way: the Python
libraries its users call for each step (below) and the same model classes in actor pools. Spark
(``spark``, PySpark 4 in local mode over all cores, Arrow-backed pandas UDFs; needs a Java 17
runtime, ``deps/apt-test.txt``) runs Daft's ``spark.ipynb`` of each workload ported the same way.
Sizes: ``small`` (seconds, CI smoke) and ``medium`` (``KETCH_BENCH_SIZE``)."""

from __future__ import annotations

import io
import os
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples" / "ai"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(EXAMPLES))
# Engines' UDF worker processes import the model classes by name too.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(EXAMPLES), os.environ.get("PYTHONPATH")) if p)
import bench_ray  # noqa: E402

SIZES = {"small": "small", "medium": "medium"}
SIZE_NAME = os.environ.get("KETCH_BENCH_SIZE", "small")
if SIZE_NAME not in SIZES:
    raise ValueError(f"KETCH_BENCH_SIZE={SIZE_NAME!r}: want one of {sorted(SIZES)}")
CHUNK_WORDS = 120
CHUNK_PATTERN = rf"(?:\S+\s+){{0,{CHUNK_WORDS - 1}}}\S+"
FRAME = 640
DATA_NAME = f"ai_{SIZE_NAME}"
# q5: prompts over few-shot prefixes (FEWSHOT_TEMPLATES of about 300 words, interleaved by row).
PROMPT_ROWS = {"small": 48, "medium": 960}
FEWSHOT_TEMPLATES = 4
PROMPT_BATCH = 16
PROMPT_TOKENS = 4


def _inputs(data_dir: str) -> dict[str, str]:
    import workload_data as wd

    root = Path(data_dir)
    sizes = wd.SIZES[SIZE_NAME]
    models = root / "models"
    return {
        "images": str(root / f"images_{sizes['images']}"),
        "clips": str(root / f"speech_{sizes['clips']}"),
        "pdfs": str(root / f"pdfs_{sizes['pdfs']}_4"),
        "videos": str(root / f"videos_{sizes['videos']}_4"),
        "resnet": str(models / "resnet"),
        "whisper": str(models / "whisper"),
        "embedder": str(models / "text_embedder"),
        "yolos": str(models / "yolos"),
        "fewshot_lm": str(models / "fewshot_lm"),
        "prompts": str(root / f"prompts_{PROMPT_ROWS[SIZE_NAME]}.parquet"),
        "out": str(root / "out"),
    }


def prepare(data_dir: str) -> None:
    """Inputs and tiny models, once per size (in Ketch's venv)."""
    import tiny_models
    import workload_data as wd

    root = Path(data_dir)
    sizes = wd.SIZES[SIZE_NAME]
    wd.make_images(root, sizes["images"])
    wd.make_speech(root, sizes["clips"])
    wd.make_pdfs(root, sizes["pdfs"])
    wd.make_videos(root, sizes["videos"])
    for build in (tiny_models.build_resnet, tiny_models.build_whisper, tiny_models.build_text_embedder,
                  tiny_models.build_yolos, tiny_models.build_fewshot_lm):  # fmt: skip
        build(root / "models")
    _write_prompts(root)


def _write_prompts(root: Path) -> None:
    """q5's input: row i asks question i after few-shot template i % FEWSHOT_TEMPLATES."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tiny_models import corpus

    path = root / f"prompts_{PROMPT_ROWS[SIZE_NAME]}.parquet"
    if path.exists():
        return
    lines = corpus()
    templates = [" ".join(lines[40 * t : 40 * t + 24]) for t in range(FEWSHOT_TEMPLATES)]
    rows = PROMPT_ROWS[SIZE_NAME]
    shots = [templates[i % FEWSHOT_TEMPLATES] for i in range(rows)]
    questions = [lines[(7 * i) % len(lines)][:80] for i in range(rows)]
    pq.write_table(pa.table({"id": list(range(rows)), "shot": shots, "question": questions}), path)


def session(data_dir: str) -> Any:
    """One local 3-node Ray cluster for the ``*_ray_*`` cases (bench_ray's)."""
    return bench_ray.local_cluster(bench_ray.NODES, bench_ray.CPUS_PER_NODE, bench_ray.OBJECT_STORE_MB)


def uses_session(engine: str) -> bool:
    """Only the Ray cases run on the cluster (the harness samples its nodes for those alone)."""
    return "ray" in engine


def setup(engine: str) -> None:
    """Imports and, for the Ray cases, joins the cluster (untimed)."""
    import cloudpickle
    import numpy  # noqa: F401
    import torch  # noqa: F401
    import transformers  # noqa: F401
    import workload_models

    # Worker processes and Ray workers cannot import examples/ai: the model classes travel by value.
    cloudpickle.register_pickle_by_value(workload_models)
    if engine.startswith("ketch"):
        import audio_transcription
        import document_embedding
        import video_object_detection

        import image_classification

        for module in (image_classification, audio_transcription, document_embedding, video_object_detection):
            cloudpickle.register_pickle_by_value(module)
    if engine.startswith("spark"):
        _spark_session().range(4).count()  # the JVM and a Python worker started (untimed)
        return
    if "_ray" in engine or engine.startswith("raydata"):
        if engine.startswith("raydata"):
            import ray.cloudpickle

            ray.cloudpickle.register_pickle_by_value(workload_models)
        bench_ray.setup(engine)
    elif engine.startswith("ketch"):
        import ketch

        ketch.from_pydict({"x": [1]}).collect()
    else:
        import daft  # noqa: F401


def _out(data_dir: str, engine: str) -> str:
    path = Path(_inputs(data_dir)["out"]) / engine
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


# -- Ketch -------------------------------------------------------------------------------------------
def _ketch_q1(data_dir: str, engine: str) -> dict:
    import image_classification
    import ketch

    i, out = _inputs(data_dir), _out(data_dir, engine)
    image_classification.pipeline(i["images"], i["resnet"]).write_parquet(out)
    rows = ketch.read_parquet(out).count_rows()
    return {"rows": rows, "check": float(rows)}


def _ketch_q2(data_dir: str, engine: str) -> dict:
    import audio_transcription

    import ketch

    i, out = _inputs(data_dir), _out(data_dir, engine)
    audio_transcription.pipeline(i["clips"], i["whisper"]).write_parquet(out)
    result = ketch.read_parquet(out).to_pydict()
    return {"rows": len(result["path"]), "check": float(sum(result["transcription_length"]))}


def _ketch_q3(data_dir: str, engine: str) -> dict:
    import document_embedding

    import ketch

    i, out = _inputs(data_dir), _out(data_dir, engine)
    document_embedding.pipeline(i["pdfs"], i["embedder"]).write_lance(out)
    chunks = ketch.read_lance(out).select("chunk").to_pydict()["chunk"]
    return {"rows": len(chunks), "check": float(sum(len(c.split()) for c in chunks))}


def _ketch_q4(data_dir: str, engine: str) -> dict:
    import video_object_detection

    import ketch

    i, out = _inputs(data_dir), _out(data_dir, engine)
    video_object_detection.pipeline(i["videos"], i["yolos"]).write_parquet(out)
    rows = ketch.read_parquet(out).count_rows()
    return {"rows": rows, "check": float(rows)}


def _ketch_q5(data_dir: str, engine: str, bucketing: bool = True) -> dict:
    import ketch
    from ketch import col
    from ketch.functions import prompt

    i = _inputs(data_dir)
    reply = prompt(
        [col("shot"), col("question")],
        provider="transformers",
        model=i["fewshot_lm"],
        max_new_tokens=PROMPT_TOKENS,
        batch_size=PROMPT_BATCH,
        prefix_bucketing=bucketing,
    )
    replies = ketch.read_parquet(i["prompts"]).select(reply.alias("reply")).to_pydict()["reply"]
    return _prompt_result(replies)


def _prompt_result(replies: list) -> dict:
    answered = [r for r in replies if r is not None]
    return {"rows": len(answered), "check": float(len(answered)), "reply_chars": sum(map(len, answered))}


def _ketch(q: int, data_dir: str, engine: str) -> dict:
    return [_ketch_q1, _ketch_q2, _ketch_q3, _ketch_q4, _ketch_q5][q - 1](data_dir, engine)


def run_ketch_q5(data_dir: str) -> dict:
    """Prompts over interleaved few-shot prefixes with prefix bucketing (the default)."""
    return _ketch(5, data_dir, "ketch_q5")


def run_ketch_nobucket_q5(data_dir: str) -> dict:
    """The same prompts with ``prefix_bucketing=False``: each row prefills its whole prompt."""
    return _ketch_q5(data_dir, "ketch_nobucket_q5", bucketing=False)


def run_ketch_q1(data_dir: str) -> dict:
    return _ketch(1, data_dir, "ketch_q1")


def run_ketch_q2(data_dir: str) -> dict:
    return _ketch(2, data_dir, "ketch_q2")


def run_ketch_q3(data_dir: str) -> dict:
    return _ketch(3, data_dir, "ketch_q3")


def run_ketch_q4(data_dir: str) -> dict:
    return _ketch(4, data_dir, "ketch_q4")


def run_ketch_ray_q1(data_dir: str) -> dict:
    return _ketch(1, data_dir, "ketch_ray_q1")


def run_ketch_ray_q2(data_dir: str) -> dict:
    return _ketch(2, data_dir, "ketch_ray_q2")


def run_ketch_ray_q3(data_dir: str) -> dict:
    return _ketch(3, data_dir, "ketch_ray_q3")


def run_ketch_ray_q4(data_dir: str) -> dict:
    return _ketch(4, data_dir, "ketch_ray_q4")


# -- Daft ---------------------------------------------------------------------------------------------
def _daft_q1(data_dir: str, engine: str) -> dict:
    import daft
    from daft import col
    from workload_models import ResNetClassifier

    @daft.cls(max_concurrency=1, use_process=False)
    class ResNet(ResNetClassifier):
        @daft.method.batch(return_dtype=daft.DataType.string(), batch_size=64)
        def __call__(self, images: Any) -> list[str]:
            return super().__call__(images)

    i, out = _inputs(data_dir), _out(data_dir, engine)
    df = daft.from_glob_path(f"{i['images']}/*.jpg")
    df = df.with_column("image", col("path").download().decode_image(mode="RGB").resize(224, 224))
    df.with_column("label", ResNet(i["resnet"])(col("image"))).select("path", "label").write_parquet(out)
    rows = daft.read_parquet(out).count_rows()
    return {"rows": rows, "check": float(rows)}


def _daft_q2(data_dir: str, engine: str) -> dict:
    import daft
    from daft import DataType, col
    from daft.functions import audio_file, resample
    from workload_models import SAMPLE_RATE, Decoder, FeatureExtractor, Transcriber

    @daft.cls(max_concurrency=1, use_process=False)
    class Features(FeatureExtractor):
        @daft.method.batch(return_dtype=DataType.tensor(DataType.float32()))
        def __call__(self, samples: Any) -> Any:
            return super().__call__(samples)

    @daft.cls(max_concurrency=1, use_process=False)
    class Transcribe(Transcriber):
        @daft.method.batch(return_dtype=DataType.list(DataType.int32()), batch_size=64)
        def __call__(self, features: Any) -> Any:
            return super().__call__(features)

    @daft.cls(max_concurrency=1, use_process=False)
    class Decode(Decoder):
        @daft.method.batch(return_dtype=DataType.string())
        def __call__(self, ids: Any) -> Any:
            return super().__call__(ids)

    i, out = _inputs(data_dir), _out(data_dir, engine)
    df = daft.from_glob_path(f"{i['clips']}/*.flac").select("path")
    df = df.with_column("resampled", resample(audio_file(col("path")), sample_rate=SAMPLE_RATE))
    df = df.with_column("features", Features(i["whisper"])(col("resampled")))
    df = df.with_column("token_ids", Transcribe(i["whisper"])(col("features")))
    df = df.with_column("transcription", Decode(i["whisper"])(col("token_ids")))
    df = df.with_column("transcription_length", col("transcription").length())
    df.exclude("token_ids", "features", "resampled").write_parquet(out)
    result = daft.read_parquet(out).to_pydict()
    return {"rows": len(result["path"]), "check": float(sum(result["transcription_length"]))}


def _pypdfium2_pages(data: bytes) -> list[dict]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(data)
    try:
        return [
            {"page_number": k + 1, "text": doc[k].get_textpage().get_text_range()} for k in range(len(doc))
        ]
    finally:
        doc.close()


def _daft_q3(data_dir: str, engine: str) -> dict:
    import daft
    from daft import DataType, col
    from daft.functions import embed_text

    page = DataType.struct({"page_number": DataType.int64(), "text": DataType.string()})

    @daft.func(return_dtype=DataType.list(page))
    def pdf_pages(data: bytes) -> list[dict]:
        return _pypdfium2_pages(data)

    i, out = _inputs(data_dir), _out(data_dir, engine)
    df = daft.from_glob_path(f"{i['pdfs']}/*.pdf").select("path")
    df = df.with_column("pages", pdf_pages(col("path").download())).explode("pages")
    df = df.with_columns({"page_number": col("pages")["page_number"], "page_text": col("pages")["text"]})
    df = df.with_column("chunk", col("page_text").regexp_extract_all(CHUNK_PATTERN)).explode("chunk")
    df = df.where(col("chunk").not_null())
    df = df.with_column("embedding", embed_text(col("chunk"), provider="transformers", model=i["embedder"]))
    df.select("path", "page_number", "chunk", "embedding").write_lance(out)
    chunks = daft.read_lance(out).select("chunk").to_pydict()["chunk"]
    return {"rows": len(chunks), "check": float(sum(len(c.split()) for c in chunks))}


def _daft_q4(data_dir: str, engine: str) -> dict:
    import daft
    from daft import DataType, col
    from workload_models import Detector

    detection = {
        "label": DataType.string(),
        "confidence": DataType.float32(),
        "bbox": DataType.list(DataType.int32()),
    }

    @daft.cls(max_concurrency=1, use_process=False)
    class Detect(Detector):
        @daft.method.batch(return_dtype=DataType.list(DataType.struct(detection)), batch_size=32)
        def __call__(self, frames: Any) -> Any:
            return super().__call__(frames)

    i, out = _inputs(data_dir), _out(data_dir, engine)
    # One query per video: Daft 0.7.26's read_video_frames over a glob, a list of files or a concat
    # of per-file scans never finishes on this machine (no CPU used, no error; one file works).
    detect = Detect(i["yolos"])
    for k, path in enumerate(sorted(Path(i["videos"]).glob("*.mp4"))):
        df = daft.read_video_frames(str(path), image_height=FRAME, image_width=FRAME)
        df = df.with_column("features", detect(col("data"))).explode("features")
        df = df.with_column("object", col("data").crop(col("features")["bbox"]).encode_image("png"))
        df.exclude("data").write_parquet(f"{out}/video{k:04d}")
    rows = daft.read_parquet(f"{out}/*/*.parquet").count_rows()
    return {"rows": rows, "check": float(rows)}


def _daft_q5(data_dir: str, engine: str) -> dict:
    import daft
    from daft import col
    from daft.functions import prompt

    i = _inputs(data_dir)
    reply = prompt([col("shot"), col("question")], provider="transformers", model=i["fewshot_lm"],
                   max_new_tokens=PROMPT_TOKENS, do_sample=False)  # fmt: skip
    replies = daft.read_parquet(i["prompts"]).select(reply.alias("reply")).to_pydict()["reply"]
    return _prompt_result(replies)


def _daft(q: int, data_dir: str, engine: str) -> dict:
    return [_daft_q1, _daft_q2, _daft_q3, _daft_q4, _daft_q5][q - 1](data_dir, engine)


def run_daft_q5(data_dir: str) -> dict:
    return _daft(5, data_dir, "daft_q5")


def run_daft_q1(data_dir: str) -> dict:
    return _daft(1, data_dir, "daft_q1")


def run_daft_q2(data_dir: str) -> dict:
    return _daft(2, data_dir, "daft_q2")


def run_daft_q3(data_dir: str) -> dict:
    return _daft(3, data_dir, "daft_q3")


def run_daft_q4(data_dir: str) -> dict:
    return _daft(4, data_dir, "daft_q4")


def run_daft_ray_q1(data_dir: str) -> dict:
    return _daft(1, data_dir, "daft_ray_q1")


def run_daft_ray_q2(data_dir: str) -> dict:
    return _daft(2, data_dir, "daft_ray_q2")


def run_daft_ray_q3(data_dir: str) -> dict:
    return _daft(3, data_dir, "daft_ray_q3")


def run_daft_ray_q4(data_dir: str) -> dict:
    return _daft(4, data_dir, "daft_ray_q4")


# -- Ray Data (Daft's ray_data_main.py of each workload, ported the same way) ------------------------
# Ray Data has no media kernels: each step is the Python library its users call (PIL, soundfile +
# librosa as Daft's resample, pypdfium2 as Daft's case, PyAV for frames: Ray's read_videos needs
# decord, which has no wheel here). The models run in actor pools of one actor per node, as Ketch's
# and Daft's class UDFs do on the cluster; like theirs, an actor holds no CPU (with one CPU per
# node, actors holding any would leave the read and map tasks around them unschedulable).
RAY_DATA_ACTOR = {"concurrency": bench_ray.NODES, "num_cpus": 0}


class _Column(list):
    """A batch column as the model classes take it (``to_pylist()``)."""

    def to_pylist(self) -> list:
        return list(self)


def _actor(model_class: Any, column: str, out: str, as_lists: bool = False) -> type:
    """Wraps a ``workload_models`` class as a Ray Data actor: batch[column] in, batch[out] added."""

    class Actor:
        def __init__(self, model_dir: str) -> None:
            self.model = model_class(model_dir)

        def __call__(self, batch: dict) -> dict:
            values = batch[column]
            values = [v.tolist() for v in values] if as_lists else list(values)
            result = self.model(_Column(values))
            batch[out] = result if not isinstance(result, list) or not result or not isinstance(
                result[0], list | dict) else _object_array(result)  # fmt: skip
            return batch

    Actor.__name__ = f"{model_class.__name__}Actor"
    return Actor


def _object_array(values: list) -> Any:
    import numpy as np

    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _raydata_q1(data_dir: str, engine: str) -> dict:
    import numpy as np
    import ray.data
    from PIL import Image
    from workload_models import ResNetClassifier

    def decode_resize(batch: dict) -> dict:
        batch["image"] = np.stack([
            np.asarray(Image.open(io.BytesIO(b)).convert("RGB").resize((224, 224), Image.BILINEAR))
            for b in batch["bytes"]
        ])  # fmt: skip
        del batch["bytes"]
        return batch

    i, out = _inputs(data_dir), _out(data_dir, engine)
    ds = ray.data.read_binary_files(i["images"], include_paths=True).map_batches(decode_resize)
    ds = ds.map_batches(_actor(ResNetClassifier, "image", "label"), fn_constructor_args=(i["resnet"],),
                        batch_size=64, **RAY_DATA_ACTOR)  # fmt: skip
    ds.select_columns(["path", "label"]).write_parquet(out)
    rows = ray.data.read_parquet(out).count()
    return {"rows": rows, "check": float(rows)}


def _raydata_q2(data_dir: str, engine: str) -> dict:
    import numpy as np
    import ray.data
    from workload_models import SAMPLE_RATE, Decoder, FeatureExtractor, Transcriber

    def resample(row: dict) -> dict:
        import librosa
        import soundfile

        data, rate = soundfile.read(io.BytesIO(row.pop("bytes")))
        if data.ndim > 1:
            data = data.mean(axis=1)
        row["resampled"] = librosa.resample(data, orig_sr=rate, target_sr=SAMPLE_RATE).astype(np.float32)
        return row

    i, out = _inputs(data_dir), _out(data_dir, engine)
    ds = ray.data.read_binary_files(i["clips"], include_paths=True).map(resample)
    whisper = (i["whisper"],)
    ds = ds.map_batches(_actor(FeatureExtractor, "resampled", "features"), fn_constructor_args=whisper,
                        **RAY_DATA_ACTOR)  # fmt: skip
    ds = ds.map_batches(_actor(Transcriber, "features", "token_ids"), fn_constructor_args=(i["whisper"],),
                        batch_size=64, **RAY_DATA_ACTOR)  # fmt: skip
    ds = ds.map_batches(_actor(Decoder, "token_ids", "transcription", as_lists=True),
                        fn_constructor_args=(i["whisper"],), **RAY_DATA_ACTOR)  # fmt: skip

    def length(batch: dict) -> dict:
        batch["transcription_length"] = np.array([len(t) for t in batch["transcription"]], dtype=np.int64)
        return batch

    ds.map_batches(length).drop_columns(["token_ids", "features", "resampled"]).write_parquet(out)
    result = ray.data.read_parquet(out).to_pandas()
    return {"rows": len(result), "check": float(result["transcription_length"].sum())}


def _raydata_q3(data_dir: str, engine: str) -> dict:
    import re

    import ray.data

    pattern = re.compile(CHUNK_PATTERN)

    def pages(row: dict) -> Any:
        for page in _pypdfium2_pages(row["bytes"]):
            if page["text"]:
                yield {"path": row["path"], "page_number": page["page_number"], "page_text": page["text"]}

    def chunks(row: dict) -> Any:
        for chunk in pattern.findall(row["page_text"]):
            yield {"path": row["path"], "page_number": row["page_number"], "chunk": chunk}

    class Embedder:
        def __init__(self, model_dir: str) -> None:
            from sentence_transformers import SentenceTransformer

            self.model = SentenceTransformer(model_dir, device="cpu")

        def __call__(self, batch: dict) -> dict:
            batch["embedding"] = self.model.encode(list(batch["chunk"]), batch_size=64)
            return batch

    i, out = _inputs(data_dir), _out(data_dir, engine)
    ds = ray.data.read_binary_files(i["pdfs"], include_paths=True).flat_map(pages).flat_map(chunks)
    ds = ds.map_batches(Embedder, fn_constructor_args=(i["embedder"],), batch_size=64, **RAY_DATA_ACTOR)
    # Ray 2.60's write_lance passes an argument pylance 14 does not take: the driver writes the
    # dataset's batches as they stream in (lance.write_dataset over a reader).
    import lance
    import pyarrow as pa

    batches = iter(ds.iter_batches(batch_format="pyarrow", batch_size=None))
    first = next(batches)
    lance.write_dataset(pa.RecordBatchReader.from_batches(first.schema, _chain(first, batches)), out)

    chunks_out = lance.dataset(out).to_table(columns=["chunk"]).column("chunk").to_pylist()
    return {"rows": len(chunks_out), "check": float(sum(len(c.split()) for c in chunks_out))}


def _chain(first: Any, rest: Any) -> Any:
    yield from (b for t in (first, *rest) for b in t.to_batches())


def _raydata_q4(data_dir: str, engine: str) -> dict:
    import ray.data
    from PIL import Image
    from workload_models import Detector

    def frames(row: dict) -> Any:
        import av

        with av.open(io.BytesIO(row["bytes"])) as container:
            for k, frame in enumerate(container.decode(video=0)):
                data = frame.to_ndarray(format="rgb24", width=FRAME, height=FRAME, interpolation="BILINEAR")
                yield {"path": row["path"], "frame_index": k, "data": data}

    def explode(row: dict) -> Any:
        for feature in row.pop("features"):
            yield {**row, "features": feature}

    def crop(row: dict) -> dict:
        x, y, w, h = (int(v) for v in row["features"]["bbox"])
        buf = io.BytesIO()
        Image.fromarray(row.pop("data")).crop((x, y, x + w, y + h)).save(buf, format="PNG")
        row["object"] = buf.getvalue()
        return row

    i, out = _inputs(data_dir), _out(data_dir, engine)
    ds = ray.data.read_binary_files(i["videos"], include_paths=True).flat_map(frames)
    ds = ds.map_batches(_actor(Detector, "data", "features"), fn_constructor_args=(i["yolos"],),
                        batch_size=32, **RAY_DATA_ACTOR)  # fmt: skip
    ds.flat_map(explode).map(crop).write_parquet(out)
    rows = ray.data.read_parquet(out).count()
    return {"rows": rows, "check": float(rows)}


def _raydata(q: int, data_dir: str, engine: str) -> dict:
    return [_raydata_q1, _raydata_q2, _raydata_q3, _raydata_q4][q - 1](data_dir, engine)


def run_raydata_q1(data_dir: str) -> dict:
    return _raydata(1, data_dir, "raydata_q1")


def run_raydata_q2(data_dir: str) -> dict:
    return _raydata(2, data_dir, "raydata_q2")


def run_raydata_q3(data_dir: str) -> dict:
    return _raydata(3, data_dir, "raydata_q3")


def run_raydata_q4(data_dir: str) -> dict:
    return _raydata(4, data_dir, "raydata_q4")


# -- Spark (Daft's spark.ipynb of each workload, ported the same way) -------------------------------
# PySpark in local mode with as many task slots as cores, Arrow-backed pandas UDFs; each model is
# loaded once per Python worker (the iterator-of-batches UDF form Spark documents for inference)
# and is the same ``workload_models`` class. Spark has no image, audio, PDF or video functions:
# the same Python libraries as the Ray Data cases do those steps. Spark cannot write Lance without
# a JVM connector that is not on PyPI: q3 writes Parquet (the embeddings are the same).
SPARK_BATCH = 64


def _spark() -> Any:
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate()


def _spark_session() -> Any:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers run this venv's Python

    return (
        SparkSession.builder.master(f"local[{os.cpu_count() or 1}]")
        .appName("ketch-bench-ai")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(SPARK_BATCH))
        .config("spark.driver.memory", "4g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(os.cpu_count() or 1))
        .getOrCreate()
    )


def _batch_udf(return_type: str, *args: Any) -> Any:
    """``pandas_udf`` over iterators of batches (``args``: None) or over whole columns (``args``:
    the argument types): the type hints Spark reads are set here, real objects rather than this
    module's postponed strings."""
    from collections.abc import Iterator

    import pandas as pd
    from pyspark.sql.functions import pandas_udf

    def wrap(fn: Any) -> Any:
        if args:
            fn.__annotations__ = dict(zip(fn.__code__.co_varnames, args, strict=False)) | {
                "return": pd.Series
            }
        else:
            fn.__annotations__ = {
                fn.__code__.co_varnames[0]: Iterator[pd.Series],
                "return": Iterator[pd.Series],
            }
        return pandas_udf(fn, return_type)

    return wrap


def _model_once(key: str, factory: Any) -> Any:
    """One model per Python worker process, kept across tasks (Spark reuses its workers; the
    UDF itself is unpickled anew for each task, so the cache lives in a module of its own)."""
    import types

    name = "_ketch_bench_spark_models"
    holder = sys.modules.setdefault(name, types.ModuleType(name))
    cache = holder.__dict__.setdefault("models", {})
    if key not in cache:
        cache[key] = factory()
    return cache[key]


def _spark_q1(data_dir: str, engine: str) -> dict:
    import numpy as np
    import pandas as pd
    from pyspark.sql.functions import col
    from workload_models import ResNetClassifier

    i, out = _inputs(data_dir), _out(data_dir, engine)
    model_dir = i["resnet"]

    @_batch_udf("string")
    def classify(batches: Any) -> Any:
        from PIL import Image

        model = _model_once("resnet", lambda: ResNetClassifier(model_dir))
        for content in batches:
            images = [np.asarray(Image.open(io.BytesIO(b)).convert("RGB").resize((224, 224), Image.BILINEAR))
                      for b in content]  # fmt: skip
            yield pd.Series(model(_Column(images)))

    df = _spark().read.format("binaryFile").option("pathGlobFilter", "*.jpg").load(i["images"])
    df.select("path", classify(col("content")).alias("label")).write.parquet(out)
    rows = _spark().read.parquet(out).count()
    return {"rows": rows, "check": float(rows)}


def _spark_q2(data_dir: str, engine: str) -> dict:
    import numpy as np
    import pandas as pd
    from pyspark.sql.functions import col, length
    from workload_models import SAMPLE_RATE, Decoder, FeatureExtractor, Transcriber

    i, out = _inputs(data_dir), _out(data_dir, engine)
    model_dir = i["whisper"]

    @_batch_udf("string")
    def transcribe(batches: Any) -> Any:
        import librosa
        import soundfile

        features = _model_once("features", lambda: FeatureExtractor(model_dir))
        transcriber = _model_once("whisper", lambda: Transcriber(model_dir))
        decoder = _model_once("decoder", lambda: Decoder(model_dir))
        for content in batches:
            samples = []
            for data in content:
                audio, rate = soundfile.read(io.BytesIO(data))
                audio = audio.mean(axis=1) if audio.ndim > 1 else audio
                samples.append(
                    librosa.resample(audio, orig_sr=rate, target_sr=SAMPLE_RATE).astype(np.float32)
                )
            ids = transcriber(_Column(features(_Column(samples))))
            yield pd.Series(decoder(_Column(ids)))

    df = _spark().read.format("binaryFile").option("pathGlobFilter", "*.flac").load(i["clips"])
    df = df.select("path", transcribe(col("content")).alias("transcription"))
    df.withColumn("transcription_length", length("transcription")).write.parquet(out)
    result = _spark().read.parquet(out).toPandas()
    return {"rows": len(result), "check": float(result["transcription_length"].sum())}


def _spark_q3(data_dir: str, engine: str) -> dict:
    import pandas as pd
    from pyspark.sql.functions import col, explode, expr, udf

    i, out = _inputs(data_dir), _out(data_dir, engine)
    model_dir = i["embedder"]

    @udf("array<struct<page_number: long, text: string>>")
    def pdf_pages(data: bytes) -> list[dict]:
        return _pypdfium2_pages(data)

    @_batch_udf("array<float>")
    def embed(batches: Any) -> Any:
        def load() -> Any:
            from sentence_transformers import SentenceTransformer

            return SentenceTransformer(model_dir, device="cpu")

        model = _model_once("embedder", load)
        for chunks in batches:
            yield pd.Series(list(model.encode(list(chunks), batch_size=64)))

    df = _spark().read.format("binaryFile").option("pathGlobFilter", "*.pdf").load(i["pdfs"])
    df = df.select("path", explode(pdf_pages(col("content"))).alias("page"))
    df = df.select("path", col("page.page_number").alias("page_number"), col("page.text").alias("page_text"))
    pattern = CHUNK_PATTERN.replace("\\", "\\\\")
    df = df.select(
        "path", "page_number", explode(expr(f"regexp_extract_all(page_text, '{pattern}', 0)")).alias("chunk")
    )
    df.select("path", "page_number", "chunk", embed(col("chunk")).alias("embedding")).write.parquet(out)
    chunks = [r["chunk"] for r in _spark().read.parquet(out).select("chunk").collect()]
    return {"rows": len(chunks), "check": float(sum(len(c.split()) for c in chunks))}


def _spark_q4(data_dir: str, engine: str) -> dict:
    import numpy as np
    import pandas as pd
    from pyspark.sql.functions import col, explode
    from workload_models import Detector

    i, out = _inputs(data_dir), _out(data_dir, engine)
    model_dir = i["yolos"]

    def frames(batches: Any) -> Any:
        import av

        for batch in batches:
            rows = []
            for path, data in zip(batch["path"], batch["content"], strict=True):
                with av.open(io.BytesIO(data)) as container:
                    for k, frame in enumerate(container.decode(video=0)):
                        image = frame.to_ndarray(
                            format="rgb24", width=FRAME, height=FRAME, interpolation="BILINEAR"
                        )
                        rows.append({"path": path, "frame_index": k, "data": image.tobytes()})
            yield pd.DataFrame(rows, columns=["path", "frame_index", "data"])

    detection = "array<struct<label: string, confidence: float, bbox: array<int>>>"

    @_batch_udf(detection)
    def detect(batches: Any) -> Any:
        model = _model_once("yolos", lambda: Detector(model_dir))
        for data in batches:
            images = [np.frombuffer(b, dtype=np.uint8).reshape(FRAME, FRAME, 3) for b in data]
            yield pd.Series(model(_Column(images)))

    @_batch_udf("binary", pd.Series, pd.DataFrame)
    def crop(data: pd.Series, features: pd.DataFrame) -> pd.Series:
        from PIL import Image

        out = []
        for b, bbox in zip(data, features["bbox"], strict=True):
            x, y, w, h = (int(v) for v in bbox)
            buf = io.BytesIO()
            image = Image.fromarray(np.frombuffer(b, dtype=np.uint8).reshape(FRAME, FRAME, 3))
            image.crop((x, y, x + w, y + h)).save(buf, format="PNG")
            out.append(buf.getvalue())
        return pd.Series(out)

    videos = _spark().read.format("binaryFile").option("pathGlobFilter", "*.mp4").load(i["videos"])
    df = videos.select("path", "content").mapInPandas(frames, "path string, frame_index long, data binary")
    df = df.withColumn("features", explode(detect(col("data"))))
    df.withColumn("object", crop(col("data"), col("features"))).drop("data").write.parquet(out)
    rows = _spark().read.parquet(out).count()
    return {"rows": rows, "check": float(rows)}


def _spark_case(q: int, data_dir: str) -> dict:
    return [_spark_q1, _spark_q2, _spark_q3, _spark_q4][q - 1](data_dir, f"spark_q{q}")


def run_spark_q1(data_dir: str) -> dict:
    return _spark_case(1, data_dir)


def run_spark_q2(data_dir: str) -> dict:
    return _spark_case(2, data_dir)


def run_spark_q3(data_dir: str) -> dict:
    return _spark_case(3, data_dir)


def run_spark_q4(data_dir: str) -> dict:
    return _spark_case(4, data_dir)
