"""The AI functions on the Ray runner: the class UDF crosses to the engine workers (and, with
``concurrency``, to an actor pool), the model loads there from the local directory, and the
values equal the native runner's."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ray_compare import native_then_ray

import ketch
from ketch import col

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "ai"))
import tiny_models  # noqa: E402

from ketch.functions import classify_text, embed_text  # noqa: E402

LABELS = ["animal", "file", "weather"]


@pytest.fixture(scope="module")
def model_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ray_models")
    tiny_models.build_text_embedder(root)
    tiny_models.build_nli_classifier(root)
    return root


@pytest.mark.parametrize("concurrency", [None, 2], ids=["engine-workers", "actor-pool"])
def test_embed_and_classify_text_on_ray_equal_native(on_ray: Any, model_root: Path, concurrency) -> None:
    texts = [f"line {i} of the {['path', 'dog', 'cloud'][i % 3]} text" for i in range(40)] + [None]
    extra = {"concurrency": concurrency} if concurrency else {}

    def build() -> ketch.DataFrame:
        df = ketch.from_pydict({"t": texts}).repartition(3)
        return df.select(
            col("t"),
            embed_text(col("t"), model=str(model_root / "text_embedder"), batch_size=8, **extra).alias("e"),
            classify_text(col("t"), LABELS, model=str(model_root / "nli_classifier")).alias("c"),
        ).sort("t")

    native_df, on_df = native_then_ray(build)
    native, on = native_df.to_pydict(), on_df.to_pydict()
    assert on["t"] == native["t"] and on["c"] == native["c"]
    assert sum(v is None for v in on["e"]) == 1
    a = np.stack([np.asarray(v) for v in native["e"] if v is not None])
    b = np.stack([np.asarray(v) for v in on["e"] if v is not None])
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
