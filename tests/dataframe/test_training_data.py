"""DataFrames as PyTorch training data (Daft's to_torch_map_dataset, to_torch_iter_dataset,
to_torch_dataloader): rows and batches hold the DataFrame's own values, computed here from the
input independently of the conversion."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ketch
from ketch import DataType, col

ROWS = {"x": [1, 2, 3, 4, 5], "y": [0.5, 1.5, 2.5, 3.5, 4.5], "s": ["a", "b", "c", "d", "e"]}


def test_map_dataset_indexes_rows_as_dicts():
    ds = ketch.from_pydict(ROWS).where(col("x") > 1).to_torch_map_dataset()
    assert isinstance(ds, torch.utils.data.Dataset) and len(ds) == 4
    assert ds[0] == {"x": 2, "y": 1.5, "s": "b"} and ds[-1] == {"x": 5, "y": 4.5, "s": "e"}
    with pytest.raises(IndexError):
        ds[4]


def test_iter_dataset_streams_rows_through_a_torch_dataloader():
    ds = ketch.from_pydict({"x": [1, 2, 3], "y": [4, 5, 6]}).to_torch_iter_dataset()
    assert isinstance(ds, torch.utils.data.IterableDataset)
    batches = list(torch.utils.data.DataLoader(ds))
    assert [(int(b["x"][0]), int(b["y"][0])) for b in batches] == [(1, 4), (2, 5), (3, 6)]
    assert len(list(ds)) == 3  # a second pass runs the query again


def test_dataloader_batches_columns_as_tensors_or_lists():
    batches = list(ketch.from_pydict(ROWS).to_torch_dataloader(batch_size=2))
    assert [len(b["s"]) for b in batches] == [2, 2, 1]
    assert torch.equal(torch.cat([b["x"] for b in batches]), torch.tensor(ROWS["x"]))
    assert torch.equal(torch.cat([b["y"] for b in batches]), torch.tensor(ROWS["y"], dtype=torch.float64))
    assert [s for b in batches for s in b["s"]] == ROWS["s"]
    # Nulls keep the Python values (a tensor cannot hold them).
    nulls = next(iter(ketch.from_pydict({"n": [1, None]}).to_torch_dataloader(batch_size=2)))
    assert nulls == {"n": [1, None]}
    with pytest.raises(ValueError, match="batch_size must be greater than 0"):
        ketch.from_pydict(ROWS).to_torch_dataloader(batch_size=0)


def test_dataloader_stacks_fixed_shape_and_same_shape_arrays():
    vectors = [[float(3 * i + k) for k in range(3)] for i in range(4)]
    emb = ketch.from_pydict({"e": vectors}).with_column(
        "e", col("e").cast(DataType.embedding(DataType.float32(), 3))
    )
    (first, second) = list(emb.to_torch_dataloader(batch_size=3))
    assert first["e"].dtype == torch.float32 and first["e"].shape == (3, 3)
    assert torch.equal(torch.cat([first["e"], second["e"]]), torch.tensor(vectors, dtype=torch.float32))
    pixels = [np.full((2, 3, 3), i, np.uint8) for i in range(3)]
    images = ketch.from_pydict({"i": pixels}).with_column("i", col("i").cast(DataType.image("RGB")))
    batch = next(iter(images.to_torch_dataloader(batch_size=3)))
    assert batch["i"].shape == (3, 2, 3, 3) and torch.equal(batch["i"], torch.from_numpy(np.stack(pixels)))


def test_sharding_is_refused_until_supported():
    df = ketch.from_pydict(ROWS)
    with pytest.raises(ValueError, match="world_size and rank must be specified"):
        df.to_torch_map_dataset(shard_strategy="file")
    with pytest.raises(NotImplementedError, match="shard_strategy='file'"):
        df.to_torch_iter_dataset(shard_strategy="file", world_size=2, rank=0)
