"""Multimodal columns cross process boundaries: tables of Ketch's extension types (images,
Python objects) pickle and load back unchanged, so image results come back from the engine
workers on Ray exactly as the native runner returns them."""

from __future__ import annotations

import io
import pickle
from typing import Any

import cloudpickle
import numpy as np
import pyarrow as pa
from PIL import Image
from ray_compare import native_then_ray

import ketch
from ketch import col


def _png(seed: int, size: int = 12) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 255, (size, size + 3, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def _images() -> Any:
    data = {"id": list(range(9)), "png": [_png(i) for i in range(9)]}
    return (
        ketch.from_pydict(data)
        .into_partitions(3)
        .with_column("img", col("png").image.decode(mode="RGB"))
        .with_column("thumb", col("img").image.resize(4, 4))
        .select("id", "img", "thumb")
    )


def test_tables_of_image_types_pickle_and_load_unchanged() -> None:
    table = _images().to_arrow()
    assert "Image" in str(table.schema.field("img").type)
    for dumps in (pickle.dumps, cloudpickle.dumps):
        back = pickle.loads(dumps(table))
        assert back.schema == table.schema and back.equals(table)
    assert pickle.loads(pickle.dumps(table.schema.field("thumb").type)) == table.schema.field("thumb").type


def test_image_results_come_back_from_the_workers(on_ray: Any) -> None:
    native_df, on_df = native_then_ray(_images)
    native, on = native_df.to_arrow(), on_df.to_arrow()
    assert on.schema == native.schema
    assert on.equals(native)
    assert on.num_rows == 9 and on.column("thumb").null_count == 0
    assert isinstance(on.column("img"), pa.ChunkedArray) and on_ray.last_stages[-1].tasks == 3
