"""Tiny local models for the AI examples, tests and benchmarks: no model hub is reachable here, so
each model is built from a config with seeded random weights and a tokenizer trained on local text
(the docstrings of Python's standard library), then saved with ``save_pretrained``. The compute per
row is what a real model of the same shape costs, and every engine runs the same model, so
comparisons are fair; the outputs are deterministic but meaningless (random weights).

    python examples/ai/tiny_models.py DIR    # writes DIR/text_embedder, DIR/nli_classifier, DIR/chat_lm

Each ``build_*`` returns the model's directory, reusing it when it is already complete."""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
HIDDEN = 64  # embedding size of the text models

# A chat template for the causal LM: role-tagged lines, then the assistant's turn.
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def corpus(limit: int = 20_000) -> list[str]:
    """Lines of English prose from the standard library's docstrings, in a fixed order."""
    import collections
    import functools
    import itertools
    import json as json_module
    import pathlib
    import statistics
    import string
    import textwrap

    lines: list[str] = []
    for module in (collections, functools, itertools, json_module, pathlib, statistics, string, textwrap, os):
        for _, member in sorted(inspect.getmembers(module), key=lambda kv: kv[0]):
            doc = inspect.getdoc(member) or ""
            lines.extend(line.strip() for line in doc.splitlines() if sum(c.isalpha() for c in line) > 20)
    return lines[:limit]


def _tokenizer(directory: Path, model_input_names: list[str] | None = None) -> object:
    """A WordPiece (BERT-style) fast tokenizer trained on corpus(), saved to `directory`."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(corpus(), trainers.WordPieceTrainer(vocab_size=3000, special_tokens=SPECIAL))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    fast = BertTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=128,
        **({"model_input_names": model_input_names} if model_input_names else {}),
    )
    fast.save_pretrained(directory)
    return fast


def _bert_config(vocab_size: int, **extra: object) -> object:
    from transformers import BertConfig

    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=2 * HIDDEN,
        max_position_embeddings=128,
        **extra,
    )


def _done(directory: Path) -> bool:
    return (directory / "config.json").exists() and (directory / "ketch_tiny_model.json").exists()


def _mark(directory: Path, kind: str) -> Path:
    (directory / "ketch_tiny_model.json").write_text(json.dumps({"kind": kind, "seed": 0}))
    return directory


def build_text_embedder(root: str | os.PathLike[str]) -> Path:
    """A 2-layer BERT (hidden size 64) with mean pooling, as a sentence-transformers directory
    (it is also a plain transformers directory): embeddings of 64 float32 values."""
    directory = Path(root) / "text_embedder"
    if _done(directory):
        return directory
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models
    from transformers import BertModel

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(directory)
    torch.manual_seed(0)
    BertModel(_bert_config(len(tokenizer))).save_pretrained(directory)
    word = models.Transformer(str(directory), max_seq_length=128)
    SentenceTransformer(modules=[word, models.Pooling(HIDDEN, "mean")], device="cpu").save(str(directory))
    return _mark(directory, "text_embedder")


def build_nli_classifier(root: str | os.PathLike[str]) -> Path:
    """A 2-layer BERT sequence classifier with NLI labels (contradiction / neutral / entailment):
    what transformers' zero-shot-classification pipeline needs."""
    directory = Path(root) / "nli_classifier"
    if _done(directory):
        return directory
    import torch
    from transformers import BertForSequenceClassification

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(directory)
    labels = {0: "contradiction", 1: "neutral", 2: "entailment"}
    config = _bert_config(
        len(tokenizer), num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()}
    )
    torch.manual_seed(1)
    BertForSequenceClassification(config).save_pretrained(directory)
    return _mark(directory, "nli_classifier")


def _build_llama(
    root: str | os.PathLike[str], name: str, hidden: int, layers: int, positions: int, seed: int
) -> Path:
    """A random Llama causal LM with the local tokenizer and a chat template, saved once."""
    directory = Path(root) / name
    if _done(directory):
        return directory
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(directory, ["input_ids", "attention_mask"])
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.model_max_length = max(tokenizer.model_max_length, positions)
    tokenizer.save_pretrained(directory)
    heads = max(2, hidden // 64)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden if hidden <= HIDDEN else int(2.6875 * hidden),
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=positions,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
    )
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(directory)
    return _mark(directory, name)


def build_chat_lm(root: str | os.PathLike[str]) -> Path:
    """A 2-layer Llama causal LM (hidden size 64) with a chat template: greedy generation gives
    deterministic (meaningless) text."""
    return _build_llama(root, "chat_lm", hidden=HIDDEN, layers=2, positions=256, seed=2)


def build_fewshot_lm(root: str | os.PathLike[str]) -> Path:
    """A larger random Llama chat LM for few-shot prompts (hidden size 512, 8 layers, 1,024
    positions, about 28M parameters): prefilling a prompt of a few hundred tokens costs far more
    than generating a few, as in real few-shot work, so reusing a shared prefix's KV cache
    shows (bench_ai q5)."""
    return _build_llama(root, "fewshot_lm", hidden=512, layers=8, positions=1024, seed=3)


def build_clip(root: str | os.PathLike[str]) -> Path:
    """A tiny CLIP (2-layer text and vision towers, 64x64 input in 16-pixel patches, projection
    32) with its processor: image embeddings of 32 values and zero-shot image classification."""
    directory = Path(root) / "clip"
    if _done(directory):
        return directory
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(directory, ["input_ids", "attention_mask"])
    text = {"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 2, "max_position_embeddings": 64, "pad_token_id": tokenizer.pad_token_id,
            "bos_token_id": tokenizer.cls_token_id, "eos_token_id": tokenizer.sep_token_id}  # fmt: skip
    vision = {"image_size": 64, "patch_size": 16, "hidden_size": 32, "intermediate_size": 64,
              "num_hidden_layers": 2, "num_attention_heads": 2}  # fmt: skip
    torch.manual_seed(3)
    CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=32)).save_pretrained(
        directory
    )
    images = CLIPImageProcessor(size={"shortest_edge": 64}, crop_size={"height": 64, "width": 64})
    CLIPProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(directory)
    return _mark(directory, "clip")


IMAGE_LABELS = [f"class_{i}" for i in range(10)]
OBJECT_LABELS = ["person", "car", "dog", "ball"]


def build_resnet(root: str | os.PathLike[str]) -> Path:
    """A small ResNet image classifier (transformers' ResNetForImageClassification; 4 stages of
    16-64 channels, ImageNet-style 224x224 input, 10 labels class_0..class_9): the shape of the
    design articles' resnet18 workload at a fraction of its compute."""
    directory = Path(root) / "resnet"
    if _done(directory):
        return directory
    import torch
    from transformers import ResNetConfig, ResNetForImageClassification

    directory.mkdir(parents=True, exist_ok=True)
    config = ResNetConfig(
        num_channels=3, embedding_size=16, hidden_sizes=[16, 32, 64, 64], depths=[1, 1, 1, 1],
        num_labels=len(IMAGE_LABELS), id2label=dict(enumerate(IMAGE_LABELS)),
        label2id={label: i for i, label in enumerate(IMAGE_LABELS)},
    )  # fmt: skip
    torch.manual_seed(6)
    ResNetForImageClassification(config).save_pretrained(directory)
    return _mark(directory, "resnet")


def build_whisper(root: str | os.PathLike[str]) -> Path:
    """A 2+2-layer Whisper (d_model 64, 80 mel bins) with its feature extractor and a WordPiece
    tokenizer for decoding; greedy generation of up to 16 tokens."""
    directory = Path(root) / "whisper"
    if _done(directory):
        return directory
    import torch
    from transformers import (
        GenerationConfig,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
    )

    directory.mkdir(parents=True, exist_ok=True)
    tok = _tokenizer(directory, ["input_ids", "attention_mask"])
    ids = {"decoder_start_token_id": tok.cls_token_id, "eos_token_id": tok.sep_token_id,
           "pad_token_id": tok.pad_token_id}  # fmt: skip
    config = WhisperConfig(
        vocab_size=len(tok), d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=80,
        max_source_positions=1500, max_target_positions=64, bos_token_id=tok.cls_token_id, **ids,
    )  # fmt: skip
    torch.manual_seed(4)
    model = WhisperForConditionalGeneration(config)
    model.generation_config = GenerationConfig(max_new_tokens=16, **ids)
    model.save_pretrained(directory)
    WhisperFeatureExtractor(feature_size=80).save_pretrained(directory)
    return _mark(directory, "whisper")


def build_yolos(root: str | os.PathLike[str]) -> Path:
    """A tiny YOLOS object detector (transformers' YolosForObjectDetection: a 2-layer ViT over
    128x128 input, 8 detection tokens, labels person / car / dog / ball) with its processor."""
    directory = Path(root) / "yolos"
    if _done(directory):
        return directory
    import torch
    from transformers import YolosConfig, YolosForObjectDetection, YolosImageProcessor

    directory.mkdir(parents=True, exist_ok=True)
    config = YolosConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        image_size=[128, 128], patch_size=16, num_detection_tokens=8, num_labels=len(OBJECT_LABELS),
        id2label=dict(enumerate(OBJECT_LABELS)), label2id={label: i for i, label in enumerate(OBJECT_LABELS)},
    )  # fmt: skip
    torch.manual_seed(5)
    YolosForObjectDetection(config).save_pretrained(directory)
    YolosImageProcessor(size={"shortest_edge": 128, "longest_edge": 128}).save_pretrained(directory)
    return _mark(directory, "yolos")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "tiny_models"
    builds = (build_text_embedder, build_nli_classifier, build_chat_lm, build_clip, build_resnet,
              build_whisper, build_yolos)  # fmt: skip
    for build in builds:
        print(build(out))
