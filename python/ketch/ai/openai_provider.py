"""The ``"openai"`` provider: the OpenAI-compatible HTTP API through the ``openai`` client, for
OpenAI itself or any compatible server (vLLM, llama.cpp, LM Studio, ... with ``base_url``).

Retries are the engine's: the client makes one attempt (``max_retries=0``); a 429 that carries
``Retry-After`` becomes :class:`ketch.errors.RetryAfterError`, so the UDF runtime waits that long
before its next attempt (``max_retries``, default 3). The API key comes from ``api_key=`` or
``OPENAI_API_KEY`` and is never printed: descriptors and providers show ``'***'``, and error
messages are scrubbed of it."""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ketch.ai.messages import ContentParts
from ketch.ai.provider import Descriptor, Provider
from ketch.ai.utils import Secret, UDFOptions, raise_retry_after_from_response

__all__ = ["OpenAIProvider"]

_log = logging.getLogger("ketch.ai")

DEFAULT_TEXT_EMBEDDER = "text-embedding-3-small"
DEFAULT_PROMPTER_MODEL = "gpt-4o-mini"
# Output sizes of OpenAI's embedding models (what Daft's provider knows).
KNOWN_DIMENSIONS = {
    "text-embedding-ada-002": 1536,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
}
_UDF_KEYS = ("batch_size", "max_retries", "on_error", "concurrency")


@dataclass(repr=False)
class ClientConfig:
    base_url: str | None
    api_key: Secret
    timeout: float | None
    organization: str | None = None

    def client(self) -> Any:
        import openai

        return openai.OpenAI(
            base_url=self.base_url,
            api_key=self.api_key.value() or "unused",  # a local server may need none
            organization=self.organization,
            timeout=self.timeout if self.timeout is not None else 600.0,
            max_retries=0,
        )

    def __repr__(self) -> str:
        return f"ClientConfig(base_url={self.base_url!r}, api_key={self.api_key!r})"


def _scrub(exc: BaseException, config: ClientConfig) -> BaseException:
    """`exc` with the API key removed from its message (a server may echo it)."""
    key = config.api_key.value()
    if key and key in str(exc):
        return (
            type(exc)(str(exc).replace(key, "***"))
            if _simple_exception(exc)
            else RuntimeError(str(exc).replace(key, "***"))
        )
    return exc


def _simple_exception(exc: BaseException) -> bool:
    try:
        type(exc)("probe")
    except Exception:  # noqa: BLE001
        return False
    return True


def _call(config: ClientConfig, fn: Any) -> Any:
    """`fn()` with the client's errors mapped: 429 with Retry-After → RetryAfterError."""
    import openai

    try:
        return fn()
    except openai.RateLimitError as exc:
        raise_retry_after_from_response(getattr(exc, "response", None), _scrub(exc, config))  # type: ignore[arg-type]
    except openai.APIError as exc:
        scrubbed = _scrub(exc, config)
        if scrubbed is exc:
            raise
        raise scrubbed from None


def _udf_options(options: dict[str, Any], batch_size: int | None, concurrency: int | None) -> UDFOptions:
    out = UDFOptions(concurrency=concurrency, batch_size=batch_size, max_retries=3)
    for key in _UDF_KEYS:
        if key in options:
            setattr(out, key, options[key])
    return out


@dataclass(repr=False)
class TextEmbedderDescriptor(Descriptor):
    provider: str
    model: str
    client_config: ClientConfig
    dimensions: int | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.dimensions is not None and (not isinstance(self.dimensions, int) or self.dimensions <= 0):
            raise ValueError(f"embed_text: dimensions must be a positive int, got {self.dimensions!r}")
        if self.dimensions is not None:
            self.size = self.dimensions
        elif self.model in KNOWN_DIMENSIONS and self.client_config.base_url is None:
            self.size = KNOWN_DIMENSIONS[self.model]
        else:
            # An OpenAI-compatible server: one request tells the size (as Daft does).
            try:
                response = _call(
                    self.client_config,
                    lambda: self.client_config.client().embeddings.create(
                        input="dimension probe", model=self.model, encoding_format="float"
                    ),
                )
                self.size = len(response.data[0].embedding)
            except Exception as exc:
                raise ValueError(
                    f"embed_text: could not ask {self.client_config.base_url or 'the OpenAI API'} "
                    "for the size of "
                    f"model {self.model!r} ({type(exc).__name__}: {_scrub(exc, self.client_config)}); pass "
                    "dimensions=... or check the server"
                ) from None

    def udf_options(self) -> UDFOptions:
        return _udf_options(self.options, 64, None)

    def instantiate(self) -> TextEmbedder:
        return TextEmbedder(self)


class TextEmbedder:
    def __init__(self, descriptor: TextEmbedderDescriptor) -> None:
        self.descriptor = descriptor
        self.client = descriptor.client_config.client()
        self.send_dimensions = descriptor.dimensions is not None and bool(
            descriptor.options.get("supports_overriding_dimensions", descriptor.model in KNOWN_DIMENSIONS)
        )

    def embed_text(self, texts: list[str]) -> np.ndarray:
        """(len(texts), size) float32; one request for the batch. ValueError when the server returns
        another number of embeddings or another size."""
        d = self.descriptor
        extra = {"dimensions": d.dimensions} if self.send_dimensions else {}
        response = _call(
            d.client_config,
            lambda: self.client.embeddings.create(
                input=texts, model=d.model, encoding_format="float", **extra
            ),
        )
        data = sorted(response.data, key=lambda e: e.index)
        if len(data) != len(texts):
            raise ValueError(
                f"embed_text: provider '{d.provider}' (model {d.model!r}) returned {len(data)} "
                "embeddings for a "
                f"batch of {len(texts)} texts"
            )
        out = np.asarray([e.embedding for e in data], dtype=np.float32)
        if out.ndim != 2 or out.shape[1] != d.size:
            raise ValueError(
                f"embed_text: provider '{d.provider}' (model {d.model!r}) returned embeddings of "
                f"{out.shape[1] if out.ndim == 2 else 'ragged'} values; the column's type says {d.size}"
            )
        return out


@dataclass(repr=False)
class PrompterDescriptor(Descriptor):
    provider: str
    model: str
    client_config: ClientConfig
    return_format: Any = None
    system_message: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def udf_options(self) -> UDFOptions:
        return _udf_options(self.options, 64, None)

    def instantiate(self) -> Prompter:
        return Prompter(self)


class Prompter:
    """One request per row (Responses API by default, Chat Completions with
    ``use_chat_completions=True``), up to ``max_concurrency`` (default 16) in flight per batch.
    A row's messages become one user turn of content parts (text, images, files: see
    :mod:`ketch.ai.messages`), as Daft sends them. Other options (temperature,
    max_output_tokens, ...) pass to the request."""

    _OWN = {"use_chat_completions", "max_concurrency", "supports_overriding_dimensions", *_UDF_KEYS}

    def __init__(self, descriptor: PrompterDescriptor) -> None:
        self.d = descriptor
        self.client = descriptor.client_config.client()
        self.chat = bool(descriptor.options.get("use_chat_completions", False))
        self.concurrency = int(descriptor.options.get("max_concurrency", 16))
        self.extra = {k: v for k, v in descriptor.options.items() if k not in self._OWN}
        self.on_error = str(descriptor.options.get("on_error", "raise"))

    def _one(self, messages: list[Any]) -> Any:
        d = self.d
        try:
            user = ContentParts(self.chat).turn(messages)
        except (OSError, ValueError, TypeError) as exc:
            # A row whose media cannot be read: null under on_error="log"/"ignore", else an error.
            if self.on_error == "raise":
                raise
            if self.on_error == "log":
                _log.warning("prompt: a row's message could not be read (%s: %s); yielding null",
                             type(exc).__name__, exc)  # fmt: skip
            return None
        turns = [{"role": "system", "content": d.system_message}] if d.system_message else []
        turns.append(user)
        if self.chat:
            if d.return_format is not None:
                response = _call(
                    d.client_config,
                    lambda: self.client.chat.completions.parse(
                        model=d.model, messages=turns, response_format=d.return_format, **self.extra
                    ),
                )
                return response.choices[0].message.parsed.model_dump()
            response = _call(
                d.client_config,
                lambda: self.client.chat.completions.create(model=d.model, messages=turns, **self.extra),
            )
            return response.choices[0].message.content
        if d.return_format is not None:
            response = _call(
                d.client_config,
                lambda: self.client.responses.parse(
                    model=d.model, input=turns, text_format=d.return_format, **self.extra
                ),
            )
            return response.output_parsed.model_dump()
        response = _call(
            d.client_config, lambda: self.client.responses.create(model=d.model, input=turns, **self.extra)
        )
        return response.output_text

    def prompt_batch(self, rows: list[list[str]]) -> list[Any]:
        if len(rows) <= 1 or self.concurrency <= 1:
            return [self._one(r) for r in rows]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(rows))) as pool:
            return list(pool.map(self._one, rows))


class OpenAIProvider(Provider):
    """``base_url`` (None: OpenAI's), ``api_key`` (None: ``OPENAI_API_KEY``), ``timeout`` (seconds
    per request, default 600), ``organization``."""

    def __init__(
        self,
        name: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        organization: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(name)
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._config = ClientConfig(base_url, Secret(key), timeout, organization)
        self._options = options

    def _config_with(self, options: dict[str, Any]) -> tuple[ClientConfig, dict[str, Any]]:
        options = {**self._options, **options}
        config = self._config
        if any(k in options for k in ("base_url", "api_key", "timeout")):
            key = options.pop("api_key", None)
            config = ClientConfig(
                options.pop("base_url", config.base_url),
                Secret(key) if key is not None else config.api_key,
                options.pop("timeout", config.timeout),
                config.organization,
            )
        return config, options

    def get_text_embedder(
        self, model: str | None = None, dimensions: int | None = None, **options: Any
    ) -> Any:
        config, options = self._config_with(options)
        return TextEmbedderDescriptor(self.name, model or DEFAULT_TEXT_EMBEDDER, config, dimensions, options)

    def get_prompter(
        self,
        model: str | None = None,
        return_format: Any = None,
        system_message: str | None = None,
        **options: Any,
    ) -> Any:
        config, options = self._config_with(options)
        return PrompterDescriptor(
            self.name, model or DEFAULT_PROMPTER_MODEL, config, return_format, system_message, options
        )

    def __repr__(self) -> str:
        config = self._config
        return f"OpenAIProvider(name={self.name!r}, base_url={config.base_url!r}, api_key={config.api_key!r})"
