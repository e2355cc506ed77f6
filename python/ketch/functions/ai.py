"""Daft's AI functions (``daft.functions.ai``): ``embed_text``, ``embed_image``, ``classify_text``,
``classify_image`` and ``prompt``
over a provider's model, each a class UDF the planner sees (one model instance per UDF instance,
batches of rows, ``gpus`` placement on the Ray runner).

Providers: ``"transformers"`` / ``"sentence_transformers"`` (the default) run a model from a local
directory (``model`` is a path; a hub name fails at plan time, nothing is ever downloaded), and
``"openai"`` speaks the OpenAI-compatible HTTP API (``base_url=``, ``api_key=`` or
``OPENAI_API_KEY``; the key never appears in errors, ``explain`` or repr). A provider may also be
given as a :class:`ketch.ai.Provider` (``ketch.ai.load_provider("openai", base_url=...)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ketch.datatype import DataType
from ketch.expressions.expression import Expression, _expr

if TYPE_CHECKING:
    from ketch.ai.provider import Provider

__all__ = ["classify_image", "classify_text", "embed_image", "embed_text", "prompt"]


def _provider(provider: str | Provider | None, default: str) -> Provider:
    from ketch.ai.provider import Provider, load_provider

    if isinstance(provider, Provider):
        return provider
    return load_provider(provider if provider is not None else default)


def embed_text(
    text: Expression,
    *,
    provider: str | Provider | None = None,
    model: str | None = None,
    dimensions: int | None = None,
    **options: Any,
) -> Expression:
    """Embeds each string with the provider's model: ``Embedding[Float32; size]`` (size: the
    model's, or ``dimensions``, which truncates a local model's output and is sent to servers that
    take it). Options: ``batch_size`` (rows per model call; default 64), ``max_retries``,
    ``on_error`` ("raise" | "log" | "ignore"), ``concurrency``; the rest go to the provider.
    Null rows give null.

    Errors: at plan time ValueError for a model that is not a local directory (transformers) or a
    server that cannot tell the size (openai, without ``dimensions``); while running ValueError
    naming the provider, model and batch when the provider returns the wrong number of
    embeddings or the wrong size."""
    from ketch.ai.udfs import _TextEmbedding, ai_expression

    descriptor = _provider(provider, "transformers").get_text_embedder(model, dimensions, **options)
    dtype = DataType.embedding(DataType.float32(), descriptor.size)
    return ai_expression(_TextEmbedding, "embed_text", descriptor, dtype, [_expr(text)])


def embed_image(
    image: Expression,
    *,
    provider: str | Provider | None = None,
    model: str | None = None,
    **options: Any,
) -> Expression:
    """Embeds each image (an Image column, any size; decoded rows as HxWxC uint8) with a local
    vision model (CLIP's ``get_image_features``, its processor resizing): ``Embedding[Float32;
    size]`` with size the model's ``projection_dim``. Options as :func:`embed_text` (``batch_size``
    default 16). Null rows give null."""
    from ketch.ai.udfs import _ImageEmbedding, ai_expression

    descriptor = _provider(provider, "transformers").get_image_embedder(model, **options)
    dtype = DataType.embedding(DataType.float32(), descriptor.size)
    return ai_expression(_ImageEmbedding, "embed_image", descriptor, dtype, [_expr(image)])


def classify_image(
    image: Expression,
    labels: str | list[str],
    *,
    provider: str | Provider | None = None,
    model: str | None = None,
    **options: Any,
) -> Expression:
    """The most probable of ``labels`` for each image (String): transformers' zero-shot image
    classification pipeline over a local CLIP model. Options as :func:`embed_image`."""
    from ketch.ai.udfs import _ImageClassification, ai_expression

    label_list = [labels] if isinstance(labels, str) else list(labels)
    if not label_list or not all(isinstance(label, str) for label in label_list):
        raise ValueError(f"classify_image needs one or more string labels, got {labels!r}")
    descriptor = _provider(provider, "transformers").get_image_classifier(model, **options)
    return ai_expression(
        _ImageClassification, "classify_image", descriptor, DataType.string(), [_expr(image)], (label_list,)
    )


def classify_text(
    text: Expression,
    labels: str | list[str],
    *,
    provider: str | Provider | None = None,
    model: str | None = None,
    **options: Any,
) -> Expression:
    """The most probable of ``labels`` for each string (String): transformers' zero-shot
    classification pipeline over a local NLI model (labels contradiction / neutral / entailment).
    Options as :func:`embed_text`. ValueError at plan time for no labels or a model without an
    entailment label."""
    from ketch.ai.udfs import _TextClassification, ai_expression

    label_list = [labels] if isinstance(labels, str) else list(labels)
    if not label_list or not all(isinstance(label, str) for label in label_list):
        raise ValueError(f"classify_text needs one or more string labels, got {labels!r}")
    descriptor = _provider(provider, "transformers").get_text_classifier(model, **options)
    return ai_expression(
        _TextClassification, "classify_text", descriptor, DataType.string(), [_expr(text)], (label_list,)
    )


def prompt(
    messages: list[Expression] | Expression,
    return_format: Any = None,
    *,
    system_message: str | None = None,
    provider: str | Provider | None = None,
    model: str | None = None,
    **options: Any,
) -> Expression:
    """Each row's messages (one or more string columns, sent as user turns after
    ``system_message``) prompted to a language model: the reply (String), or with
    ``return_format`` (a pydantic model) a Struct of its fields. Providers: "openai" (the
    default; Responses API, ``use_chat_completions=True`` for Chat Completions, ``max_concurrency``
    requests in flight per batch, default 16) and "transformers" (a local causal LM with a chat
    template; greedy, ``max_new_tokens`` default 64). A 429 with Retry-After waits that long before
    the next of ``max_retries`` (default 3) attempts; ``on_error="ignore"`` gives null for rows
    that still fail.

    Prefix bucketing (the design articles' "dynamic prefix bucketing", for any provider): the
    engine sorts each morsel's rows by their messages before cutting it into batches, so prompts
    sharing a leading text (few-shot turns, a long instruction) land in the same batch; the
    transformers provider then prefills their shared tokens once and reuses that KV cache for
    each row; an OpenAI-compatible server with prefix caching sees them back to back. Replies
    keep the rows' order; ``explain`` shows ``bucket_by``. ``prefix_bucketing=False`` turns it off."""
    from ketch.ai.pydantic_types import dtype_of_model
    from ketch.ai.udfs import _Prompting, ai_expression

    columns = [_expr(m) for m in (messages if isinstance(messages, list) else [messages])]
    if not columns:
        raise ValueError("prompt needs at least one message expression")
    dtype = dtype_of_model(return_format) if return_format is not None else DataType.string()
    bucketing = options.pop("prefix_bucketing", True)
    descriptor = _provider(provider, "openai").get_prompter(
        model, return_format=return_format, system_message=system_message, **options
    )
    bucket_by = "prompt prefix (rows sorted by their messages)" if bucketing else None
    return ai_expression(_Prompting, "prompt", descriptor, dtype, columns, bucket_by=bucket_by)
