"""The ``"transformers"`` / ``"sentence_transformers"`` provider: models from local directories.
Text embedding runs sentence-transformers (mean pooling for a plain transformers model, as Daft's
provider does), classification transformers' zero-shot pipeline (an NLI model), prompting a causal
LM with its chat template (greedy decoding unless ``do_sample``)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ketch.ai.provider import Descriptor, Provider, local_model_dir
from ketch.ai.utils import UDFOptions, gpu_udf_options

__all__ = ["TransformersProvider"]

# transformers' lazy module loading is not thread-safe: instances load one at a time.
_LOADING = threading.Lock()
_UDF_KEYS = ("batch_size", "max_retries", "on_error", "concurrency", "num_gpus")


def _udf_options(options: dict[str, Any], batch_size: int) -> UDFOptions:
    out = gpu_udf_options()
    out.batch_size = batch_size
    for key in _UDF_KEYS:
        if key in options:
            setattr(out, key, options[key])
    return out


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _hidden_size(path: str) -> int:
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(path)
    size = getattr(config, "hidden_size", None) or getattr(config, "projection_dim", None)
    if not isinstance(size, int):
        raise ValueError(f"cannot tell the embedding size of the model at {path!r}; pass dimensions=")
    return size


@dataclass(repr=False)
class TextEmbedderDescriptor(Descriptor):
    provider: str
    model: str
    dimensions: int | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        size = _hidden_size(self.model)
        if self.dimensions is not None:
            if not isinstance(self.dimensions, int) or self.dimensions <= 0:
                raise ValueError(f"embed_text: dimensions must be a positive int, got {self.dimensions!r}")
            if self.dimensions > size:
                raise ValueError(
                    f"embed_text: dimensions={self.dimensions} exceeds the model's output size {size} "
                    f"({self.model!r})"
                )
        self.size = self.dimensions or size

    def udf_options(self) -> UDFOptions:
        return _udf_options(self.options, 64)

    def instantiate(self) -> TextEmbedder:
        return TextEmbedder(self.model, self.dimensions)


class TextEmbedder:
    def __init__(self, path: str, dimensions: int | None) -> None:
        from sentence_transformers import SentenceTransformer

        with _LOADING:
            self.model = SentenceTransformer(path, device=_device(), backend="torch")
        self.model.eval()
        self.dimensions = dimensions

    def embed_text(self, texts: list[str]) -> np.ndarray:
        """(len(texts), size) float32."""
        import torch

        with torch.inference_mode():
            out = self.model.encode(texts, convert_to_numpy=True, truncate_dim=self.dimensions)
        return np.asarray(out, dtype=np.float32)


def _images(images: list[np.ndarray]) -> list[Any]:
    """PIL images (RGB) of HxWxC / HxW uint8 arrays, as the processors take them."""
    from PIL import Image

    out = []
    for image in images:
        array = np.asarray(image)
        if array.ndim == 3 and array.shape[2] == 1:
            array = array[:, :, 0]
        out.append(Image.fromarray(array).convert("RGB"))
    return out


@dataclass(repr=False)
class ImageEmbedderDescriptor(Descriptor):
    provider: str
    model: str
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(self.model)
        size = getattr(config, "projection_dim", None) or getattr(config, "hidden_size", None)
        if not isinstance(size, int):
            raise ValueError(f"embed_image: cannot tell the embedding size of the model at {self.model!r}")
        self.size = size

    def udf_options(self) -> UDFOptions:
        return _udf_options(self.options, 16)

    def instantiate(self) -> ImageEmbedder:
        return ImageEmbedder(self.model)


class ImageEmbedder:
    """The model's image features (CLIP's ``get_image_features``: the projected pooled output)."""

    def __init__(self, path: str) -> None:
        from transformers import AutoModel, AutoProcessor

        with _LOADING:
            self.model = AutoModel.from_pretrained(path).to(_device())
            self.processor = AutoProcessor.from_pretrained(path)
        self.model.eval()

    def embed_image(self, images: list[np.ndarray]) -> np.ndarray:
        import torch

        pixels = self.processor(images=_images(images), return_tensors="pt")["pixel_values"].to(
            self.model.device
        )
        with torch.inference_mode():
            out = self.model.get_image_features(pixel_values=pixels)
        tensor = out if isinstance(out, torch.Tensor) else out.pooler_output
        return tensor.float().cpu().numpy()


@dataclass(repr=False)
class ImageClassifierDescriptor(Descriptor):
    provider: str
    model: str
    options: dict[str, Any] = field(default_factory=dict)

    def udf_options(self) -> UDFOptions:
        return _udf_options(self.options, 16)

    def instantiate(self) -> ImageClassifier:
        return ImageClassifier(self.model, self.options.get("batch_size"))


class ImageClassifier:
    def __init__(self, path: str, batch_size: int | None) -> None:
        from transformers import pipeline

        with _LOADING:
            self.pipeline = pipeline(task="zero-shot-image-classification", model=path, device=_device())
        self.batch_size = batch_size

    def classify_image(self, images: list[np.ndarray], labels: list[str]) -> list[str]:
        """The most probable label of each image (transformers' zero-shot image pipeline, CLIP)."""
        results = self.pipeline(_images(images), candidate_labels=labels, batch_size=self.batch_size or 1)
        return [max(r, key=lambda x: x["score"])["label"] for r in results]


@dataclass(repr=False)
class TextClassifierDescriptor(Descriptor):
    provider: str
    model: str
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from transformers import AutoConfig

        labels = {str(v).lower() for v in (AutoConfig.from_pretrained(self.model).id2label or {}).values()}
        if not any(label.startswith("entail") for label in labels):
            raise ValueError(
                f"classify_text: the model at {self.model!r} is not an NLI model "
                f"(its labels {sorted(labels)} "
                "have no 'entailment'): transformers' zero-shot classification needs one"
            )

    def udf_options(self) -> UDFOptions:
        return _udf_options(self.options, 64)

    def instantiate(self) -> TextClassifier:
        return TextClassifier(self.model, self.options.get("batch_size"))


class TextClassifier:
    def __init__(self, path: str, batch_size: int | None) -> None:
        from transformers import pipeline

        with _LOADING:
            self.pipeline = pipeline(task="zero-shot-classification", model=path, device=_device())
        self.batch_size = batch_size

    def classify_text(self, texts: list[str], labels: list[str]) -> list[str]:
        """The most probable label of each text (transformers' zero-shot pipeline)."""
        results = self.pipeline(texts, candidate_labels=labels, batch_size=self.batch_size or 1)
        if isinstance(results, dict):
            results = [results]
        return [r["labels"][0] for r in results]


@dataclass(repr=False)
class PrompterDescriptor(Descriptor):
    provider: str
    model: str
    system_message: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(self.model)
        if not any(a.endswith("ForCausalLM") for a in (config.architectures or [])):
            raise ValueError(f"prompt: the model at {self.model!r} is not a causal language model")

    def udf_options(self) -> UDFOptions:
        return _udf_options(self.options, 16)

    def instantiate(self) -> Prompter:
        return Prompter(self.model, self.system_message, self.options)


class Prompter:
    """Generates one reply per row: the chat template over [system, user messages], greedy
    decoding (``max_new_tokens`` default 64; generation options pass through)."""

    _GENERATE_KEYS = ("max_new_tokens", "do_sample", "temperature", "top_p", "top_k", "num_beams")

    def __init__(self, path: str, system_message: str | None, options: dict[str, Any]) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        with _LOADING:
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            self.model = AutoModelForCausalLM.from_pretrained(path).to(_device())
        self.model.eval()
        self.system_message = system_message
        self.generate = {"max_new_tokens": 64, "do_sample": False}
        self.generate.update({k: options[k] for k in self._GENERATE_KEYS if k in options})

    # Rows whose prompts share at least this many leading tokens reuse one KV cache of them.
    MIN_SHARED_PREFIX_TOKENS = 8

    def prompt_batch(self, rows: list[list[str]]) -> list[str]:
        """One reply per row. Consecutive rows whose prompts share a token prefix (the engine's
        prefix bucketing puts them next to each other) prefill that prefix once: its KV cache is
        computed one time and a copy continues each row (transformers' prompt-reuse recipe,
        ``past_key_values`` given to ``generate``), so only each row's own tokens are prefilled."""
        encoded = [self._encode(messages) for messages in rows]
        out: list[str] = []
        start = 0
        while start < len(rows):
            end, shared = self._shared_run(encoded, start)
            cache = self._prefix_cache(encoded[start]["input_ids"][:, :shared]) if end - start > 1 else None
            out.extend(self._generate(encoded[k], cache) for k in range(start, end))
            start = end
        return out

    def prompt(self, messages: list[str]) -> str:
        return self._generate(self._encode(messages), None)

    def _encode(self, messages: list[Any]) -> Any:
        # One user turn: the row's messages joined by newlines (Daft's transformers prompter).
        chat = [{"role": "system", "content": self.system_message}] if self.system_message else []
        chat.append({"role": "user", "content": "\n".join(_message_text(m) for m in messages)})
        return self.tokenizer.apply_chat_template(
            chat, add_generation_prompt=True, return_tensors="pt", return_dict=True
        ).to(self.model.device)

    def _shared_run(self, encoded: list[Any], start: int) -> tuple[int, int]:
        """The rows from `start` on that share a prefix of at least MIN_SHARED_PREFIX_TOKENS
        tokens with it (at least one token of each row left to prefill): (end, prefix length)."""
        first = encoded[start]["input_ids"][0]
        shared, end = first.shape[0] - 1, start + 1
        while end < len(encoded):
            ids = encoded[end]["input_ids"][0]
            n = min(shared, ids.shape[0] - 1)
            same = (first[:n] == ids[:n]).long()
            common = int(same.cumprod(0).sum()) if n > 0 else 0
            if common < self.MIN_SHARED_PREFIX_TOKENS:
                break
            shared, end = common, end + 1
        return end, shared

    def _prefix_cache(self, prefix_ids: Any) -> Any:
        import torch

        with torch.inference_mode():
            return self.model(input_ids=prefix_ids, use_cache=True).past_key_values

    def _generate(self, inputs: Any, prefix_cache: Any) -> str:
        import copy

        import torch

        extra = {"past_key_values": copy.deepcopy(prefix_cache)} if prefix_cache is not None else {}
        with torch.inference_mode():
            out = self.model.generate(
                **inputs, **self.generate, **extra, pad_token_id=self.tokenizer.pad_token_id
            )
        return self.tokenizer.decode(out[0][inputs["input_ids"].shape[1] :], skip_special_tokens=True)


_TEXT_ONLY = "prompt: the transformers provider takes text messages"


def _message_text(message: Any) -> str:
    """A prompt message as text: strings as they are; text files and UTF-8 bytes wrapped in
    ``<file_text_plain>`` tags. A language model here reads text only: TypeError otherwise."""
    from ketch.ai.messages import sniff_mime_type
    from ketch.file import File

    if isinstance(message, str):
        return message
    if isinstance(message, File):
        mime = message.mime_type()
        with message.open() as f:
            data = f.read()
    elif isinstance(message, bytes | bytearray | memoryview):
        data = bytes(message)
        mime = sniff_mime_type(data)
    else:
        raise TypeError(f"{_TEXT_ONLY}; got {type(message).__name__}")
    if mime.startswith("text/") or mime == "application/octet-stream":
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise TypeError(f"{_TEXT_ONLY}; got {mime} bytes") from None
        tag = "file_" + (mime if mime.startswith("text/") else "text/plain").split(";")[0].replace("/", "_")
        return f"<{tag}>{text}</{tag}>"
    raise TypeError(f"{_TEXT_ONLY}; got a {mime} message")


class TransformersProvider(Provider):
    """Local models. ``model`` is always a directory (a hub name fails at plan time)."""

    def __init__(self, name: str = "transformers", **options: Any) -> None:
        super().__init__(name)
        self._options = options

    def get_text_embedder(
        self, model: str | None = None, dimensions: int | None = None, **options: Any
    ) -> Any:
        path = local_model_dir(model, self.name, "embed_text")
        return TextEmbedderDescriptor(self.name, path, dimensions, {**self._options, **options})

    def get_image_embedder(self, model: str | None = None, **options: Any) -> Any:
        path = local_model_dir(model, self.name, "embed_image")
        return ImageEmbedderDescriptor(self.name, path, {**self._options, **options})

    def get_image_classifier(self, model: str | None = None, **options: Any) -> Any:
        path = local_model_dir(model, self.name, "classify_image")
        return ImageClassifierDescriptor(self.name, path, {**self._options, **options})

    def get_text_classifier(self, model: str | None = None, **options: Any) -> Any:
        path = local_model_dir(model, self.name, "classify_text")
        return TextClassifierDescriptor(self.name, path, {**self._options, **options})

    def get_prompter(
        self,
        model: str | None = None,
        return_format: Any = None,
        system_message: str | None = None,
        **options: Any,
    ) -> Any:
        if return_format is not None:
            raise NotImplementedError(
                f"provider '{self.name}': return_format (structured output) needs the 'openai' provider"
            )
        path = local_model_dir(model, self.name, "prompt")
        return PrompterDescriptor(self.name, path, system_message, {**self._options, **options})
