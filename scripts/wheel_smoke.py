"""A first run of an installed Ketch wheel (``scripts/wheel_install_check.sh`` runs it in a fresh
venv, outside the repository, with no compiler on PATH): Parquet in and out, an image decoded and
resized, a batch UDF in thread and in process mode, a groupby. Each step checks its values; exit
status 0 when all hold. Prints where ketch was imported from and how long ``import ketch`` took."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

start = time.perf_counter()
import ketch  # noqa: E402

import_s = time.perf_counter() - start
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from ketch import col  # noqa: E402


@ketch.func.batch(return_dtype=ketch.DataType.int64(), use_process=False)
def plus_one_thread(x):
    return x.to_arrow().to_numpy() + 1


@ketch.func.batch(return_dtype=ketch.DataType.int64(), use_process=True)
def plus_one_process(x):
    return x.to_arrow().to_numpy() + 1


def main() -> int:
    assert "site-packages" in ketch.__file__, ketch.__file__
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "in.parquet"
        n = 10_000
        pq.write_table(pa.table({"id": np.arange(n), "k": np.arange(n) % 7}), source)

        df = ketch.read_parquet(str(source)).where(col("id") % 2 == 0)
        df = df.with_column("a", plus_one_thread(col("id"))).with_column("b", plus_one_process(col("id")))
        out = df.groupby("k").agg(col("a").sum(), col("b").sum(), col("id").count().alias("n")).sort("k")
        got = out.to_pydict()
        ids = np.arange(0, n, 2)
        assert got["k"] == list(range(7)), got["k"]
        assert got["n"] == [int((ids % 7 == k).sum()) for k in range(7)], got["n"]
        assert got["a"] == [int((ids[ids % 7 == k] + 1).sum()) for k in range(7)], got["a"]
        assert got["a"] == got["b"], (got["a"], got["b"])

        target = Path(tmp) / "out"
        out.write_parquet(str(target))
        back = pq.read_table(target).sort_by("k")
        assert back.column("a").to_pylist() == got["a"]

        pixels = np.zeros((40, 60, 3), np.uint8)
        pixels[:, :30] = 200
        images = ketch.from_pydict({"t": [pixels]}).with_column(
            "png", col("t").cast(ketch.DataType.image("RGB")).image.encode("png")
        )
        small = images.select(col("png").image.decode(mode="RGB").image.resize(30, 20).alias("s"))
        img = small.to_pydict()["s"][0]
        assert img.shape == (20, 30, 3), img.shape
        assert img[:, :14].min() == 200 and img[:, 16:].max() == 0, img[:, 13:17, 0]
    print(f"ketch {ketch.__version__} from {Path(ketch.__file__).parent}: import {import_s:.2f} s; smoke ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
