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


def build_chat_lm(root: str | os.PathLike[str]) -> Path:
    """A 2-layer Llama causal LM (hidden size 64) with a chat template: greedy generation gives
    deterministic (meaningless) text."""
    directory = Path(root) / "chat_lm"
    if _done(directory):
        return directory
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(directory, ["input_ids", "attention_mask"])
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=HIDDEN,
        intermediate_size=2 * HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
    )
    torch.manual_seed(2)
    LlamaForCausalLM(config).save_pretrained(directory)
    return _mark(directory, "chat_lm")


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


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "tiny_models"
    for build in (build_text_embedder, build_nli_classifier, build_chat_lm, build_clip):
        print(build(out))
