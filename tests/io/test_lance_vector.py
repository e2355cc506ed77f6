"""Vector search over Lance: the optimizer's PushDownNearest rule turns
``read_lance(uri).with_column("d", col("emb").embedding.cosine_distance(q)).sort("d").limit(k)`` (and
the euclidean form) into Lance's indexed nearest-neighbour scan when the dataset has a vector index
with the query's metric, and leaves the exact brute force otherwise. Results are checked against
numpy's float64 brute force; ``d`` is always Ketch's own distance."""

from __future__ import annotations

import io

import lance
import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.io.lance import create_index
from ketch.io.lance_index import vector_indexes

ROWS, DIM, K = 5000, 32, 10
QUERIES = 8


def _table(rng: np.random.Generator) -> tuple[pa.Table, np.ndarray]:
    vectors = rng.normal(size=(ROWS, DIM)).astype(np.float32)
    table = pa.table(
        {
            "id": pa.array(np.arange(ROWS, dtype=np.int64)),
            "cat": pa.array(np.arange(ROWS, dtype=np.int64) % 5),
            "x": pa.array(rng.random(ROWS)),
            "emb": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), DIM),
        }
    )
    return table, vectors


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Three copies of one table: indexed for cosine (IVF_PQ), indexed for l2 (IVF_PQ), no index."""
    rng = np.random.default_rng(7)
    table, vectors = _table(rng)
    root = tmp_path_factory.mktemp("lance_vector")
    uris = {name: str(root / f"{name}.lance") for name in ("cosine", "l2", "plain")}
    for uri in uris.values():
        lance.write_dataset(table, uri, max_rows_per_file=2000)
    create_index(uris["cosine"], "emb", "IVF_PQ", "cosine", num_partitions=16, num_sub_vectors=8)
    create_index(uris["l2"], "emb", "IVF_PQ", "l2", num_partitions=16, num_sub_vectors=8)
    queries = rng.normal(size=(QUERIES, DIM))
    return uris, table, vectors.astype(np.float64), queries


def _cosine(vectors: np.ndarray, q: np.ndarray) -> np.ndarray:
    return 1 - vectors @ q / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(q))


def _l2(vectors: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.linalg.norm(vectors - q, axis=1)


def _optimized(df: ketch.DataFrame) -> str:
    buf = io.StringIO()
    df.explain(show_all=True, file=buf)
    text = buf.getvalue()
    return text[text.index("== Optimized") : text.index("== Physical")]


def _top(uri: str, q: np.ndarray, metric: str = "cosine", k: int = K) -> ketch.DataFrame:
    emb = col("emb").embedding
    distance = emb.cosine_distance(q) if metric == "cosine" else emb.euclidean_distance(q)
    return ketch.read_lance(uri).with_column("d", distance).sort("d").limit(k)


def _check_exact_d(result: dict, vectors: np.ndarray, q: np.ndarray, metric: str) -> None:
    exact = (_cosine if metric == "cosine" else _l2)(vectors, q)
    np.testing.assert_allclose(result["d"], exact[result["id"]], rtol=1e-12, atol=1e-12)
    assert result["d"] == sorted(result["d"])


def test_create_index_describes_the_index(data):
    uris, *_ = data
    (cosine,) = vector_indexes(lance.dataset(uris["cosine"]))
    assert cosine == {
        "name": "emb_idx",
        "index_type": "IVF_PQ",
        "column": "emb",
        "metric": "cosine",
        "num_rows_indexed": ROWS,
    }
    assert vector_indexes(lance.dataset(uris["l2"]))[0]["metric"] == "l2"
    assert vector_indexes(lance.dataset(uris["plain"])) == []
    with pytest.raises(ValueError, match="not a fixed-size list of floats"):
        create_index(uris["plain"], "id")
    with pytest.raises(ValueError, match="metric must be one of"):
        create_index(uris["plain"], "emb", metric="hamming")


def test_create_index_with_default_sizes(tmp_path, rng):
    """The README's call, ``create_index(uri, "emb", index_type="IVF_PQ", metric="cosine")``,
    works with pylance 14 (which itself requires both sizes): the defaults are derived from the
    data (rows // 256 lists here, 32 / 16 = 2 sub-vectors) and the index answers a top-k."""
    from ketch.io.lance_index import default_num_partitions, default_num_sub_vectors

    table, vectors = _table(rng)
    uri = str(tmp_path / "t.lance")
    lance.write_dataset(table, uri)
    made = create_index(uri, "emb", index_type="IVF_PQ", metric="cosine")
    assert made["num_rows_indexed"] == ROWS and made["index_type"] == "IVF_PQ"
    assert default_num_partitions(ROWS) == ROWS // 256 == 19
    assert default_num_partitions(10**8) == 4096 and default_num_partitions(10) == 1
    assert [default_num_sub_vectors(d) for d in (32, 384, 24, 20, 6, 3)] == [2, 24, 3, 5, 1, 1]
    q = vectors[0].astype(np.float64)
    result = _top(uri, q).to_pydict()
    assert "ANN via index" in _optimized(_top(uri, q))
    assert result["id"][0] == 0  # the query vector itself is its own nearest row


@pytest.mark.parametrize("metric", ["cosine", "l2"])
def test_indexed_top_k_matches_brute_force(data, metric):
    """The rewrite is taken (explain) and over several queries its top-k has recall >= 0.9 against
    numpy's exact top-k (measured over 20 queries: 0.995 cosine, 0.99 l2, none below 0.9; nprobes 20,
    refine factor 10); ``d`` holds Ketch's exact distances, ascending."""
    uris, _, vectors, queries = data
    recalls = []
    for q in queries:
        df = _top(uris[metric], q, metric)
        result = df.select("id", "d").to_pydict()
        assert len(result["id"]) == K
        _check_exact_d(result, vectors, q, metric)
        exact = (_cosine if metric == "cosine" else _l2)(vectors, q)
        truth = set(np.argsort(exact, kind="stable")[:K].tolist())
        recalls.append(len(truth & set(result["id"])) / K)
    plan = _optimized(_top(uris[metric], queries[0], metric))
    assert f"Nearest pushdown = ANN via index emb_idx (IVF_PQ, {metric})" in plan
    # One read for the whole version, estimated at k rows.
    assert "(1 task: Lance's nearest-neighbour search runs over all 3 fragments at once)" in plan
    scan = plan[plan.index("* ScanLance") :]
    assert "Approx num rows = 10," in scan.split("Stats = ")[1]
    assert np.mean(recalls) >= 0.9, recalls
    assert min(recalls) >= 0.8, recalls


@pytest.mark.parametrize(
    ("uri", "metric", "why"),
    [
        ("plain", "cosine", "no vector index on 'emb'"),
        ("l2", "cosine", "the index emb_idx (IVF_PQ) on 'emb' has metric l2, the query uses cosine"),
        ("cosine", "l2", "the index emb_idx (IVF_PQ) on 'emb' has metric cosine, the query uses l2"),
    ],
)
def test_brute_force_without_a_matching_index(data, uri, metric, why):
    uris, _, vectors, queries = data
    q = queries[1]
    df = _top(uris[uri], q, metric)
    plan = _optimized(df)
    assert f"Nearest pushdown = None (brute force: {why})" in plan
    result = df.select("id", "d").to_pydict()
    exact = (_cosine if metric == "cosine" else _l2)(vectors, q)
    assert result["id"] == np.argsort(exact, kind="stable")[:K].tolist()
    _check_exact_d(result, vectors, q, metric)


def test_pushable_filter_below_becomes_the_prefilter(data):
    """A filter under the top-k that Lance evaluates exactly (an integer comparison) is applied
    before the search: every row returned passes it, and they are the filtered rows' nearest."""
    uris, table, vectors, queries = data
    q = queries[2]
    df = (
        ketch.read_lance(uris["cosine"])
        .where(col("cat") == 3)
        .with_column("d", col("emb").embedding.cosine_distance(q))
        .sort("d")
        .limit(K)
    )
    plan = _optimized(df)
    assert "Nearest pushdown = ANN via index emb_idx (IVF_PQ, cosine)" in plan
    result = df.select("id", "cat", "d").to_pydict()
    assert len(result["id"]) == K and set(result["cat"]) == {3}
    _check_exact_d(result, vectors, q, "cosine")
    exact = _cosine(vectors, q)
    keep = np.flatnonzero(np.asarray(table["cat"]) == 3)
    truth = set(keep[np.argsort(exact[keep], kind="stable")[:K]].tolist())
    assert len(truth & set(result["id"])) / K >= 0.8


def test_filter_lance_cannot_run_exactly_keeps_brute_force(data):
    """A conjunct on a float column is re-checked by Ketch after Lance (NaN ordering differs), so
    it cannot be the prefilter: no rewrite, and the exact filtered top-k comes back."""
    uris, table, vectors, queries = data
    q = queries[3]
    df = (
        ketch.read_lance(uris["cosine"])
        .where(col("x") > 0.5)
        .with_column("d", col("emb").embedding.cosine_distance(q))
        .sort("d")
        .limit(K)
    )
    plan = _optimized(df)
    assert "Nearest pushdown = None (brute force: the filter" in plan
    result = df.select("id", "d").to_pydict()
    exact = _cosine(vectors, q)
    keep = np.flatnonzero(np.asarray(table["x"]) > 0.5)
    assert result["id"] == keep[np.argsort(exact[keep], kind="stable")[:K]].tolist()


def test_filter_above_the_limit_applies_to_the_top_k(data):
    """``.limit(k).where(...)`` filters the k nearest rows (it is not pushed under the limit)."""
    uris, _, vectors, queries = data
    q = queries[4]
    top = _top(uris["cosine"], q).select("id", "cat", "d").to_pydict()
    filtered = _top(uris["cosine"], q).where(col("cat") < 2).select("id", "cat", "d").to_pydict()
    expected = [i for i, c in zip(top["id"], top["cat"], strict=True) if c < 2]
    assert filtered["id"] == expected
    assert "Nearest pushdown = ANN via index" in _optimized(_top(uris["cosine"], q).where(col("cat") < 2))


def test_descending_sort_and_two_keys_are_not_rewritten(data):
    uris, _, vectors, queries = data
    q = queries[5]
    far = (
        ketch.read_lance(uris["cosine"])
        .with_column("d", col("emb").embedding.cosine_distance(q))
        .sort("d", desc=True)
        .limit(3)
    )
    assert "a descending sort" in _optimized(far)
    assert far.select("id").to_pydict()["id"] == np.argsort(-_cosine(vectors, q), kind="stable")[:3].tolist()
    # A second sort key is not a pure top-k by distance: left alone.
    two_keys = (
        ketch.read_lance(uris["cosine"])
        .with_column("d", col("emb").embedding.cosine_distance(q))
        .sort(["d", "id"])
        .limit(3)
    )
    assert "Nearest pushdown" not in _optimized(two_keys)
    nearest = np.argsort(_cosine(vectors, q), kind="stable")[:3].tolist()
    assert two_keys.select("id").to_pydict()["id"] == nearest


def test_projection_above_keeps_only_the_asked_columns(data):
    uris, _, vectors, queries = data
    q = queries[6]
    result = _top(uris["cosine"], q, k=4).select("d", "id").to_arrow()
    assert result.column_names == ["d", "id"]
    assert result.num_rows == 4
    assert "_distance" not in result.column_names


def test_pushed_search_survives_plan_serialization(data):
    """The Ray runner ships optimized plans as bytes: the pushed search (and the indexes and the
    brute-force note) travel, and the copy runs to the same rows."""
    from ketch import _core

    uris, *_ = data
    q = np.linspace(-1, 1, DIM)
    for uri in (uris["cosine"], uris["plain"]):
        df = _top(uri, q).select("id", "d")
        optimized = df._plan.optimize()
        copy = _core.PyPlan.from_bytes(optimized.to_bytes())
        assert repr(copy) == repr(optimized)
        raw = _core.PyPlan.from_bytes(df._plan.to_bytes())
        assert repr(raw.optimize()) == repr(optimized)
        assert ketch.DataFrame(copy).to_pydict() == df.to_pydict()
    assert "Nearest pushdown = ANN via index" in repr(_top(uris["cosine"], q)._plan.optimize())


def test_rows_appended_after_the_index_are_searched_too(tmp_path):
    """Lance searches the fragments its index does not cover yet by brute force (fast_search is
    off): a row appended after create_index that equals the query comes back first, at d = 0."""
    rng = np.random.default_rng(3)
    dim = 16
    vectors = rng.normal(size=(1000, dim)).astype(np.float32)
    uri = str(tmp_path / "appended.lance")

    def table(ids: np.ndarray, values: np.ndarray) -> pa.Table:
        emb = pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), dim)
        return pa.table({"id": pa.array(ids, pa.int64()), "emb": emb})

    lance.write_dataset(table(np.arange(1000), vectors), uri)
    create_index(uri, "emb", "IVF_PQ", "cosine", num_partitions=4, num_sub_vectors=4)
    q = rng.normal(size=dim).astype(np.float32)
    lance.write_dataset(table(np.array([5000]), q[None, :]), uri, mode="append")
    df = ketch.read_lance(uri).with_column("d", col("emb").embedding.cosine_distance(q)).sort("d").limit(3)
    assert "Nearest pushdown = ANN via index emb_idx" in _optimized(df)
    result = df.select("id", "d").to_pydict()
    assert result["id"][0] == 5000
    assert result["d"][0] == pytest.approx(0.0, abs=1e-7)


@pytest.mark.ray_runner
def test_on_ray_the_indexed_and_brute_force_searches_give_the_native_rows(data, on_ray):
    """On the Ray runner the pushed search runs inside an engine worker (one scan task) and the
    brute force as a distributed top-k: both give the native runner's rows and exact distances."""
    uris, _table_, vectors, queries = data
    q = queries[0]
    for uri in (uris["cosine"], uris["plain"]):
        df = _top(uri, q)
        assert ("ANN via index" in _optimized(df)) == (uri == uris["cosine"])
        on_ray_result = df.to_pydict()
        ketch.set_runner_native()
        try:
            native = _top(uri, q).to_pydict()
        finally:
            ketch.runners._runner = on_ray
        assert on_ray_result["id"] == native["id"]
        _check_exact_d(on_ray_result, vectors, q, "cosine")
