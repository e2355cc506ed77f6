"""The class UDFs the AI functions run: one model instance per UDF instance (loaded once, in
``__init__``), batches of rows per call; null inputs give null outputs without reaching the model."""

from __future__ import annotations

from typing import Any

from ketch.datatype import DataType
from ketch.expressions.expression import Expression


def _non_null(values: list[Any], model_call: Any) -> list[Any]:
    """`model_call` on the non-null values (one call for the batch), spread back: null rows null."""
    rows = [i for i, v in enumerate(values) if v is not None]
    out: list[Any] = [None] * len(values)
    if rows:
        for i, result in zip(rows, model_call([values[i] for i in rows]), strict=True):
            out[i] = result
    return out


class _TextEmbedding:
    def __init__(self, descriptor: Any) -> None:
        self.model = descriptor.instantiate()

    def __call__(self, text: Any) -> list[Any]:
        return _non_null(text.to_pylist(), lambda texts: self.model.embed_text([str(t) for t in texts]))


class _ImageEmbedding:
    def __init__(self, descriptor: Any) -> None:
        self.model = descriptor.instantiate()

    def __call__(self, image: Any) -> list[Any]:
        return _non_null(image.to_pylist(), self.model.embed_image)


class _ImageClassification:
    def __init__(self, descriptor: Any, labels: list[str]) -> None:
        self.model = descriptor.instantiate()
        self.labels = labels

    def __call__(self, image: Any) -> list[Any]:
        return _non_null(image.to_pylist(), lambda images: self.model.classify_image(images, self.labels))


class _TextClassification:
    def __init__(self, descriptor: Any, labels: list[str]) -> None:
        self.model = descriptor.instantiate()
        self.labels = labels

    def __call__(self, text: Any) -> list[Any]:
        return _non_null(
            text.to_pylist(), lambda texts: self.model.classify_text([str(t) for t in texts], self.labels)
        )


class _Prompting:
    def __init__(self, descriptor: Any) -> None:
        self.model = descriptor.instantiate()

    def __call__(self, *messages: Any) -> list[Any]:
        # A row with any null message is null; the rest go to the model as one batch.
        rows = [
            list(r) if all(v is not None for v in r) else None
            for r in zip(*(m.to_pylist() for m in messages), strict=True)
        ]
        return _non_null(rows, self.model.prompt_batch)


def ai_expression(
    kind: type,
    name: str,
    descriptor: Any,
    dtype: DataType,
    args: list[Any],
    init: tuple = (),
    bucket_by: str | None = None,
) -> Expression:
    """The expression calling `kind` (a UDF class above) as the class UDF `name`, run as the
    descriptor's UDF options ask (instances, GPUs, batch size, retries, on_error). ``bucket_by``
    (a description for explain): the engine groups each morsel's rows by all of `args` before
    cutting it into batches (prefix bucketing: rows sorted by their text, so prompts sharing a
    prefix reach the same batch)."""
    from ketch.udf import cls

    options = descriptor.udf_options()
    # The UDF shows as the function's name (explain, errors); its own class so no global changes.
    attributes: dict[str, Any] = {"__module__": kind.__module__, "__qualname__": name}
    if bucket_by:
        attributes.update(bucket_key_args=len(args), bucket_by_display=bucket_by)
    named = type(name, (kind,), attributes)
    wrapped = cls(
        named,
        return_dtype=dtype,
        batch_size=options.batch_size,
        concurrency=options.concurrency,
        gpus=options.num_gpus or 0,
        max_retries=options.max_retries,
        on_error=options.on_error,
        use_process=False,  # models keep their weights in one process; torch and HTTP release the GIL
    )
    return wrapped(descriptor, *init)(*args)
