"""The DataFrame's training-data methods (Daft's names and signatures), mixed into
``DataFrame``; the conversions live in :mod:`ketch.dataframe_ops.to_torch`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.dataframe_ops.to_torch import TorchDataLoader


class TrainingDataMethods:
    """``to_torch_map_dataset``, ``to_torch_iter_dataset``, ``to_torch_dataloader``,
    ``to_ray_dataset``."""

    def to_torch_map_dataset(
        self, shard_strategy: str | None = None, world_size: int | None = None, rank: int | None = None
    ) -> Any:
        """A map-style ``torch.utils.data.Dataset``: item ``i`` is row ``i`` as
        ``{column: value}`` (``to_pydict``'s values), ``len`` the row count. Runs the query and
        holds its result. ``shard_strategy="file"`` (Daft: each rank reads its share of the scan's
        files) raises NotImplementedError; without ``world_size`` and ``rank`` ValueError, as
        Daft. ImportError naming ``ketch[torch]`` without torch."""
        from ketch.dataframe_ops.to_torch import map_dataset

        return map_dataset(self, shard_strategy, world_size, rank)  # type: ignore[arg-type]

    def to_torch_iter_dataset(
        self, shard_strategy: str | None = None, world_size: int | None = None, rank: int | None = None
    ) -> Any:
        """A ``torch.utils.data.IterableDataset`` of rows as ``{column: value}``, streamed while
        the query runs (each pass runs it again unless the DataFrame is collected). Meant for a
        single-process ``DataLoader`` (the engine already runs in parallel). Sharding as
        ``to_torch_map_dataset``."""
        from ketch.dataframe_ops.to_torch import iter_dataset

        return iter_dataset(self, shard_strategy, world_size, rank)  # type: ignore[arg-type]

    def to_torch_dataloader(
        self,
        batch_size: int = 1,
        *,
        pin_memory: bool = False,
        pin_memory_device: str = "",
        prefetch_count: int = 0,
    ) -> TorchDataLoader:
        """An iterator of batches ``{column: torch.Tensor or list}`` of ``batch_size`` rows (the
        last may be smaller), streamed as the query produces them: numeric and boolean columns
        without nulls as 1-D tensors, fixed-shape and same-shaped array columns as stacked
        (N, ...) tensors, other columns as Python lists (see :mod:`ketch.dataframe_ops.to_torch`).
        ValueError unless ``batch_size`` > 0."""
        from ketch.dataframe_ops.to_torch import TorchDataLoader

        return TorchDataLoader(
            self,  # type: ignore[arg-type]
            batch_size,
            pin_memory=pin_memory,
            pin_memory_device=pin_memory_device,
            prefetch_count=prefetch_count,
        )

    def to_ray_dataset(self) -> Any:
        """A ``ray.data.Dataset`` of the rows, one Arrow block per partition (runs the query
        with the current runner). ImportError naming ``ketch[ray]`` without Ray."""
        from ketch.dataframe_ops.to_torch import ray_dataset

        return ray_dataset(self)  # type: ignore[arg-type]
