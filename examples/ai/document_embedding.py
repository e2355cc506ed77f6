"""Workload 3, document embedding (Daft's ``benchmarking/ai/document_embedding``): PDFs → text of
every page (Ketch's native pdfium kernel, no Python) → explode pages → chunks of up to 120 words
(a native RE2 kernel, ``str.extract_all``) → ``embed_text`` (a sentence-transformers model from a
local directory, batches of 64) → ``write_lance`` → a vector index on the embeddings.

    python examples/ai/document_embedding.py --small [--ray]

The embedding model is tiny and random (``tiny_models.build_text_embedder``): the vectors are
meaningless, the compute per chunk is real, and every engine runs the same model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tiny_models  # noqa: E402
import workload_data  # noqa: E402

import ketch  # noqa: E402
from ketch import col  # noqa: E402
from ketch.functions import embed_text, pdf_text  # noqa: E402

CHUNK_WORDS = 120
BATCH_SIZE = 64


def prepare(data: Path, size: str) -> dict[str, Any]:
    return {
        "pdfs": str(workload_data.make_pdfs(data, workload_data.SIZES[size]["pdfs"])),
        "model_dir": str(tiny_models.build_text_embedder(data / "models")),
    }


def pipeline(pdfs: str, model_dir: str) -> ketch.DataFrame:
    df = ketch.from_glob_path(f"{pdfs}/*.pdf").select("path")
    df = df.with_column("pages", pdf_text(col("path").url.to_file())).explode("pages")
    df = df.with_columns({"page_number": col("pages")["page_number"], "page_text": col("pages")["text"]})
    df = df.where(col("page_text").not_null() & (col("page_text").str.length() > 0))
    # Runs of up to CHUNK_WORDS words (RE2, native): every word in exactly one chunk, in order.
    chunks = col("page_text").str.extract_all(rf"(?:\S+\s+){{0,{CHUNK_WORDS - 1}}}\S+")
    df = df.with_column("chunk", chunks).explode("chunk").where(col("chunk").not_null())
    df = df.with_column("embedding", embed_text(col("chunk"), model=model_dir, batch_size=BATCH_SIZE))
    return df.select("path", "page_number", "chunk", "embedding")


def run(pdfs: str, model_dir: str, out: str) -> dict[str, Any]:
    from ketch.io.lance_index import create_index

    pipeline(pdfs, model_dir).write_lance(out)
    rows = ketch.read_lance(out).count_rows()
    create_index(out, "embedding", "IVF_FLAT", "cosine", num_partitions=max(1, min(64, rows // 256)))
    result = ketch.read_lance(out).select("chunk").to_pydict()
    return {"rows": rows, "check": float(sum(len(c) for c in result["chunk"]))}


if __name__ == "__main__":
    from workload_common import main

    main("document_embedding", prepare, run)
