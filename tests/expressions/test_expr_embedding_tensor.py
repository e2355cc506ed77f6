"""Embedding and Tensor data types (Arrow fixed_size_list / canonical fixed_shape_tensor) and the
native embedding.cosine_distance / euclidean_distance kernels against numpy."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col
from ketch.errors import KetchError, KetchTypeError


def _embeddings(rng, n: int, dim: int, dtype=np.float32) -> pa.Array:
    values = rng.normal(size=(n, dim)).astype(dtype)
    return pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), dim), values


def test_cosine_distance_matches_numpy(rng):
    a_arr, a = _embeddings(rng, 200, 16)
    b_arr, b = _embeddings(rng, 200, 16)
    df = ketch.from_arrow(pa.table({"a": a_arr, "b": b_arr}))
    with ketch.execution_config_ctx(morsel_size_rows=33):
        got = df.select(col("a").embedding.cosine_distance(col("b")).alias("d")).to_pydict()["d"]
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    expected = 1 - (a64 * b64).sum(1) / (np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_cosine_distance_to_one_query_vector_and_nulls(rng):
    a_arr, a = _embeddings(rng, 5, 4, np.float64)
    a_list = a_arr.to_pylist()
    a_list[2] = None
    a_list[3] = [0.0, 0.0, 0.0, 0.0]
    df = ketch.from_arrow(pa.table({"a": pa.array(a_list, pa.list_(pa.float64(), 4))}))
    query = np.array([1.0, 0.0, -1.0, 2.0])
    got = df.select(col("a").embedding.cosine_distance(query).alias("d")).to_pydict()["d"]
    for i in (0, 1, 4):
        expected = 1 - a[i] @ query / (np.linalg.norm(a[i]) * np.linalg.norm(query))
        assert got[i] == pytest.approx(expected, rel=1e-12)
    assert got[2] is None and got[3] is None  # null input, zero norm


def test_cosine_distance_type_and_length_errors():
    df = ketch.from_pydict({"s": ["a"], "l": [[1.0, 2.0]]})
    with pytest.raises(KetchTypeError, match="expects Embedding"):
        df.select(col("s").embedding.cosine_distance(col("l")))
    with pytest.raises(KetchError, match="row 0.*2 and 3 values"):
        df.select(col("l").embedding.cosine_distance([1.0, 2.0, 3.0])).collect()


def test_euclidean_distance_matches_numpy_and_l2_alias(rng):
    a_arr, a = _embeddings(rng, 150, 12)
    b_arr, b = _embeddings(rng, 150, 12)
    a_list = a_arr.to_pylist()
    a_list[7] = None
    df = ketch.from_arrow(pa.table({"a": pa.array(a_list, a_arr.type), "b": b_arr}))
    query = rng.normal(size=12)
    with ketch.execution_config_ctx(morsel_size_rows=40):
        got = df.select(
            col("a").embedding.euclidean_distance(col("b")).alias("ab"),
            col("a").embedding.l2_distance(query).alias("aq"),
        ).to_pydict()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    expected_ab = np.linalg.norm(a64 - b64, axis=1)
    expected_aq = np.linalg.norm(a64 - query, axis=1)
    assert got["ab"][7] is None and got["aq"][7] is None
    keep = [i for i in range(150) if i != 7]
    np.testing.assert_allclose([got["ab"][i] for i in keep], expected_ab[keep], rtol=1e-12)
    np.testing.assert_allclose([got["aq"][i] for i in keep], expected_aq[keep], rtol=1e-12)
    with pytest.raises(KetchTypeError, match="euclidean_distance expects Embedding"):
        ketch.from_pydict({"s": ["a"]}).select(col("s").embedding.euclidean_distance([1.0]))


def test_embedding_and_tensor_types_round_trip_parquet(tmp_path, rng):
    emb = ketch.DataType.embedding(ketch.DataType.float32(), 8)
    assert emb.to_arrow() == pa.list_(pa.float32(), 8)
    tensor = ketch.DataType.tensor(ketch.DataType.float32(), (2, 3))
    assert tensor.to_arrow().extension_name == "arrow.fixed_shape_tensor"
    values = rng.normal(size=(10, 2, 3)).astype(np.float32)
    storage = pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), 6)
    tensors = pa.ExtensionArray.from_storage(tensor.to_arrow(), storage)
    emb_arr, emb_values = _embeddings(rng, 10, 8)
    df = ketch.from_arrow(pa.table({"t": tensors, "e": emb_arr.cast(emb.to_arrow())}))
    df.write_parquet(str(tmp_path / "out"))
    back = ketch.read_parquet(str(tmp_path / "out")).to_arrow()
    assert back.schema.field("t").type == tensor.to_arrow()
    np.testing.assert_array_equal(back.column("t").combine_chunks().to_numpy_ndarray(), values)
    np.testing.assert_array_equal(np.stack(back.column("e").to_numpy(zero_copy_only=False)), emb_values)
    assert pq.read_schema(next((tmp_path / "out").glob("*.parquet"))).field("t").type == tensor.to_arrow()


def test_variable_shape_tensor_type_and_bad_shapes():
    t = ketch.DataType.tensor(ketch.DataType.int64())
    assert t.to_arrow() == pa.struct(
        [("data", pa.large_list(pa.int64())), ("shape", pa.large_list(pa.uint64()))]
    )
    with pytest.raises(ValueError):
        ketch.DataType.tensor(ketch.DataType.int64(), (0, 2))
    with pytest.raises(ValueError):
        ketch.DataType.embedding(ketch.DataType.float32(), 0)


def _numpy_distances(metric: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float64), b.astype(np.float64)
    if metric == "cosine_distance":
        return 1 - (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    if metric == "euclidean_distance":
        return np.linalg.norm(a - b, axis=1)
    return (a * b).sum(1)


@pytest.mark.parametrize("metric", ["cosine_distance", "euclidean_distance", "dot_product"])
@pytest.mark.parametrize(
    ("left", "right"), [("float32", "float32"), ("float32", "float64"), ("int32", "float32")]
)
def test_distances_over_value_types_slices_and_a_constant_side_match_numpy(rng, metric, left, right):
    """float32 and float64 values are read in place, integers cast; a query vector on either side
    is one constant (not repeated per row); sliced columns and null elements or rows."""
    n, dim = 300, 24
    a = (rng.normal(size=(n, dim)) * 50).astype(left)
    b = (rng.normal(size=(n, dim)) * 50).astype(right)
    query = (rng.normal(size=dim) * 50).astype(right)
    a_arr = pa.FixedSizeListArray.from_arrays(pa.array(a.reshape(-1)), dim)
    b_values = b.reshape(-1).tolist()
    b_values[5 * dim + 3] = None  # a null element in row 5 of b
    b_arr = pa.ListArray.from_arrays(
        pa.array(np.arange(0, (n + 1) * dim, dim), pa.int32()), pa.array(b_values)
    )
    table = pa.table({"a": a_arr, "b": b_arr}).slice(3, 250)  # offsets into both columns
    method = "dot_product" if metric == "dot_product" else None

    def call(x, y):
        return getattr(x, method)(y) if method else getattr(x.embedding, metric)(y)

    with ketch.execution_config_ctx(morsel_size_rows=61):
        got = (
            ketch.from_arrow(table)
            .select(
                call(col("a"), col("b")).alias("ab"),
                call(col("a"), query.tolist()).alias("aq"),
                call(ketch.lit(query.tolist()), col("a")).alias("qa"),
            )
            .to_pydict()
        )
    rows = slice(3, 253)
    expected_ab = _numpy_distances(metric, a[rows], np.nan_to_num(b[rows]))
    expected_aq = _numpy_distances(metric, a[rows], np.tile(query, (250, 1)))
    for i in range(250):
        if i + 3 == 5:
            assert got["ab"][i] is None
        else:
            assert got["ab"][i] == pytest.approx(expected_ab[i], rel=1e-12, abs=1e-9)
        assert got["aq"][i] == pytest.approx(expected_aq[i], rel=1e-12, abs=1e-9)
        assert got["qa"][i] == pytest.approx(expected_aq[i], rel=1e-12, abs=1e-9)
