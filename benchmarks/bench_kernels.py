"""Per-kernel throughput: string and temporal kernels on $KETCH_BENCH_ROWS rows vs Polars, DuckDB, Daft.

One Parquet file (``prepare``) with a string column ``s`` (1-8 words from an ASCII + non-ASCII
vocabulary -- é, ü, Ω, ж, 日本語, an emoji -- some with a ``#<digits>`` tag, some with leading and
trailing spaces, 5% nulls; drawn from a pool of 100k distinct strings), timestamps ``ts``
(timestamp[us], naive) and ``tsz`` (timestamp[us, America/New_York]), uniform over 2000-2029 with
2% nulls, an int64 ``i`` (0-999) and a float64 ``f`` (quarters 0-24.75).

One case per engine and query (``<engine>_q<N>``); each reads the Parquet file (only the columns its
query uses), computes the query's kernels and sums each output column (a bool counted as 0/1), so
no engine can skip the work; the check is the sum of those sums and must agree across engines:

- q1 lower, upper (UTF-8 bytes of each result)
- q2 contains a literal ("an", "ü")
- q3 regex extract (``[0-9]+``, group 0 as bytes) and regex replace (``[aeiou]+`` -> ``_``)
- q4 length in characters + substr(2, 5) (bytes of the slice: character slicing is checked)
- q5 split on " " + list length
- q6 strip (whitespace) + lpad(12, "*") (truncating, as Daft and DuckDB)
- q7 year, month, day, hour of ``ts`` + hour of ``tsz`` (its New York wall clock)
- q8 strftime("%Y-%m-%d %H:%M:%S") then contains "-01 0" (day 1, hours 00-09)
- q9 truncate to 1 day and to 1 hour, then unix epoch seconds
- q10 ts + 36 hours -> unix epoch seconds; ts - 2000-01-01 -> duration total seconds
- q11 convert_time_zone(tsz, "Asia/Kolkata") -> hour and minute (the +05:30 offset)
- q12 hash of ``s``, ``i``, ``f`` compared with the hash of a literal (counts of equal values)

DuckDB runs with ``TimeZone = 'America/New_York'`` (its zoned fields read the session zone).
``KETCH_BENCH_ROWS`` (default 10,000,000) sets the size; the data directory is per size.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable
from typing import Any

N_ROWS = int(os.environ.get("KETCH_BENCH_ROWS", "10000000"))
DATA_NAME = f"kernels_{N_ROWS}"
__doc__ = (__doc__ or "").replace("$KETCH_BENCH_ROWS", f"{N_ROWS:,}")
QUERIES = range(1, 13)
POOL = 100_000
ZONE = "America/New_York"

_WORDS = (
    "alpha banana cherry delta echo foxtrot golf hotel india juliet kilo lima mango nectar oscar "
    "papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu Data Frame Engine Ketch "
    "café naïve über Ærø Ωmega жизнь 日本語 東京 emoji😀 résumé Ünïcödé Øresund ÉCOLE Ελλάδα"
).split()


def prepare(data_dir: str) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(17)
    pool = []
    for _ in range(POOL):
        words = rng.choice(_WORDS, rng.integers(1, 9))
        text = " ".join(words)
        if rng.random() < 0.4:
            text += f" #{rng.integers(0, 1_000_000)}"
        if rng.random() < 0.15:
            text = " " * int(rng.integers(1, 4)) + text + " " * int(rng.integers(0, 3))
        pool.append(text)
    pool_array = pa.array(pool, pa.large_string())

    epoch_2000 = 946_684_800_000_000
    span = 30 * 365 * 86_400_000_000
    out = os.path.join(data_dir, "kernels.parquet")
    writer = None
    chunk = 1_000_000
    for start in range(0, N_ROWS, chunk):
        n = min(chunk, N_ROWS - start)
        strings = pool_array.take(pa.array(rng.integers(0, POOL, n)))
        s_valid = rng.random(n) >= 0.05
        ts_valid = rng.random(n) >= 0.02
        tsz_valid = rng.random(n) >= 0.02
        table = pa.table(
            {
                "s": pa.compute.if_else(pa.array(s_valid), strings, pa.scalar(None, pa.large_string())),
                "ts": pa.array(epoch_2000 + rng.integers(0, span, n), pa.timestamp("us"), mask=~ts_valid),
                "tsz": pa.array(
                    epoch_2000 + rng.integers(0, span, n), pa.timestamp("us", tz=ZONE), mask=~tsz_valid
                ),
                "i": pa.array(rng.integers(0, 1000, n), pa.int64()),
                "f": pa.array(rng.integers(0, 100, n) / 4.0, pa.float64()),
            }
        )
        if writer is None:
            writer = pq.ParquetWriter(out, table.schema)
        writer.write_table(table, row_group_size=chunk)
    assert writer is not None
    writer.close()


def setup(engine: str) -> None:
    """Imports the engine before the timer starts: the benchmark times kernels, not imports."""
    import importlib

    importlib.import_module(engine.split("_")[0])


def _path(d: str) -> str:
    return os.path.join(d, "kernels.parquet")


def _first_string() -> str:
    """The literal of q12's string hash: a value of the pool (about N_ROWS / POOL rows)."""
    return "alpha banana"


HASH_INT = 42
HASH_FLOAT = 10.25
T2000 = datetime.datetime(2000, 1, 1)
H36 = datetime.timedelta(hours=36)


# -- Ketch and Daft: the same code (Daft 0.7's expression methods) -------------------------------------
def _daft_api_exprs(q: int, col: Any, lit: Any, int64: Any) -> list[Any]:
    """Query ``q`` written once against Daft 0.7's API: ``col``/``lit``/``int64`` come from Ketch or
    from Daft (a Daft user switches by changing the import)."""
    s, ts, tsz = col("s"), col("ts"), col("tsz")
    if q == 1:
        return [s.lower().length_bytes(), s.upper().length_bytes()]
    if q == 2:
        return [s.contains("an").cast(int64), s.contains("ü").cast(int64)]
    if q == 3:
        return [s.regexp_extract(r"[0-9]+").length_bytes(), s.regexp_replace(r"[aeiou]+", "_").length_bytes()]
    if q == 4:
        return [s.length(), s.substr(2, 5).length_bytes()]
    if q == 5:
        return [s.split(" ").list_count("all")]
    if q == 6:
        return [s.strip().length_bytes(), s.lpad(12, "*").length_bytes()]
    if q == 7:
        return [ts.year(), ts.month(), ts.day(), ts.hour(), tsz.hour()]
    if q == 8:
        return [ts.strftime("%Y-%m-%d %H:%M:%S").contains("-01 0").cast(int64)]
    if q == 9:
        return [ts.date_trunc("1 day").to_unix_epoch("s"), ts.date_trunc("1 hour").to_unix_epoch("s")]
    if q == 10:
        return [(ts + lit(H36)).to_unix_epoch("s"), (ts - lit(T2000)).total_seconds()]
    if q == 11:
        kolkata = tsz.convert_time_zone("Asia/Kolkata")
        return [kolkata.hour(), kolkata.minute()]
    if q == 12:
        return [
            (s.hash() == lit(_first_string()).hash()).cast(int64),
            (col("i").hash() == lit(HASH_INT).cast(int64).hash()).cast(int64),
            (col("f").hash() == lit(HASH_FLOAT).hash()).cast(int64),
        ]
    raise ValueError(q)


def _sum_all(df: Any, exprs: list[Any], col: Any) -> dict:
    """Selects ``exprs`` as c0, c1, ... and sums each: the check is the total."""
    df = df.select(*[e.alias(f"c{k}") for k, e in enumerate(exprs)])
    t = df.agg(*[col(f"c{k}").sum() for k in range(len(exprs))]).to_arrow()
    return {"rows": N_ROWS, "check": float(sum(t.column(k)[0].as_py() or 0 for k in range(t.num_columns)))}


def _run_ketch(q: int, d: str) -> dict:
    import pyarrow as pa

    import ketch

    return _sum_all(
        ketch.read_parquet(_path(d)), _daft_api_exprs(q, ketch.col, ketch.lit, pa.int64()), ketch.col
    )


def _run_daft(q: int, d: str) -> dict:
    import daft

    return _sum_all(
        daft.read_parquet(_path(d)), _daft_api_exprs(q, daft.col, daft.lit, daft.DataType.int64()), daft.col
    )


# -- Polars ------------------------------------------------------------------------------------------
def _polars_exprs(q: int) -> list[Any]:
    import polars as pl

    s, ts, tsz = pl.col("s"), pl.col("ts"), pl.col("tsz")
    if q == 1:
        return [s.str.to_lowercase().str.len_bytes(), s.str.to_uppercase().str.len_bytes()]
    if q == 2:
        return [s.str.contains("an", literal=True), s.str.contains("ü", literal=True)]
    if q == 3:
        return [
            s.str.extract(r"([0-9]+)", 1).str.len_bytes(),
            s.str.replace_all(r"[aeiou]+", "_").str.len_bytes(),
        ]
    if q == 4:
        return [s.str.len_chars(), s.str.slice(2, 5).str.len_bytes()]
    if q == 5:
        return [s.str.split(" ").list.len()]
    if q == 6:
        return [s.str.strip_chars().str.len_bytes(), s.str.head(12).str.pad_start(12, "*").str.len_bytes()]
    if q == 7:
        return [ts.dt.year(), ts.dt.month(), ts.dt.day(), ts.dt.hour(), tsz.dt.hour()]
    if q == 8:
        return [ts.dt.strftime("%Y-%m-%d %H:%M:%S").str.contains("-01 0", literal=True)]
    if q == 9:
        return [ts.dt.truncate("1d").dt.epoch("s"), ts.dt.truncate("1h").dt.epoch("s")]
    if q == 10:
        return [(ts + H36).dt.epoch("s"), (ts - T2000).dt.total_seconds()]
    if q == 11:
        kolkata = tsz.dt.convert_time_zone("Asia/Kolkata")
        return [kolkata.dt.hour(), kolkata.dt.minute()]
    if q == 12:
        return [
            s.hash() == pl.lit(_first_string()).hash(),
            pl.col("i").hash() == pl.lit(HASH_INT, pl.Int64).hash(),
            pl.col("f").hash() == pl.lit(HASH_FLOAT, pl.Float64).hash(),
        ]
    raise ValueError(q)


def _run_polars(q: int, d: str) -> dict:
    import polars as pl

    exprs = [e.cast(pl.Int64).sum().alias(f"c{k}") for k, e in enumerate(_polars_exprs(q))]
    t = pl.scan_parquet(_path(d)).select(exprs).collect()
    return {"rows": N_ROWS, "check": float(sum(v or 0 for v in t.row(0)))}


# -- DuckDB ------------------------------------------------------------------------------------------
_DUCKDB = {
    1: ["strlen(lower(s))", "strlen(upper(s))"],
    2: ["contains(s, 'an')", "contains(s, 'ü')"],
    # regexp_extract gives '' (not null) on no match: the same byte sum.
    3: ["strlen(regexp_extract(s, '[0-9]+'))", "strlen(regexp_replace(s, '[aeiou]+', '_', 'g'))"],
    4: ["length(s)", "strlen(substring(s, 3, 5))"],
    5: ["len(string_split(s, ' '))"],
    6: ["strlen(trim(s))", "strlen(lpad(s, 12, '*'))"],
    7: ["year(ts)", "month(ts)", "day(ts)", "hour(ts)", "hour(tsz)"],
    8: ["contains(strftime(ts, '%Y-%m-%d %H:%M:%S'), '-01 0')"],
    9: ["epoch_us(date_trunc('day', ts)) // 1000000", "epoch_us(date_trunc('hour', ts)) // 1000000"],
    10: [
        "epoch_us(ts + INTERVAL 36 HOUR) // 1000000",
        "date_diff('second', TIMESTAMP '2000-01-01 00:00:00', ts)",
    ],
    11: ["hour(timezone('Asia/Kolkata', tsz))", "minute(timezone('Asia/Kolkata', tsz))"],
    12: ["hash(s) = hash('{s}')", "hash(i) = hash({i}::BIGINT)", "hash(f) = hash({f}::DOUBLE)"],
}


def _run_duckdb(q: int, d: str) -> dict:
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET TimeZone = '{ZONE}'")
    exprs = [e.format(s=_first_string(), i=HASH_INT, f=HASH_FLOAT) for e in _DUCKDB[q]]
    select = ", ".join(f"sum(({e})::BIGINT)" for e in exprs)
    row = con.execute(f"select {select} from read_parquet('{_path(d)}')").fetchone()
    return {"rows": N_ROWS, "check": float(sum(v or 0 for v in row))}


def _case(run: Callable[[int, str], dict], q: int) -> Callable[[str], dict]:
    def case(d: str) -> dict:
        return run(q, d)

    case.__name__ = f"{run.__name__[len('_run_') :]}_q{q}"
    return case


for _q in QUERIES:
    for _run in (_run_ketch, _run_polars, _run_duckdb, _run_daft):
        globals()[f"run_{_run.__name__[len('_run_') :]}_q{_q}"] = _case(_run, _q)
