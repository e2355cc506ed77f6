"""The class UDFs the AI functions run: one model instance per UDF instance (loaded once, in
``__init__``), batches of rows per call; null inputs give null outputs without reaching the model."""

from __future__ import annotations

from typing import Any

from ketch.datatype import DataType
from ketch.expressions.expression import Expression


def _present(values: list[Any]) -> list[int]:
    return [i for i, v in enumerate(values) if v is not None]


class _TextEmbedding:
    def __init__(self, descriptor: Any) -> None:
        self.model = descriptor.instantiate()

    def __call__(self, text: Any) -> list[Any]:
        values = text.to_pylist()
        rows = _present(values)
        out: list[Any] = [None] * len(values)
        if rows:
            vectors = self.model.embed_text([str(values[i]) for i in rows])
            for k, i in enumerate(rows):
                out[i] = vectors[k]
        return out


class _ImageEmbedding:
    def __init__(self, descriptor: Any) -> None:
        self.model = descriptor.instantiate()

    def __call__(self, image: Any) -> list[Any]:
        values = image.to_pylist()
        rows = _present(values)
        out: list[Any] = [None] * len(values)
        if rows:
            vectors = self.model.embed_image([values[i] for i in rows])
            for k, i in enumerate(rows):
                out[i] = vectors[k]
        return out


class _ImageClassification:
    def __init__(self, descriptor: Any, labels: list[str]) -> None:
        self.model = descriptor.instantiate()
        self.labels = labels

    def __call__(self, image: Any) -> list[Any]:
        values = image.to_pylist()
        rows = _present(values)
        out: list[Any] = [None] * len(values)
        if rows:
            labels = self.model.classify_image([values[i] for i in rows], self.labels)
            for i, label in zip(rows, labels, strict=True):
                out[i] = label
        return out


class _TextClassification:
    def __init__(self, descriptor: Any, labels: list[str]) -> None:
        self.model = descriptor.instantiate()
        self.labels = labels

    def __call__(self, text: Any) -> list[Any]:
        values = text.to_pylist()
        rows = _present(values)
        out: list[Any] = [None] * len(values)
        if rows:
            for i, label in zip(
                rows, self.model.classify_text([str(values[i]) for i in rows], self.labels), strict=True
            ):
                out[i] = label
        return out


class _Prompting:
    def __init__(self, descriptor: Any) -> None:
        self.model = descriptor.instantiate()

    def __call__(self, *messages: Any) -> list[Any]:
        columns = [m.to_pylist() for m in messages]
        rows = list(zip(*columns, strict=True))
        out: list[Any] = [None] * len(rows)
        wanted = [i for i, row in enumerate(rows) if all(v is not None for v in row)]
        if wanted:
            batch = [list(rows[i]) for i in wanted]
            replies = (
                self.model.prompt_batch(batch)
                if hasattr(self.model, "prompt_batch")
                else [self.model.prompt(r) for r in batch]
            )
            for i, reply in zip(wanted, replies, strict=True):
                out[i] = reply
        return out


def ai_expression(
    kind: type, name: str, descriptor: Any, dtype: DataType, args: list[Any], init: tuple = ()
) -> Expression:
    """The expression calling `kind` (a UDF class above) as the class UDF `name`, run as the
    descriptor's UDF options ask (instances, GPUs, batch size, retries, on_error)."""
    from ketch.udf import cls

    options = descriptor.udf_options()
    # The UDF shows as the function's name (explain, errors); its own class so no global changes.
    named = type(name, (kind,), {"__module__": kind.__module__, "__qualname__": name})
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
