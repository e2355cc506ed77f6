"""The provider interface (Daft's ``daft.ai.provider``): each AI function asks its provider for a
descriptor of the model it will run; descriptors are picklable (they travel to worker processes
and Ray actors) and print without credentials."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["Descriptor", "Provider", "load_provider", "local_model_dir"]

PROVIDERS = ("openai", "sentence_transformers", "transformers")


class Descriptor:
    """A serializable factory for one model: ``instantiate()`` loads it (once per UDF instance);
    ``udf_options()`` says how the engine should run it; ``__repr__`` names provider and model only."""

    provider: str
    model: str

    def instantiate(self) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(provider={self.provider!r}, model={self.model!r})"


class Provider:
    """A source of models. Methods a provider does not support raise ``NotImplementedError``
    naming the provider and the function."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def _unsupported(self, function: str) -> NotImplementedError:
        return NotImplementedError(f"provider '{self._name}' does not support {function}")

    def get_text_embedder(
        self, model: str | None = None, dimensions: int | None = None, **options: Any
    ) -> Any:
        raise self._unsupported("embed_text")

    def get_image_embedder(self, model: str | None = None, **options: Any) -> Any:
        raise self._unsupported("embed_image")

    def get_text_classifier(self, model: str | None = None, **options: Any) -> Any:
        raise self._unsupported("classify_text")

    def get_image_classifier(self, model: str | None = None, **options: Any) -> Any:
        raise self._unsupported("classify_image")

    def get_prompter(
        self,
        model: str | None = None,
        return_format: Any = None,
        system_message: str | None = None,
        **options: Any,
    ) -> Any:
        raise self._unsupported("prompt")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self._name!r})"


def load_provider(provider: str, name: str | None = None, **options: Any) -> Provider:
    """The provider called `provider`: "transformers" / "sentence_transformers" (local model
    directories) or "openai" (``base_url``, ``api_key``, ``timeout`` in `options`). ValueError
    for another name."""
    from ketch._optional import require

    if provider in ("transformers", "sentence_transformers"):
        require(provider, f"The {provider!r} provider")
        require("torch", f"The {provider!r} provider")
        from ketch.ai.transformers_provider import TransformersProvider

        return TransformersProvider(name or provider, **options)
    if provider == "openai":
        require("openai", "The 'openai' provider")
        from ketch.ai.openai_provider import OpenAIProvider

        return OpenAIProvider(name or provider, **options)
    raise ValueError(f"unknown provider {provider!r}; Ketch has {', '.join(repr(p) for p in PROVIDERS)}")


def local_model_dir(model: str | None, provider: str, function: str) -> str:
    """The absolute path of a local model directory, checked at plan time: Ketch never downloads
    from a model hub. ValueError when `model` is None, is not an existing directory (a hub name
    such as "sentence-transformers/all-MiniLM-L6-v2"), or holds no ``config.json``."""
    if model is None:
        raise ValueError(
            f"{function}: provider '{provider}' needs model=<path of a local model directory> "
            "(Ketch never downloads models from a hub; save one with save_pretrained and pass its path)"
        )
    if not isinstance(model, str | Path):
        raise TypeError(f"{function}: model must be a path (str), got {type(model).__name__}")
    path = Path(model).expanduser()
    if not path.is_dir():
        raise ValueError(
            f"{function}: model {str(model)!r} is not a local directory; provider '{provider}' loads models "
            "from a path only (no model hub is reached: download the model once, save_pretrained, and "
            "pass that directory)"
        )
    if not (path / "config.json").is_file():
        raise ValueError(
            f"{function}: {str(path)!r} is not a transformers model directory (it has no config.json)"
        )
    return str(path.resolve())
