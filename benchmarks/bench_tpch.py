"""TPC-H at scale factor $KETCH_TPCH_SF (default 1), dbgen data in Parquet: all 22 queries.

One case per engine and query (``<engine>_q<N>``); each reads the Parquet files itself. Decimal
columns are stored as DOUBLE, so every engine does float arithmetic; dates stay DATE. Standard
substitution parameters. Q1, Q3, Q5, Q6 and Q10 run in every engine's DataFrame API (Ketch, Daft,
Polars; DuckDB in SQL).
The other 17 run as the TPC-H SQL text (``tpch_queries/qNN.sql``, DuckDB's ``tpch_queries()``
with the spec's default parameters) in every engine's SQL front end (``ketch.sql``, DuckDB,
``polars.SQLContext`` over lazy Parquet scans, ``daft.sql``). Every query's check is the digest of
the whole result (``checks.digest``, computed after the timed region: per column by position, the
sum and the key-weighted sum of its values, text by a hash of its bytes), equal up to float
rounding (``checks.FLOAT_RTOL``). A query a peer's
SQL cannot plan is that case's error (Daft 0.7.26: Q21's correlated EXISTS, Q22's
SUBSTRING ... FROM ... FOR).

The data comes from DuckDB's ``tpch`` extension, taken from PyPI (``duckdb-extension-tpch``, which
only loads into ``duckdb==1.5.5``): ``prepare`` makes a generator venv ``benchmarks/.venv-tpchgen``
with those two packages once, runs ``CALL dbgen(sf=...)`` there and writes ``<table>.parquet`` for
the eight tables.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

SF = float(os.environ.get("KETCH_TPCH_SF", "1"))
# Peers' wrong answers, known and reported upstream-style here: the harness marks them "known
# mismatch" (the time is not compared) instead of failing the run. Ketch's cases never go here.
KNOWN_MISMATCHES = {
    "daft_q15": "Daft 0.7.26 returns no row; Q15 keeps the supplier whose revenue sum equals the max"
    " of the same sums, an equality of float sums computed twice (the cause inside Daft not traced)",
}
DATA_NAME = f"tpch_sf{SF:g}"
__doc__ = __doc__.replace("$KETCH_TPCH_SF (default 1)", f"{SF:g}")

TABLES = ("lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region")
GEN_VENV = Path(__file__).resolve().parent / ".venv-tpchgen"
QUERIES = Path(__file__).resolve().parent / "tpch_queries"  # the 22 queries' SQL text
GEN_PY = GEN_VENV / "bin" / "python"
GEN_PACKAGES = ("duckdb==1.5.5", "duckdb-extension-tpch==1.5.5")

# Run in the generator venv: argv = [scale factor, output directory].
_GENERATE = r"""
import os, sys
import duckdb, duckdb_extension_tpch

sf, out = float(sys.argv[1]), sys.argv[2]
ext_dir = os.path.join(os.path.dirname(duckdb_extension_tpch.__file__), "extensions")
ext = os.path.join(ext_dir, "v" + duckdb.__version__, "tpch.duckdb_extension")
con = duckdb.connect()
con.execute(f"LOAD '{ext}'")
con.execute(f"CALL dbgen(sf={sf})")
for table in sys.argv[3:]:
    cols = con.execute(
        "select column_name, data_type from information_schema.columns"
        " where table_name = ? order by ordinal_position",
        [table],
    ).fetchall()
    select = ", ".join(
        f'CAST("{name}" AS DOUBLE) AS "{name}"' if kind.upper().startswith("DECIMAL") else f'"{name}"'
        for name, kind in cols
    )
    path = os.path.join(out, table + ".parquet")
    con.execute(f"COPY (SELECT {select} FROM {table}) TO '{path}' (FORMAT parquet)")
    print(f"  {table}: {con.execute(f'select count(*) from {table}').fetchone()[0]} rows", flush=True)
"""


def _generator_works() -> bool:
    if not GEN_PY.exists():
        return False
    probe = "import duckdb, duckdb_extension_tpch; assert duckdb.__version__ == '1.5.5'"
    return subprocess.run([str(GEN_PY), "-c", probe], capture_output=True).returncode == 0


def prepare(data_dir: str) -> None:
    if not _generator_works():
        print("bench tpch: installing duckdb 1.5.5 + tpch extension into benchmarks/.venv-tpchgen ...")
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(GEN_VENV)], check=True)
        subprocess.run([str(GEN_PY), "-m", "pip", "install", "-q", *GEN_PACKAGES], check=True)
    subprocess.run([str(GEN_PY), "-c", _GENERATE, str(SF), data_dir, *TABLES], check=True)


def setup(engine: str) -> None:
    """Imports the engine before the timer starts: the benchmark times queries, not imports."""
    import importlib

    importlib.import_module(engine.split("_")[0])


def _path(d: str, table: str) -> str:
    return os.path.join(d, f"{table}.parquet")


# Substitution parameters (TPC-H spec defaults).
Q1_SHIPDATE = datetime.date(1998, 9, 2)  # 1998-12-01 - 90 days
Q3_SEGMENT, Q3_DATE = "BUILDING", datetime.date(1995, 3, 15)
Q5_REGION, Q5_FROM, Q5_TO = "ASIA", datetime.date(1994, 1, 1), datetime.date(1995, 1, 1)
Q6_FROM, Q6_TO = datetime.date(1994, 1, 1), datetime.date(1995, 1, 1)
Q10_FROM, Q10_TO = datetime.date(1993, 10, 1), datetime.date(1994, 1, 1)


def _arrow_result(t, column: str) -> dict:
    """The whole result's digest (``checks.digest``, after the timed region; every engine gives
    the spec's columns in the spec's order). ``column``: the query's main measure, kept for reading
    the JSON (``revenue``)."""
    revenue = float(sum(v for v in t.column(column).to_pylist() if v is not None))
    return {"rows": t.num_rows, "result": t, "revenue": revenue, "scale_factor": SF}


# -- Ketch -------------------------------------------------------------------------------------------
# Ketch aggregates only plain columns (``agg_sum needs a column as its input``), so the computed
# inputs of sum() are added with with_column first.


def _ketch_tables(d: str):
    import ketch

    return lambda name: ketch.read_parquet(_path(d, name))


def _ketch_revenue(col):
    return col("l_extendedprice") * (1 - col("l_discount"))


def run_ketch_q1(d: str) -> dict:
    from ketch import col

    t = _ketch_tables(d)
    out = (
        t("lineitem")
        .where(col("l_shipdate") <= Q1_SHIPDATE)
        .with_column("disc_price", _ketch_revenue(col))
        .with_column("charge", col("disc_price") * (1 + col("l_tax")))
        .groupby("l_returnflag", "l_linestatus")
        .agg(
            col("l_quantity").sum().alias("sum_qty"),
            col("l_extendedprice").sum().alias("sum_base_price"),
            col("disc_price").sum().alias("sum_disc_price"),
            col("charge").sum().alias("sum_charge"),
            col("l_quantity").mean().alias("avg_qty"),
            col("l_extendedprice").mean().alias("avg_price"),
            col("l_discount").mean().alias("avg_disc"),
            col("l_quantity").count().alias("count_order"),
        )
        .sort(["l_returnflag", "l_linestatus"])
        .to_arrow()
    )
    return _arrow_result(out, "sum_charge")


def run_ketch_q3(d: str) -> dict:
    from ketch import col

    t = _ketch_tables(d)
    customer = t("customer").where(col("c_mktsegment") == Q3_SEGMENT)
    orders = t("orders").where(col("o_orderdate") < Q3_DATE)
    lineitem = t("lineitem").where(col("l_shipdate") > Q3_DATE)
    out = (
        customer.join(orders, left_on="c_custkey", right_on="o_custkey")
        .join(lineitem, left_on="o_orderkey", right_on="l_orderkey")
        .with_column("volume", _ketch_revenue(col))
        .groupby("o_orderkey", "o_orderdate", "o_shippriority")
        .agg(col("volume").sum().alias("revenue"))
        .sort(["revenue", "o_orderdate"], desc=[True, False])
        .limit(10)
        .select("o_orderkey", "revenue", "o_orderdate", "o_shippriority")
        .to_arrow()
    )
    return _arrow_result(out, "revenue")


def run_ketch_q5(d: str) -> dict:
    from ketch import col

    t = _ketch_tables(d)
    region = t("region").where(col("r_name") == Q5_REGION)
    orders = t("orders").where((col("o_orderdate") >= Q5_FROM) & (col("o_orderdate") < Q5_TO))
    out = (
        region.join(t("nation"), left_on="r_regionkey", right_on="n_regionkey")
        .join(t("customer"), left_on="n_nationkey", right_on="c_nationkey")
        .join(orders, left_on="c_custkey", right_on="o_custkey")
        .join(t("lineitem"), left_on="o_orderkey", right_on="l_orderkey")
        .join(t("supplier"), left_on=["l_suppkey", "n_nationkey"], right_on=["s_suppkey", "s_nationkey"])
        .with_column("volume", _ketch_revenue(col))
        .groupby("n_name")
        .agg(col("volume").sum().alias("revenue"))
        .sort("revenue", desc=True)
        .to_arrow()
    )
    return _arrow_result(out, "revenue")


def run_ketch_q6(d: str) -> dict:
    from ketch import col

    t = _ketch_tables(d)
    out = (
        t("lineitem")
        .where(
            (col("l_shipdate") >= Q6_FROM)
            & (col("l_shipdate") < Q6_TO)
            & (col("l_discount") >= 0.05)
            & (col("l_discount") <= 0.07)
            & (col("l_quantity") < 24)
        )
        .with_column("volume", col("l_extendedprice") * col("l_discount"))
        .agg(col("volume").sum().alias("revenue"))
        .to_arrow()
    )
    return _arrow_result(out, "revenue")


def run_ketch_q10(d: str) -> dict:
    from ketch import col

    t = _ketch_tables(d)
    orders = t("orders").where((col("o_orderdate") >= Q10_FROM) & (col("o_orderdate") < Q10_TO))
    lineitem = t("lineitem").where(col("l_returnflag") == "R")
    out = (
        t("customer")
        .join(orders, left_on="c_custkey", right_on="o_custkey")
        .join(lineitem, left_on="o_orderkey", right_on="l_orderkey")
        .join(t("nation"), left_on="c_nationkey", right_on="n_nationkey")
        .with_column("volume", _ketch_revenue(col))
        .groupby("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")
        .agg(col("volume").sum().alias("revenue"))
        .sort("revenue", desc=True)
        .limit(20)
        .select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")
        .to_arrow()
    )
    return _arrow_result(out, "revenue")


# -- Daft --------------------------------------------------------------------------------------------


def _daft_tables(d: str):
    import daft

    return lambda name: daft.read_parquet(_path(d, name))


def run_daft_q1(d: str) -> dict:
    from daft import col

    t = _daft_tables(d)
    disc_price = col("l_extendedprice") * (1 - col("l_discount"))
    out = (
        t("lineitem")
        .where(col("l_shipdate") <= Q1_SHIPDATE)
        .groupby("l_returnflag", "l_linestatus")
        .agg(
            col("l_quantity").sum().alias("sum_qty"),
            col("l_extendedprice").sum().alias("sum_base_price"),
            disc_price.sum().alias("sum_disc_price"),
            (disc_price * (1 + col("l_tax"))).sum().alias("sum_charge"),
            col("l_quantity").mean().alias("avg_qty"),
            col("l_extendedprice").mean().alias("avg_price"),
            col("l_discount").mean().alias("avg_disc"),
            col("l_quantity").count().alias("count_order"),
        )
        .sort(["l_returnflag", "l_linestatus"])
        .to_arrow()
    )
    return _arrow_result(out, "sum_charge")


def run_daft_q3(d: str) -> dict:
    from daft import col

    t = _daft_tables(d)
    customer = t("customer").where(col("c_mktsegment") == Q3_SEGMENT)
    orders = t("orders").where(col("o_orderdate") < Q3_DATE)
    lineitem = t("lineitem").where(col("l_shipdate") > Q3_DATE)
    out = (
        customer.join(orders, left_on=col("c_custkey"), right_on=col("o_custkey"))
        .join(lineitem, left_on=col("o_orderkey"), right_on=col("l_orderkey"))
        .groupby("o_orderkey", "o_orderdate", "o_shippriority")
        .agg((col("l_extendedprice") * (1 - col("l_discount"))).sum().alias("revenue"))
        .sort(["revenue", "o_orderdate"], desc=[True, False])
        .limit(10)
        .select("o_orderkey", "revenue", "o_orderdate", "o_shippriority")
        .to_arrow()
    )
    return _arrow_result(out, "revenue")


def run_daft_q5(d: str) -> dict:
    from daft import col

    t = _daft_tables(d)
    region = t("region").where(col("r_name") == Q5_REGION)
    orders = t("orders").where((col("o_orderdate") >= Q5_FROM) & (col("o_orderdate") < Q5_TO))
    out = (
        region.join(t("nation"), left_on=col("r_regionkey"), right_on=col("n_regionkey"))
        .join(t("customer"), left_on=col("n_nationkey"), right_on=col("c_nationkey"))
        .join(orders, left_on=col("c_custkey"), right_on=col("o_custkey"))
        .join(t("lineitem"), left_on=col("o_orderkey"), right_on=col("l_orderkey"))
        .join(
            t("supplier"),
            left_on=[col("l_suppkey"), col("n_nationkey")],
            right_on=[col("s_suppkey"), col("s_nationkey")],
        )
        .groupby("n_name")
        .agg((col("l_extendedprice") * (1 - col("l_discount"))).sum().alias("revenue"))
        .sort("revenue", desc=True)
        .to_arrow()
    )
    return _arrow_result(out, "revenue")


def run_daft_q6(d: str) -> dict:
    from daft import col

    t = _daft_tables(d)
    out = (
        t("lineitem")
        .where(
            (col("l_shipdate") >= Q6_FROM)
            & (col("l_shipdate") < Q6_TO)
            & (col("l_discount") >= 0.05)
            & (col("l_discount") <= 0.07)
            & (col("l_quantity") < 24)
        )
        .agg((col("l_extendedprice") * col("l_discount")).sum().alias("revenue"))
        .to_arrow()
    )
    return _arrow_result(out, "revenue")


def run_daft_q10(d: str) -> dict:
    from daft import col

    t = _daft_tables(d)
    orders = t("orders").where((col("o_orderdate") >= Q10_FROM) & (col("o_orderdate") < Q10_TO))
    lineitem = t("lineitem").where(col("l_returnflag") == "R")
    out = (
        t("customer")
        .join(orders, left_on=col("c_custkey"), right_on=col("o_custkey"))
        .join(lineitem, left_on=col("o_orderkey"), right_on=col("l_orderkey"))
        .join(t("nation"), left_on=col("c_nationkey"), right_on=col("n_nationkey"))
        .groupby("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")
        .agg((col("l_extendedprice") * (1 - col("l_discount"))).sum().alias("revenue"))
        .sort("revenue", desc=True)
        .limit(20)
        .select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")
        .to_arrow()
    )
    return _arrow_result(out, "revenue")


# -- Polars (lazy) -----------------------------------------------------------------------------------


def _polars_tables(d: str):
    import polars as pl

    return lambda name: pl.scan_parquet(_path(d, name))


def _polars_result(df, column: str) -> dict:
    return {"rows": df.height, "result": df, "revenue": float(df[column].sum()), "scale_factor": SF}


def run_polars_q1(d: str) -> dict:
    import polars as pl

    t = _polars_tables(d)
    disc_price = pl.col("l_extendedprice") * (1 - pl.col("l_discount"))
    out = (
        t("lineitem")
        .filter(pl.col("l_shipdate") <= Q1_SHIPDATE)
        .group_by("l_returnflag", "l_linestatus")
        .agg(
            pl.col("l_quantity").sum().alias("sum_qty"),
            pl.col("l_extendedprice").sum().alias("sum_base_price"),
            disc_price.sum().alias("sum_disc_price"),
            (disc_price * (1 + pl.col("l_tax"))).sum().alias("sum_charge"),
            pl.col("l_quantity").mean().alias("avg_qty"),
            pl.col("l_extendedprice").mean().alias("avg_price"),
            pl.col("l_discount").mean().alias("avg_disc"),
            pl.len().alias("count_order"),
        )
        .sort("l_returnflag", "l_linestatus")
        .collect()
    )
    return _polars_result(out, "sum_charge")


def run_polars_q3(d: str) -> dict:
    import polars as pl

    t = _polars_tables(d)
    customer = t("customer").filter(pl.col("c_mktsegment") == Q3_SEGMENT)
    orders = t("orders").filter(pl.col("o_orderdate") < Q3_DATE)
    lineitem = t("lineitem").filter(pl.col("l_shipdate") > Q3_DATE)
    out = (
        customer.join(orders, left_on="c_custkey", right_on="o_custkey")
        .join(lineitem, left_on="o_orderkey", right_on="l_orderkey")
        .group_by("o_orderkey", "o_orderdate", "o_shippriority")
        .agg((pl.col("l_extendedprice") * (1 - pl.col("l_discount"))).sum().alias("revenue"))
        .sort(["revenue", "o_orderdate"], descending=[True, False])
        .head(10)
        .select("o_orderkey", "revenue", "o_orderdate", "o_shippriority")
        .collect()
    )
    return _polars_result(out, "revenue")


def run_polars_q5(d: str) -> dict:
    import polars as pl

    t = _polars_tables(d)
    region = t("region").filter(pl.col("r_name") == Q5_REGION)
    orders = t("orders").filter(pl.col("o_orderdate").is_between(Q5_FROM, Q5_TO, closed="left"))
    out = (
        region.join(t("nation"), left_on="r_regionkey", right_on="n_regionkey")
        .join(t("customer"), left_on="n_nationkey", right_on="c_nationkey")
        .join(orders, left_on="c_custkey", right_on="o_custkey")
        .join(t("lineitem"), left_on="o_orderkey", right_on="l_orderkey")
        .join(t("supplier"), left_on=["l_suppkey", "n_nationkey"], right_on=["s_suppkey", "s_nationkey"])
        .group_by("n_name")
        .agg((pl.col("l_extendedprice") * (1 - pl.col("l_discount"))).sum().alias("revenue"))
        .sort("revenue", descending=True)
        .collect()
    )
    return _polars_result(out, "revenue")


def run_polars_q6(d: str) -> dict:
    import polars as pl

    t = _polars_tables(d)
    out = (
        t("lineitem")
        .filter(
            pl.col("l_shipdate").is_between(Q6_FROM, Q6_TO, closed="left"),
            pl.col("l_discount").is_between(0.05, 0.07),
            pl.col("l_quantity") < 24,
        )
        .select((pl.col("l_extendedprice") * pl.col("l_discount")).sum().alias("revenue"))
        .collect()
    )
    return _polars_result(out, "revenue")


def run_polars_q10(d: str) -> dict:
    import polars as pl

    t = _polars_tables(d)
    orders = t("orders").filter(pl.col("o_orderdate").is_between(Q10_FROM, Q10_TO, closed="left"))
    lineitem = t("lineitem").filter(pl.col("l_returnflag") == "R")
    out = (
        t("customer")
        .join(orders, left_on="c_custkey", right_on="o_custkey")
        .join(lineitem, left_on="o_orderkey", right_on="l_orderkey")
        .join(t("nation"), left_on="c_nationkey", right_on="n_nationkey")
        .group_by("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")
        .agg((pl.col("l_extendedprice") * (1 - pl.col("l_discount"))).sum().alias("revenue"))
        .sort("revenue", descending=True)
        .head(20)
        .select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")
        .collect()
    )
    return _polars_result(out, "revenue")


# -- DuckDB (the TPC-H SQL text over the Parquet files) ---------------------------------------------


def _duckdb(d: str, query: str, column: str) -> dict:
    import duckdb

    con = duckdb.connect()
    for table in TABLES:
        con.execute(f"create view {table} as select * from read_parquet('{_path(d, table)}')")
    t = con.sql((QUERIES / f"q{int(query[1:]):02d}.sql").read_text()).arrow()
    t = t.read_all() if hasattr(t, "read_all") else t
    return _arrow_result(t, column)


def run_duckdb_q1(d: str) -> dict:
    return _duckdb(d, "q1", "sum_charge")


def run_duckdb_q3(d: str) -> dict:
    return _duckdb(d, "q3", "revenue")


def run_duckdb_q5(d: str) -> dict:
    return _duckdb(d, "q5", "revenue")


def run_duckdb_q6(d: str) -> dict:
    return _duckdb(d, "q6", "revenue")


def run_duckdb_q10(d: str) -> dict:
    return _duckdb(d, "q10", "revenue")


# -- The other 17 queries: the TPC-H SQL text, Ketch vs DuckDB -------------------------------------
SQL_ONLY = (2, 4, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22)


def _digest(t) -> dict:
    """The whole result, digested after the timed region (``checks.digest``: per column by
    position, its sum and its key-weighted sum; text by a hash of its bytes)."""
    return {"rows": t.num_rows, "result": t, "scale_factor": SF}


def _ketch_sql(d: str, n: int) -> dict:
    import ketch

    frames = {table: ketch.read_parquet(_path(d, table)) for table in TABLES}
    return _digest(ketch.sql((QUERIES / f"q{n:02d}.sql").read_text(), **frames).to_arrow())


def _duckdb_sql(d: str, n: int) -> dict:
    import duckdb

    con = duckdb.connect()
    for table in TABLES:
        con.execute(f"create view {table} as select * from read_parquet('{_path(d, table)}')")
    t = con.sql((QUERIES / f"q{n:02d}.sql").read_text()).arrow()
    return _digest(t.read_all() if hasattr(t, "read_all") else t)


def _polars_sql(d: str, n: int) -> dict:
    import polars as pl

    frames = {table: pl.scan_parquet(_path(d, table)) for table in TABLES}
    out = pl.SQLContext(frames).execute((QUERIES / f"q{n:02d}.sql").read_text()).collect()
    return _digest(out.to_arrow())


def _daft_sql(d: str, n: int) -> dict:
    import daft

    frames = {table: daft.read_parquet(_path(d, table)) for table in TABLES}
    return _digest(daft.sql((QUERIES / f"q{n:02d}.sql").read_text(), **frames).to_arrow())


def _sql_case(run, n: int):
    def case(d: str) -> dict:
        return run(d, n)

    return case


for _n in SQL_ONLY:
    globals()[f"run_ketch_q{_n}"] = _sql_case(_ketch_sql, _n)
    globals()[f"run_duckdb_q{_n}"] = _sql_case(_duckdb_sql, _n)
    globals()[f"run_polars_q{_n}"] = _sql_case(_polars_sql, _n)
    globals()[f"run_daft_q{_n}"] = _sql_case(_daft_sql, _n)
