"""The AI functions (``embed_text``, ``classify_text``, ``prompt``) over the transformers and
openai providers. Oracles: the libraries called directly on the same tiny models
(sentence-transformers' ``encode``, transformers' zero-shot pipeline and ``generate``); the openai
provider talks to a real HTTP server on loopback serving those models, with faults injected there."""

from __future__ import annotations

import io

import numpy as np
import pytest
from ai_fixtures import *  # noqa: F403 (the fixtures: models, served_models, server)
from openai_server import API_KEY
from pydantic import BaseModel

import ketch
from ketch import col
from ketch.ai import load_provider
from ketch.functions import classify_image, classify_text, embed_image, embed_text, prompt

TEXTS = ["hello world", None, "the path of a file", "iterators and generators"]


def _reference_embeddings(path: str, texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device="cpu").encode(texts, convert_to_numpy=True)


def _column(df: ketch.DataFrame, expr: ketch.Expression) -> list:
    return df.select(expr.alias("x")).to_pydict()["x"]


def _stack(values: list) -> np.ndarray:
    return np.stack([np.asarray(v, dtype=np.float32) for v in values if v is not None])


@pytest.mark.parametrize("provider", ["transformers", "sentence_transformers"])
def test_embed_text_with_a_local_model_equals_sentence_transformers(models, provider) -> None:
    df = ketch.from_pydict({"t": TEXTS})
    expr = embed_text(col("t"), provider=provider, model=models["embedder"])
    assert str(df.select(expr.alias("e")).schema()["e"].dtype) == "Embedding[Float32; 64]"
    out = _column(df, expr)
    assert out[1] is None
    expected = _reference_embeddings(models["embedder"], [t for t in TEXTS if t is not None])
    np.testing.assert_allclose(_stack(out), expected, rtol=1e-5, atol=1e-6)
    # dimensions truncates the model's output (Matryoshka-style, as sentence-transformers does).
    short = _column(df, embed_text(col("t"), provider=provider, model=models["embedder"], dimensions=16))
    np.testing.assert_allclose(_stack(short), expected[:, :16], rtol=1e-5, atol=1e-6)


def test_a_hub_name_or_a_non_model_directory_fails_at_plan_time(tmp_path) -> None:
    df = ketch.from_pydict({"t": ["x"]})
    with pytest.raises(ValueError, match=r"is not a local directory.*no model hub"):
        df.select(
            embed_text(col("t"), provider="transformers", model="sentence-transformers/all-MiniLM-L6-v2")
        )
    with pytest.raises(ValueError, match=r"needs model=<path of a local model directory>"):
        embed_text(col("t"))
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(ValueError, match=r"is not a transformers model directory \(it has no config.json\)"):
        embed_text(col("t"), model=str(tmp_path))
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        embed_text(col("t"), provider="nope", model=str(tmp_path))


def test_classify_text_equals_the_zero_shot_pipeline(models) -> None:
    from transformers import pipeline

    labels = ["animal", "computer", "weather"]
    out = _column(ketch.from_pydict({"t": TEXTS}), classify_text(col("t"), labels, model=models["nli"]))
    zero_shot = pipeline("zero-shot-classification", model=models["nli"], device="cpu")
    expected = [zero_shot(t, candidate_labels=labels)["labels"][0] for t in TEXTS if t is not None]
    assert out[1] is None
    assert [v for v in out if v is not None] == expected
    with pytest.raises(ValueError, match="not an NLI model"):
        classify_text(col("t"), labels, model=models["embedder"])


def test_prompt_with_a_local_causal_lm_equals_generate(models) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    df = ketch.from_pydict({"q": ["say hello", "name a file", None]})
    out = _column(
        df,
        prompt(
            col("q"), system_message="be brief", provider="transformers", model=models["lm"], max_new_tokens=6
        ),
    )
    tok = AutoTokenizer.from_pretrained(models["lm"])
    lm = AutoModelForCausalLM.from_pretrained(models["lm"])
    expected = []
    for q in ["say hello", "name a file"]:
        turns = [{"role": "system", "content": "be brief"}, {"role": "user", "content": q}]
        ids = tok.apply_chat_template(
            turns, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        gen = lm.generate(**ids, max_new_tokens=6, do_sample=False, pad_token_id=tok.pad_token_id)
        expected.append(tok.decode(gen[0][ids["input_ids"].shape[1] :], skip_special_tokens=True))
    assert out == [*expected, None]
    assert all(isinstance(s, str) and s for s in expected)


def _openai(server, **options):
    return load_provider("openai", base_url=server.base_url, api_key=API_KEY, **options)


def test_openai_embed_text_over_http_equals_the_local_model(models, server) -> None:
    df = ketch.from_pydict({"t": TEXTS})
    expr = embed_text(col("t"), provider=_openai(server), model="tiny-embedder", batch_size=2)
    # The size came from one probe request at plan time (an OpenAI-compatible server, no dimensions).
    assert str(df.select(expr.alias("e")).schema()["e"].dtype) == "Embedding[Float32; 64]"
    out = _column(df, expr)
    expected = _reference_embeddings(models["embedder"], [t for t in TEXTS if t is not None])
    np.testing.assert_allclose(_stack(out), expected, rtol=1e-5, atol=1e-6)
    assert out[1] is None
    # 3 texts in batches of at most 2 rows (one request each), plus the probe; every one with the key.
    assert server.count("/embeddings") >= 3
    assert {r["auth"] for r in server.log.requests} == {f"Bearer {API_KEY}"}


def test_a_429_with_retry_after_waits_then_retries(server) -> None:
    provider = _openai(server)
    expr = embed_text(col("t"), provider=provider, model="m", dimensions=64)
    server.faults.rate_limited = 1
    server.faults.retry_after = "1"
    out = _column(ketch.from_pydict({"t": ["a", "b"]}), expr)
    assert all(v is not None for v in out)
    statuses = [(r["status"], r["time"]) for r in server.log.requests if r["path"].endswith("/embeddings")]
    assert [s for s, _ in statuses] == [429, 200]
    # The second attempt came after the Retry-After the server asked for (the UDF runtime waited).
    assert statuses[1][1] - statuses[0][1] >= 0.95


def test_timeouts_and_a_server_dying_mid_batch(server) -> None:
    df = ketch.from_pydict({"t": ["a", "b", "c", "d"]})
    slow = _openai(server, timeout=0.3)
    server.faults.delay_s = 1.0
    with pytest.raises(Exception, match=r"embed_text.*(Timeout|timed out)"):
        _column(df, embed_text(col("t"), provider=slow, model="m", dimensions=64, max_retries=0))
    assert (
        _column(
            df,
            embed_text(col("t"), provider=slow, model="m", dimensions=64, max_retries=0, on_error="ignore"),
        )
        == [None] * 4
    )
    server.faults.delay_s = 0.0
    # A connection closed without a reply: the batch is retried and the rows come out whole.
    server.faults.drop = 1
    out = _column(df, embed_text(col("t"), provider=_openai(server), model="m", dimensions=64, batch_size=2))
    assert all(v is not None and len(v) == 64 for v in out)
    # More drops than retries: the query fails naming the UDF.
    server.faults.drop = 100
    with pytest.raises(Exception, match=r"embed_text.*(Connection|connection)"):
        _column(df, embed_text(col("t"), provider=_openai(server), model="m", dimensions=64, max_retries=1))


def test_a_provider_returning_the_wrong_count_or_size_is_named(server) -> None:
    df = ketch.from_pydict({"t": ["a", "b"]})
    server.faults.missing_embeddings = 1
    with pytest.raises(Exception, match=r"returned 1 embeddings for a batch of 2 texts"):
        _column(df, embed_text(col("t"), provider=_openai(server), model="m", dimensions=64, max_retries=0))
    server.faults.missing_embeddings = 0
    server.faults.extra_dims = 3
    with pytest.raises(Exception, match=r"returned embeddings of 67 values; the column's type says 64"):
        _column(df, embed_text(col("t"), provider=_openai(server), model="m", dimensions=64, max_retries=0))


class Verdict(BaseModel):
    summary: str
    words: int
    ok: bool


class _Echo:
    """A class UDF asking for prefix bucketing on its first argument; records the batches."""

    bucket_key_args = 1
    bucket_by_display = "the key column"
    batches: list[list] = []

    def __call__(self, key, value) -> list:
        _Echo.batches.append(key.to_pylist())
        return [f"{k}:{v}" for k, v in zip(key.to_pylist(), value.to_pylist(), strict=True)]


def test_prefix_bucketing_groups_a_morsels_rows_and_keeps_their_order() -> None:
    keys = ["b", "a", None, "b", "a", "c", "a", "b"]
    echo = ketch.cls(_Echo, return_dtype=ketch.DataType.string(), batch_size=3, use_process=False)
    _Echo.batches = []
    df = ketch.from_pydict({"k": keys, "v": list(range(len(keys)))})
    out = df.select(echo()(col("k"), col("v")).alias("r")).to_pydict()["r"]
    assert out == [f"{k}:{v}" for v, k in enumerate(keys)]
    # The calls saw the rows sorted by key (stable, nulls last), cut into batches of 3.
    assert _Echo.batches == [["a", "a", "a"], ["b", "b", "b"], ["c", None]]


def _prompt_runs(models, monkeypatch, **options) -> tuple[list, int]:
    from ketch.ai import transformers_provider

    reused = []
    generate = transformers_provider.Prompter._generate

    def counting(self, inputs, prefix_cache):
        reused.append(prefix_cache is not None)
        return generate(self, inputs, prefix_cache)

    monkeypatch.setattr(transformers_provider.Prompter, "_generate", counting)
    shots = [
        "Answer with one word. Examples: cat is an animal, rose is a plant, oak is a tree, iron is a metal.",
        "Reply in French, politely and briefly, to each question about files, paths and iterators below.",
    ]
    questions = [f"question {i}" for i in range(10)]
    df = ketch.from_pydict({"shot": [shots[i % 2] for i in range(10)] + [shots[0]], "q": [*questions, None]})
    expr = prompt([col("shot"), col("q")], provider="transformers", model=models["lm"], max_new_tokens=4,
                  batch_size=4, **options)  # fmt: skip
    plan = io.StringIO()
    df.select(expr.alias("x")).explain(show_all=True, file=plan)
    return _column(df, expr), sum(reused), plan.getvalue()


def test_prompt_prefix_bucketing_reuses_the_shared_prefix_and_keeps_the_answers(models, monkeypatch) -> None:
    flat, flat_reused, flat_plan = _prompt_runs(models, monkeypatch, prefix_bucketing=False)
    bucketed, reused, plan = _prompt_runs(models, monkeypatch)
    # Same answers in the same row order (the prefill of a shared prefix is the same computation).
    assert bucketed == flat and flat[-1] is None and all(isinstance(v, str) for v in flat[:-1])
    # Interleaved prefixes: no batch of 4 has two rows sharing one unless the engine buckets them
    # (sorted: 6 A rows, the null one last, then 5 B rows; batches of 4: AAAA, A A(null) B B, BBB:
    # runs of 4, 2 and 3 rows prefill from a cache, the lone A does not).
    assert flat_reused == 0
    assert reused == 9
    assert "Prefix bucketing = prompt: prompt prefix" in plan
    assert "Prefix bucketing" not in flat_plan


@pytest.mark.parametrize("chat", [False, True], ids=["responses", "chat_completions"])
def test_openai_prompt_text_and_structured_output(server, served_models, chat) -> None:
    df = ketch.from_pydict({"q": ["say hello", None, "name a file"]})
    provider = _openai(server)
    out = _column(
        df,
        prompt(col("q"), system_message="be brief", provider=provider, model="lm", use_chat_completions=chat),
    )
    expected = [
        served_models.generate([{"role": "system", "content": "be brief"}, {"role": "user", "content": q}])
        for q in ("say hello", "name a file")
    ]
    assert out == [expected[0], None, expected[1]]
    structured = prompt(col("q"), Verdict, provider=provider, model="lm", use_chat_completions=chat)
    schema = df.select(structured.alias("v")).schema()["v"].dtype
    assert schema == ketch.DataType.struct(
        {"summary": ketch.DataType.string(), "words": ketch.DataType.int64(), "ok": ketch.DataType.bool()}
    )
    rows = _column(df, structured)
    assert rows[1] is None
    assert rows[0] == {"summary": served_models.generate([{"role": "user", "content": "say hello"}]),
                       "words": len(rows[0]["summary"]), "ok": len(rows[0]["summary"]) % 2 == 0}  # fmt: skip


def _png_bytes(width: int, height: int) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    pixels = np.arange(width * height * 3, dtype=np.uint8).reshape(height, width, 3)
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize("chat", [False, True], ids=["responses", "chat_completions"])
def test_openai_prompt_sends_images_and_files_as_parts_of_one_turn(
    server, served_models, chat, tmp_path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("files and paths")
    pdf = b"%PDF-1.4 tiny"
    df = ketch.from_pydict({"q": ["describe"], "png": [_png_bytes(4, 3)], "pdf": [pdf], "path": [str(notes)]})
    messages = [col("q"), col("png").image.decode(), col("png"), col("path").url.to_file(), col("pdf")]
    before = len(server.log.requests)
    out = _column(df, prompt(messages, provider=_openai(server), model="lm", use_chat_completions=chat))
    # The server turns each part into text (images [image WxH], files [file N bytes]) for its LM.
    note = "<file_text_plain>files and paths</file_text_plain>"
    text = "\n".join(["describe", "[image 4x3]", "[image 4x3]", note, f"[file {len(pdf)} bytes]"])
    assert out == [served_models.generate([{"role": "user", "content": text}])]
    parts = [r["parts"] for r in server.log.requests[before:] if r.get("status") == 200]
    want = (["text", "image_url", "image_url", "text", "file"] if chat
            else ["input_text", "input_image", "input_image", "input_text", "input_file"])  # fmt: skip
    assert parts == [want]


def test_a_prompt_row_whose_file_cannot_be_read_is_null_or_an_error(server, tmp_path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("hello")
    df = ketch.from_pydict({"path": [str(good), str(tmp_path / "missing.txt")]})
    file = col("path").url.to_file()
    out = _column(df, prompt(file, provider=_openai(server), model="lm", on_error="ignore"))
    assert isinstance(out[0], str) and out[1] is None
    with pytest.raises(Exception, match="prompt") as info:
        _column(df, prompt(file, provider=_openai(server), model="lm", max_retries=0))
    assert "missing.txt" in str(info.value)


def test_the_transformers_prompter_joins_a_rows_messages_into_one_turn(models, tmp_path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    notes = tmp_path / "n.txt"
    notes.write_text("a note")
    df = ketch.from_pydict({"q": ["say hello"], "path": [str(notes)]})
    messages = [col("q"), col("path").url.to_file()]
    out = _column(df, prompt(messages, provider="transformers", model=models["lm"], max_new_tokens=5))
    tok = AutoTokenizer.from_pretrained(models["lm"])
    lm = AutoModelForCausalLM.from_pretrained(models["lm"])
    turn = [{"role": "user", "content": "say hello\n<file_text_plain>a note</file_text_plain>"}]
    ids = tok.apply_chat_template(turn, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    gen = lm.generate(**ids, max_new_tokens=5, do_sample=False, pad_token_id=tok.pad_token_id)
    assert out == [tok.decode(gen[0][ids["input_ids"].shape[1] :], skip_special_tokens=True)]
    with pytest.raises(Exception, match="takes text messages"):
        _column(df, prompt(ketch.lit(b"\x89PNG\r\n\x1a\n"), provider="transformers", model=models["lm"]))


def test_the_api_key_never_prints(server, monkeypatch) -> None:
    provider = _openai(server)
    df = ketch.from_pydict({"t": ["a"]})
    expr = embed_text(col("t"), provider=provider, model="m", dimensions=64)
    text = io.StringIO()
    df.select(expr).explain(show_all=True, file=text)
    for shown in (repr(provider), text.getvalue(), repr(expr)):
        assert API_KEY not in shown
    assert "'***'" in repr(provider)
    # A wrong key: the server refuses (401); the error names the UDF, not either key.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-should-not-print")
    wrong = load_provider("openai", base_url=server.base_url)
    with pytest.raises(Exception) as info:
        _column(df, embed_text(col("t"), provider=wrong, model="m", dimensions=64, max_retries=0))
    assert "embed_text" in str(info.value) and "401" in str(info.value)
    assert "sk-env-key-should-not-print" not in str(info.value) and API_KEY not in str(info.value)


def _png_column(images: list) -> ketch.DataFrame:
    """An Image[RGB] column decoded from PNGs of `images` (lossless, so the pixels are these)."""
    from PIL import Image

    def png(a: np.ndarray) -> bytes:
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, format="PNG")
        return buf.getvalue()

    data = [png(a) if a is not None else None for a in images]
    return ketch.from_pydict({"b": data}).select(col("b").image.decode(mode="RGB").alias("img"))


def _images() -> list:
    rng = np.random.default_rng(7)
    return [rng.integers(0, 256, size=(40 + 9 * i, 70 - 5 * i, 3), dtype=np.uint8) for i in range(4)]


def test_embed_image_equals_clip_image_features(models) -> None:
    import torch
    from PIL import Image
    from transformers import AutoModel, AutoProcessor

    images = _images()
    df = _png_column([*images, None])
    expr = embed_image(col("img"), model=models["clip"], batch_size=3)
    assert str(df.select(expr.alias("e")).schema()["e"].dtype) == "Embedding[Float32; 32]"
    out = _column(df, expr)
    assert out[-1] is None
    clip, processor = AutoModel.from_pretrained(models["clip"]), AutoProcessor.from_pretrained(models["clip"])
    pixels = processor(images=[Image.fromarray(i) for i in images], return_tensors="pt")["pixel_values"]
    with torch.inference_mode():
        features = clip.get_image_features(pixel_values=pixels)
    expected = (features if isinstance(features, torch.Tensor) else features.pooler_output).numpy()
    np.testing.assert_allclose(_stack(out), expected, rtol=1e-4, atol=1e-5)


def test_classify_image_equals_the_zero_shot_image_pipeline(models) -> None:
    from PIL import Image
    from transformers import pipeline

    images, labels = _images(), ["cat", "dog", "car"]
    df = _png_column(images)
    out = _column(df, classify_image(col("img"), labels, model=models["clip"]))
    zero_shot = pipeline("zero-shot-image-classification", model=models["clip"], device="cpu")
    expected = [max(zero_shot(Image.fromarray(i), candidate_labels=labels), key=lambda r: r["score"])["label"]
                for i in images]  # fmt: skip
    assert out == expected
