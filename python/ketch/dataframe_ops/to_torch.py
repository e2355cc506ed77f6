"""A DataFrame as training data for PyTorch and Ray (Daft's ``to_torch_map_dataset``,
``to_torch_iter_dataset``, ``to_torch_dataloader`` and ``to_ray_dataset``).

Rows are dicts ``{column: value}`` of the Python values ``to_pydict`` gives (images and tensors
as numpy arrays), as in Daft. The data loader yields one dict per batch of ``batch_size`` rows
(``into_batches``: the last batch may be smaller), each column converted once per batch straight
from Arrow: a numeric or boolean column without nulls becomes a 1-D tensor, a fixed-shape column
(Embedding, FixedShapeImage, FixedShapeTensor) one stacked tensor (N, ...), a column of
same-shaped arrays (variable-shape images, tensors) one stacked tensor; anything else (strings,
bytes, nested values, columns with nulls, arrays of different shapes) stays a Python list. Daft
converts the same columns through Python lists; the values are the same, the conversion is
vectorised here."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame


def _torch() -> Any:
    from ketch._optional import require

    return require("torch", "PyTorch datasets (to_torch_*)")


def _check_shard(shard_strategy: str | None, world_size: int | None, rank: int | None) -> None:
    if shard_strategy is None:
        return
    if world_size is None or rank is None:
        raise ValueError("world_size and rank must be specified when using sharding")
    # Daft shards the scan's files between ranks; Ketch has no file-level shard yet.
    raise NotImplementedError(
        f"shard_strategy={shard_strategy!r} is not supported yet: split the input per rank instead "
        "(e.g. read_parquet of that rank's files)"
    )


def map_dataset(df: DataFrame, shard_strategy: str | None, world_size: int | None, rank: int | None) -> Any:
    """A map-style ``torch.utils.data.Dataset`` over ``df``'s rows (runs the query now)."""
    _check_shard(shard_strategy, world_size, rank)
    torch = _torch()

    class KetchTorchDataset(torch.utils.data.Dataset):  # type: ignore[misc,name-defined]
        """Row ``i`` as ``{column: value}``; ``len`` is the row count."""

        def __init__(self, data: dict[str, list[Any]], length: int) -> None:
            self.data = data
            self.length = length

        def __len__(self) -> int:
            return self.length

        def __getitem__(self, i: int) -> dict[str, Any]:
            if not -self.length <= i < self.length:
                raise IndexError(f"row {i} out of range for {self.length} rows")
            return {key: values[i] for key, values in self.data.items()}

    data = df.to_pydict()
    length = len(next(iter(data.values()))) if data else 0
    return KetchTorchDataset(data, length)


def iter_dataset(df: DataFrame, shard_strategy: str | None, world_size: int | None, rank: int | None) -> Any:
    """A ``torch.utils.data.IterableDataset`` streaming ``df``'s rows (the query runs when it
    is iterated, again for each pass)."""
    _check_shard(shard_strategy, world_size, rank)
    torch = _torch()

    class KetchTorchIterableDataset(torch.utils.data.IterableDataset):  # type: ignore[misc,name-defined]
        """Rows as ``{column: value}``, streamed from the query."""

        def __init__(self, rows: Iterable[dict[str, Any]]) -> None:
            self.rows = rows

        def __iter__(self) -> Iterator[dict[str, Any]]:
            return iter(self.rows)

    return KetchTorchIterableDataset(_Rows(df))


class _Rows:
    """Iterable over a DataFrame's rows; each ``iter`` runs (or reads) it anew."""

    def __init__(self, df: DataFrame) -> None:
        self.df = df

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self.df.iter_rows()


class TorchDataLoader:
    """Iterates ``{column: tensor or list}`` batches of ``batch_size`` rows (the last may be
    smaller) from a DataFrame, streamed as the query produces them (Daft's
    ``DaftTorchDataLoader``: a DataLoader-like iterator, not a ``torch.utils.data.DataLoader``).
    ``pin_memory`` pins tensors when CUDA is available (on ``pin_memory_device`` if given);
    ``prefetch_count`` is accepted for Daft's signature (the engine already runs ahead of the
    reader). ValueError unless ``batch_size`` > 0."""

    def __init__(
        self,
        df: DataFrame,
        batch_size: int = 1,
        *,
        pin_memory: bool = False,
        pin_memory_device: str = "",
        prefetch_count: int = 0,
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size must be greater than 0")
        self._torch = _torch()
        self._batch_size = batch_size
        self._pin_memory = pin_memory
        self._pin_memory_device = pin_memory_device or None
        self._prefetch_count = prefetch_count
        self._batched = df.into_batches(batch_size)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for part in self._batched.iter_partitions():
            table = part.to_arrow()
            if table.num_rows:
                yield {name: self._column(table.column(name)) for name in table.column_names}

    def _column(self, column: pa.ChunkedArray) -> Any:
        from ketch.series import Series

        torch = self._torch
        series = Series(column.combine_chunks() if column.num_chunks != 1 else column.chunk(0), "c")
        kind = column.type
        plain = pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)
        if plain and column.null_count == 0:
            return self._pin(torch.from_numpy(column.to_numpy().copy()))
        # Only fixed-size lists (Embedding) and extension types (images, tensors) can hold arrays;
        # other columns (text, bytes, nested, with nulls) go to Python values once, directly.
        arrays_possible = pa.types.is_fixed_size_list(kind) or isinstance(kind, pa.BaseExtensionType)
        if not arrays_possible or column.null_count:
            return series.to_pylist()
        values = series.to_numpy()
        if values.dtype != object and values.ndim > 1:
            return self._pin(torch.from_numpy(values.copy()))  # fixed-shape: (N, ...) already
        if values.dtype == object and len(values):
            import numpy as np

            arrays = list(values)
            if all(isinstance(a, np.ndarray) for a in arrays) and len({a.shape for a in arrays}) == 1:
                return self._pin(torch.stack([torch.from_numpy(np.array(a)) for a in arrays]))
        return series.to_pylist()

    def _pin(self, tensor: Any) -> Any:
        if not self._pin_memory or not self._torch.cuda.is_available():
            return tensor
        if self._pin_memory_device:
            return tensor.pin_memory(device=self._pin_memory_device)
        return tensor.pin_memory()


def ray_dataset(df: DataFrame) -> Any:
    """A ``ray.data.Dataset`` of ``df``'s rows, one Arrow block per partition (runs the query;
    multimodal columns keep their Arrow extension types). Needs Ray (``ketch[ray]``); starts or
    joins a Ray cluster as ``ray.data`` does."""
    from ketch._optional import require

    ray = require("ray", "to_ray_dataset")
    require("ray.data", "to_ray_dataset")
    df = df.collect()
    tables = [part.to_arrow() for part in df.iter_partitions()]
    tables = [t for t in tables if t.num_rows] or [df.to_arrow()]
    return ray.data.from_arrow(tables)
