"""A trivial batch UDF (x + 1) over 10M int64 rows, batch size 1,024: per-row overhead of the UDF runtime.

Ketch in thread mode and in process mode (worker process, Arrow IPC in shared memory), Daft's
current batch UDF API (``@daft.func.batch``; its legacy ``@daft.udf`` as ``daft_legacy_udf``), Ray
Data's map_batches (pyarrow batches) and a pandas row-wise apply, each building its 10M rows in
memory first (not timed). Every engine gets the same function body (``x.to_arrow().to_numpy() +
1`` where the engine hands a Series; Ray Data a pyarrow table, pandas a scalar per row) and sums
the result inside the engine. `metric` gives nanoseconds per row; the check is the exact sum.
"""

from __future__ import annotations

N_ROWS = 10_000_000
BATCH = 1024
DATA_NAME = "udf_overhead"


def prepare(data_dir: str) -> None:
    """Nothing to prepare: every engine makes its rows in memory."""


def _result(total: int, seconds_since: float) -> dict:
    import time

    seconds = time.perf_counter() - seconds_since
    expected = N_ROWS * (N_ROWS - 1) // 2 + N_ROWS
    assert total == expected, (total, expected)
    return {"rows": N_ROWS, "check": int(total), "metric": f"{seconds / N_ROWS * 1e9:.0f} ns/row"}


def _ketch(use_process: bool) -> dict:
    import time

    import numpy as np

    import ketch
    from ketch import col

    @ketch.func.batch(return_dtype=ketch.DataType.int64(), batch_size=BATCH, use_process=use_process)
    def plus_one(x):
        return x.to_arrow().to_numpy() + 1

    df = ketch.from_pydict({"x": np.arange(N_ROWS, dtype=np.int64)}).collect()
    start = time.perf_counter()
    out = df.select(plus_one(col("x")).alias("y")).agg(col("y").sum()).to_pydict()
    return _result(out["y"][0], start)


def run_ketch(data_dir: str) -> dict:
    return _ketch(use_process=False)


def run_ketch_process(data_dir: str) -> dict:
    return _ketch(use_process=True)


def _daft(legacy: bool) -> dict:
    import time

    import daft
    import numpy as np
    from daft import col

    def plus_one(x):
        return x.to_arrow().to_numpy() + 1

    if legacy:
        udf = daft.udf(return_dtype=daft.DataType.int64(), batch_size=BATCH)(plus_one)
    else:
        udf = daft.func.batch(return_dtype=daft.DataType.int64(), batch_size=BATCH)(plus_one)
    df = daft.from_pydict({"x": np.arange(N_ROWS, dtype=np.int64)}).collect()
    start = time.perf_counter()
    out = df.select(udf(col("x")).alias("y")).sum("y").to_pydict()
    return _result(out["y"][0], start)


def run_daft(data_dir: str) -> dict:
    """Daft's current batch UDF API, ``@daft.func.batch`` (what Ketch's ``@ketch.func.batch``
    mirrors)."""
    return _daft(legacy=False)


def run_daft_legacy_udf(data_dir: str) -> dict:
    """Daft's legacy ``@daft.udf``, for reference (the ratio a user of the old API sees)."""
    return _daft(legacy=True)


def run_ray_data(data_dir: str) -> dict:
    import time

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ds = ray.data.from_arrow(pa.table({"x": np.arange(N_ROWS, dtype=np.int64)})).materialize()

    def plus_one(batch: pa.Table) -> pa.Table:
        return pa.table({"y": pc.add(batch.column("x"), 1)})

    start = time.perf_counter()
    total = ds.map_batches(plus_one, batch_size=BATCH, batch_format="pyarrow").sum("y")
    out = _result(int(total), start)
    ray.shutdown()
    return out


def run_pandas_apply(data_dir: str) -> dict:
    import time

    import numpy as np
    import pandas as pd

    df = pd.DataFrame({"x": np.arange(N_ROWS, dtype=np.int64)})
    start = time.perf_counter()
    total = int(df["x"].apply(lambda v: v + 1).sum())
    return _result(total, start)
