"""The seeds' retrieval pipeline, end to end in Ketch: text → chunks → embeddings → Lance → ANN search.

Corpus: the docstrings that ship with Python's own standard library (every public function, class
and method of ~110 modules; ``--small``: 12 modules), read by introspection — real text, no download.
Model: trained here on that corpus: scikit-learn TF-IDF (1-2 grams, sublinear tf) followed by
TruncatedSVD to 64 dimensions (latent semantic analysis), rows L2-normalized, pickled once per run.
Pipeline, all in Ketch:
  from_pydict(docstrings) → chunk (a generator UDF: one chunk per paragraph, whitespace collapsed)
  → drop short chunks → embed (@ketch.cls, batched, 2 instances) → write_lance
  → build an IVF_PQ index (ketch.io.lance.create_index, cosine)
  → semantic search: read_lance(...).with_column("d", col("emb").embedding.cosine_distance(q))
    .sort("d").limit(k), which the optimizer answers with Lance's indexed nearest-neighbour scan
  → a groupby summary (chunks and mean length per module).

Run: ``.venv/bin/python examples/semantic_search.py [--small] [--out DIR]`` (``KETCH_EXAMPLE_SMALL=1``
is the same as ``--small``). ``run(...)`` returns the hits and the summary, for the test.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import io
import os
import pickle
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import ketch
from ketch import col

DIM = 64
MIN_CHARS = 40

SMALL_MODULES = [
    "json", "re", "gzip", "zlib", "csv", "random", "heapq", "textwrap", "datetime", "pathlib", "shutil",
    "hashlib",
]  # fmt: skip
MORE_MODULES = [
    "os", "os.path", "itertools", "functools", "collections", "math", "statistics", "string", "difflib",
    "sqlite3", "base64", "tarfile", "zipfile", "urllib.parse", "http.client", "socket", "subprocess",
    "threading", "bisect", "time", "calendar", "decimal", "fractions", "uuid", "logging", "argparse",
    "unittest", "email.message", "tempfile", "glob", "fnmatch", "pickle", "copy", "pprint", "enum",
    "dataclasses", "typing", "inspect", "ast", "tokenize", "io", "struct", "codecs", "locale", "gettext",
    "configparser", "plistlib", "xml.etree.ElementTree", "html", "html.parser", "urllib.request",
    "ftplib", "smtplib", "imaplib", "poplib", "ssl", "select", "selectors", "signal", "mmap", "queue",
    "sched", "contextlib", "abc", "numbers", "cmath", "array", "weakref", "types", "operator",
    "traceback", "warnings", "pdb", "timeit", "trace", "sysconfig", "zipimport", "pkgutil", "importlib",
    "platform", "errno", "ctypes", "multiprocessing", "concurrent.futures", "asyncio", "ipaddress",
    "mimetypes", "secrets", "hmac", "lzma", "bz2", "shlex", "getpass", "wave", "colorsys", "graphlib",
    "zoneinfo",
]  # fmt: skip

QUERIES = [
    "parse a JSON document into Python objects",
    "match a regular expression pattern against a string",
    "decompress gzip data",
    "compute a SHA-256 hash digest",
    "read rows from a CSV file",
    "pick a random element from a sequence",
    "copy a directory tree recursively",
]


def read_docstrings(modules: list[str]) -> dict[str, list[str]]:
    """The corpus: one row per public function, class or method with a docstring
    (``module``, ``name``, ``doc``), each (module, name) once."""
    rows: dict[str, list[str]] = {"module": [], "name": [], "doc": []}
    seen: set[tuple[str, str]] = set()

    def add(module: str, name: str, obj: Any) -> None:
        doc = inspect.getdoc(obj)
        if doc and (module, name) not in seen:
            seen.add((module, name))
            rows["module"].append(module)
            rows["name"].append(name)
            rows["doc"].append(doc)

    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # a module this Python was built without (e.g. _sqlite3)
            continue
        for name, obj in sorted(vars(module).items()):
            if name.startswith("_") or not (inspect.isroutine(obj) or inspect.isclass(obj)):
                continue
            add(module_name, name, obj)
            if inspect.isclass(obj):
                for member, value in sorted(vars(obj).items()):
                    if not member.startswith("_") and inspect.isroutine(value):
                        add(module_name, f"{name}.{member}", value)
    return rows


@ketch.func(return_dtype=ketch.DataType.string())
def paragraphs(doc: str):  # noqa: ANN201 (a generator UDF: one output row per yielded item)
    """Chunks: a docstring's paragraphs (split at blank lines), whitespace collapsed to one space."""
    for paragraph in re.split(r"\n\s*\n", doc):
        text = " ".join(paragraph.split())
        if text:
            yield text


@ketch.func(return_dtype=ketch.DataType.int64())
def num_chars(text: str) -> int:
    return len(text)


def train_model(texts: list[str], dim: int = DIM) -> dict[str, Any]:
    """TF-IDF (1-2 grams, sublinear tf, English stop words) then TruncatedSVD to ``dim`` dimensions,
    fitted on ``texts``: {"tfidf", "svd"} (scikit-learn objects, pickled by reference to sklearn)."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    tfidf = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2, stop_words="english")
    matrix = tfidf.fit_transform(texts)
    return {"tfidf": tfidf, "svd": TruncatedSVD(n_components=dim, random_state=0).fit(matrix)}


def embed(model: dict[str, Any], texts: list[str]) -> np.ndarray:
    """Texts → (N, DIM) float32 unit vectors (rows of zeros stay zero)."""
    vectors = model["svd"].transform(model["tfidf"].transform(texts)).astype(np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


@ketch.cls(
    return_dtype=ketch.DataType.embedding(ketch.DataType.float32(), DIM), batch_size=256, concurrency=2
)
class Embedder:
    """Stateful UDF: loads the pickled model once per instance, embeds batches of chunks."""

    def __init__(self, model_path: str) -> None:
        with open(model_path, "rb") as f:
            self.model = pickle.load(f)

    def __call__(self, texts: ketch.Series) -> np.ndarray:
        return embed(self.model, texts.to_pylist())  # (N, 64) float32


def search(uri: str, model: dict[str, Any], query: str, k: int = 5) -> ketch.DataFrame:
    """The k chunks nearest to ``query`` by cosine distance, nearest first (column ``d``)."""
    q = embed(model, [query])[0]
    return (
        ketch.read_lance(uri)
        .with_column("d", col("emb").embedding.cosine_distance(q))
        .sort("d")
        .limit(k)
        .select("d", "module", "name", "text")
    )


def _rows(df: ketch.DataFrame) -> list[dict[str, Any]]:
    data = df.to_pydict()
    return [dict(zip(data, values, strict=True)) for values in zip(*data.values(), strict=True)]


def run(out_dir: Path, small: bool, verbose: bool = True) -> dict[str, Any]:
    """Runs the pipeline into ``out_dir``; returns {"chunks", "hits": {query: [rows]}, "summary",
    "index", "explain"} (rows as dicts)."""
    say = print if verbose else (lambda *_: None)
    modules = SMALL_MODULES if small else SMALL_MODULES + MORE_MODULES
    start = time.perf_counter()

    corpus = ketch.from_pydict(read_docstrings(modules))
    chunks = (
        corpus.select("module", "name", paragraphs(col("doc")).alias("text"))
        .with_column("n_chars", num_chars(col("text")))
        .where(col("n_chars") >= MIN_CHARS)
    )
    texts = chunks.select("text").to_pydict()["text"]
    say(f"{len(texts)} chunks from {len(modules)} modules")

    model = train_model(texts)
    model_path = out_dir / "text_model.pkl"
    model_path.write_bytes(pickle.dumps(model))

    uri = str(out_dir / "stdlib_docs.lance")
    embedded = chunks.with_column("emb", Embedder(str(model_path))(col("text")))
    embedded.write_lance(uri, mode="overwrite")

    from ketch.io.lance import create_index

    # IVF_PQ: ~sqrt(rows) lists, 8 sub-vectors of 8 dims each (PQ trains 256 codes: needs >= 256 rows).
    index = create_index(
        uri, "emb", index_type="IVF_PQ", metric="cosine", num_partitions=max(2, int(len(texts) ** 0.5) // 2),
        num_sub_vectors=8,
    )  # fmt: skip
    rows_indexed = index["num_rows_indexed"]
    say(f"index {index['name']} ({index['index_type']}, {index['metric']}) over {rows_indexed} rows")

    hits: dict[str, list[dict[str, Any]]] = {}
    explain = ""
    for query in QUERIES:
        df = search(uri, model, query)
        if not explain:
            buffer = io.StringIO()
            df.explain(show_all=True, file=buffer)
            explain = buffer.getvalue()
        rows = _rows(df)
        hits[query] = rows
        say(f"\n=== {query!r}")
        for row in rows:
            say(f"  {row['d']:.3f}  {row['module']}.{row['name']}: {row['text'][:90]}")

    summary = (
        ketch.read_lance(uri)
        .groupby("module")
        .agg(col("text").count().alias("chunks"), col("n_chars").mean().alias("mean_chars"))
        .sort(["chunks", "module"], desc=[True, False])
    )
    summary = _rows(summary)
    say("\n=== chunks per module (top 10)")
    for row in summary[:10]:
        say(f"  {row['module']:<24} {row['chunks']:>5} chunks, {row['mean_chars']:.0f} chars on average")
    say(f"\ndone in {time.perf_counter() - start:.1f}s")
    return {"chunks": len(texts), "hits": hits, "summary": summary, "index": index, "explain": explain}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", default=os.environ.get("KETCH_EXAMPLE_SMALL") == "1")
    parser.add_argument(
        "--out", type=Path, default=None, help="where the Lance dataset goes (default: a temp dir)"
    )
    args = parser.parse_args()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        run(args.out, args.small)
    else:
        with tempfile.TemporaryDirectory(prefix="ketch-semantic-") as tmp:
            run(Path(tmp), args.small)
    return 0


if __name__ == "__main__":
    sys.exit(main())
