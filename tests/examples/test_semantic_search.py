"""examples/semantic_search.py on its small slice (12 standard-library modules' docstrings): the
whole retrieval pipeline runs, the IVF_PQ index is used by the search, and the answers are right."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import cloudpickle
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "semantic_search.py"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("semantic_search_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        # The UDF worker processes cannot import the example by name: ship its code by value (as
        # when it runs as __main__).
        cloudpickle.register_pickle_by_value(module)
        yield module.run(tmp_path_factory.mktemp("semantic"), small=True, verbose=False)
    finally:
        cloudpickle.unregister_pickle_by_value(module)
        sys.modules.pop(spec.name, None)


def test_corpus_chunks_and_index(result):
    assert result["chunks"] > 300  # IVF_PQ trains 256 codes: it needs at least 256 rows
    index = result["index"]
    assert (index["index_type"], index["metric"], index["column"]) == ("IVF_PQ", "cosine", "emb")
    assert index["num_rows_indexed"] == result["chunks"]
    assert "Nearest pushdown = ANN via index emb_idx (IVF_PQ, cosine)" in result["explain"]


@pytest.mark.parametrize(
    ("query", "module", "word"),
    [
        ("parse a JSON document into Python objects", "json", "json"),
        ("match a regular expression pattern against a string", "re", "match"),
        ("pick a random element from a sequence", "random", "random"),
        ("copy a directory tree recursively", "shutil", "directory"),
        ("compute a SHA-256 hash digest", "hashlib", "digest"),
        ("read rows from a CSV file", "csv", "csv"),
    ],
)
def test_top_hits_are_on_topic(result, query, module, word):
    hits = result["hits"][query]
    assert len(hits) == 5
    top = hits[0]
    assert top["module"] == module, hits
    assert word in top["text"].lower(), top
    distances = [hit["d"] for hit in hits]
    assert distances == sorted(distances) and 0 <= distances[0] < 0.5


def test_groupby_summary(result):
    summary = result["summary"]
    modules = [row["module"] for row in summary]
    assert len(modules) == len(set(modules)) == 12
    assert sum(row["chunks"] for row in summary) == result["chunks"]
    counts = [row["chunks"] for row in summary]
    assert counts == sorted(counts, reverse=True)
    assert all(row["mean_chars"] >= 40 for row in summary)
