"""Correlated subqueries (EXISTS, NOT EXISTS, scalar aggregates), NOT IN with SQL's null rules,
comma joins planned as keyed joins in a connected order, OR branches sharing a join key, outer
joins filtering their inner side from ON, and SUBSTRING's 1-based positions. Expected values
are computed in plain Python over the same rows; the TPC-H queries exercising them (Q2, Q4,
Q13, Q16, Q17, Q19, Q20, Q22) are checked against DuckDB by benchmarks/bench_tpch.py."""

from __future__ import annotations

import io

import ketch
from ketch import col

ORDERS = {"o_key": [1, 2, 3, 4, 5], "o_cust": [10, 10, 20, 30, None], "o_total": [5.0, 7.0, 1.0, 9.0, 2.0]}
ITEMS = {
    "l_order": [1, 1, 2, 3, 3, 3, 9],
    "l_qty": [1, 8, 2, 5, 5, 6, 1],
    "l_late": [True, False, False, True, False, False, True],
}
CUSTS = {"c_key": [10, 20, 30, 40], "c_name": ["a", "b", "c", "d"]}


def _optimized(df: ketch.DataFrame) -> str:
    plan = io.StringIO()
    df.explain(show_all=True, file=plan)
    return plan.getvalue().split("== Optimized Logical Plan ==")[1].split("== Physical Plan ==")[0]


def _sql(query: str) -> dict:
    tables = {
        "orders": ketch.from_pydict(ORDERS),
        "items": ketch.from_pydict(ITEMS),
        "custs": ketch.from_pydict(CUSTS),
    }
    return ketch.sql(query, **tables).to_pydict()


def test_exists_and_not_exists_are_semi_and_anti_joins_on_the_correlated_keys():
    late = {o for o, late in zip(ITEMS["l_order"], ITEMS["l_late"], strict=True) if late}
    got = _sql("SELECT o_key FROM orders WHERE EXISTS (SELECT * FROM items WHERE l_order = o_key AND l_late)")
    assert sorted(got["o_key"]) == sorted(o for o in ORDERS["o_key"] if o in late)
    got = _sql("SELECT o_key FROM orders WHERE NOT EXISTS (SELECT * FROM items WHERE l_order = o_key)")
    assert sorted(got["o_key"]) == [o for o in ORDERS["o_key"] if o not in ITEMS["l_order"]]
    # Uncorrelated: all rows or none.
    assert len(_sql("SELECT o_key FROM orders WHERE EXISTS (SELECT 1 FROM custs)")["o_key"]) == 5
    assert _sql("SELECT o_key FROM orders WHERE EXISTS (SELECT 1 FROM custs WHERE c_key > 99)")["o_key"] == []


def test_a_correlated_scalar_aggregate_is_grouped_and_left_joined():
    got = _sql(
        "SELECT l_order, l_qty FROM items "
        "WHERE l_qty > (SELECT avg(i2.l_qty) FROM items AS i2 WHERE i2.l_order = items.l_order) "
        "ORDER BY l_order, l_qty"
    )
    averages: dict[int, list[int]] = {}
    for o, q in zip(ITEMS["l_order"], ITEMS["l_qty"], strict=True):
        averages.setdefault(o, []).append(q)
    want = sorted(
        (o, q)
        for o, q in zip(ITEMS["l_order"], ITEMS["l_qty"], strict=True)
        if q > sum(averages[o]) / len(averages[o])
    )
    assert list(zip(got["l_order"], got["l_qty"], strict=True)) == want
    # In the SELECT list too; an order without items gets null (SQL's aggregate over no rows).
    got = _sql(
        "SELECT o_key, (SELECT sum(l_qty) FROM items WHERE l_order = o_key) AS q FROM orders ORDER BY o_key"
    )
    assert got == {"o_key": [1, 2, 3, 4, 5], "q": [9, 2, 16, None, None]}


def test_not_in_a_subquery_follows_sql_null_rules():
    got = _sql(
        "SELECT c_key FROM custs WHERE c_key NOT IN (SELECT o_cust FROM orders WHERE o_cust IS NOT NULL)"
    )
    assert sorted(got["c_key"]) == [40]
    # The subquery holds a null: no row is known to be NOT IN it.
    assert _sql("SELECT c_key FROM custs WHERE c_key NOT IN (SELECT o_cust FROM orders)")["c_key"] == []
    # An empty subquery: every row, nulls included.
    got = _sql("SELECT o_key FROM orders WHERE o_cust NOT IN (SELECT c_key FROM custs WHERE c_key > 99)")
    assert sorted(got["o_key"]) == [1, 2, 3, 4, 5]


def test_comma_joins_hash_join_in_a_connected_order_and_keep_select_star_order():
    # custs and items share no key: the planner joins orders in between.
    query = (
        "SELECT * FROM custs, items, orders WHERE c_key = o_cust AND l_order = o_key AND l_qty > 1 "
        "ORDER BY l_order, l_qty"
    )
    got = _sql(query)
    assert list(got) == [*CUSTS, *ITEMS, *ORDERS]
    rows = [
        (c, n, lo, q, late, ok, oc, t)
        for c, n in zip(CUSTS["c_key"], CUSTS["c_name"], strict=True)
        for lo, q, late in zip(ITEMS["l_order"], ITEMS["l_qty"], ITEMS["l_late"], strict=True)
        for ok, oc, t in zip(ORDERS["o_key"], ORDERS["o_cust"], ORDERS["o_total"], strict=True)
        if c == oc and lo == ok and q > 1
    ]
    assert list(zip(*got.values(), strict=True)) == sorted(rows, key=lambda r: (r[2], r[3]))
    tables = {"custs": CUSTS, "items": ITEMS, "orders": ORDERS}
    optimized = _optimized(ketch.sql(query, **{k: ketch.from_pydict(v) for k, v in tables.items()}))
    assert "Type = cross" not in optimized and optimized.count("Type = inner") == 2


def test_a_join_key_shared_by_every_or_branch_becomes_a_key():
    query = (
        "SELECT o_key, l_qty FROM orders, items WHERE (o_key = l_order AND l_qty < 3) "
        "OR (o_key = l_order AND o_total > 8) ORDER BY o_key, l_qty"
    )
    got = _sql(query)
    rows = sorted(
        (ok, q)
        for ok, t in zip(ORDERS["o_key"], ORDERS["o_total"], strict=True)
        for lo, q in zip(ITEMS["l_order"], ITEMS["l_qty"], strict=True)
        if ok == lo and (q < 3 or t > 8)
    )
    assert list(zip(got["o_key"], got["l_qty"], strict=True)) == rows
    df = ketch.from_pydict(ORDERS).join(ketch.from_pydict(ITEMS), how="cross")
    df = df.where(
        ((col("o_key") == col("l_order")) & (col("l_qty") < 3))
        | ((col("o_key") == col("l_order")) & (col("o_total") > 8))
    )
    assert "On = [o_key] = [l_order]" in _optimized(df)


def test_an_outer_joins_on_condition_on_its_inner_side_filters_before_the_join():
    got = _sql(
        "SELECT c_key, o_key FROM custs LEFT JOIN orders ON c_key = o_cust AND o_total > 4 "
        "ORDER BY c_key, o_key"
    )
    assert got == {"c_key": [10, 10, 20, 30, 40], "o_key": [1, 2, None, 4, None]}


def test_substring_counts_positions_from_one():
    got = _sql(
        "SELECT substring(c_name || '-xyz', 2, 2) AS s, substring('hello', 0, 2) AS t FROM custs LIMIT 1"
    )
    assert got == {"s": ["-x"], "t": ["h"]}


def test_a_scalar_subquery_in_having_compares_with_the_aggregated_rows():
    # TPC-H Q11's shape: groups whose total passes a fraction of the grand total.
    got = _sql(
        "SELECT l_order, sum(l_qty) AS q FROM items GROUP BY l_order "
        "HAVING sum(l_qty) > (SELECT sum(l_qty) * 0.2 FROM items) ORDER BY l_order"
    )
    totals: dict[int, int] = {}
    for o, q in zip(ITEMS["l_order"], ITEMS["l_qty"], strict=True):
        totals[o] = totals.get(o, 0) + q
    bound = sum(ITEMS["l_qty"]) * 0.2
    assert got == {
        "l_order": [o for o in sorted(totals) if totals[o] > bound],
        "q": [t for o, t in sorted(totals.items()) if t > bound],
    }


def test_exists_with_a_non_equality_correlation_joins_the_outer_tuples():
    # TPC-H Q21's shape: orders with another item of a different quantity, and with none.
    query = (
        "SELECT l_order, l_qty FROM items AS i1 WHERE {} (SELECT * FROM items AS i2 "
        "WHERE i2.l_order = i1.l_order AND i2.l_qty <> i1.l_qty) ORDER BY l_order, l_qty"
    )
    rows = list(zip(ITEMS["l_order"], ITEMS["l_qty"], strict=True))
    other = {(o, q): any(o2 == o and q2 != q for o2, q2 in rows) for o, q in rows}
    got = _sql(query.format("EXISTS"))
    assert list(zip(got["l_order"], got["l_qty"], strict=True)) == sorted(r for r in rows if other[r])
    got = _sql(query.format("NOT EXISTS"))
    assert list(zip(got["l_order"], got["l_qty"], strict=True)) == sorted(r for r in rows if not other[r])


def test_exists_with_one_comparison_correlation_uses_the_extremes_with_sql_null_rules():
    # Every comparison, either side written first, nulls on both sides: the per-key min/max
    # rewrite must give what the row-by-row definition gives (a null compares as unknown).
    pts = {"k": [1, 1, 1, 2, 2, 3, 3, None, 4], "v": [1, 2, None, 5, 5, None, None, 3, 7]}
    rows = list(zip(pts["k"], pts["v"], strict=True))
    ops = {
        "<>": lambda a, b: a != b,
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
    }
    flipped = {"<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
    tables = {"p": ketch.from_pydict(pts), "q": ketch.from_pydict(pts)}
    for op, fn in ops.items():

        def exists(k, v, fn=fn):
            return any(
                k is not None and k2 == k and v is not None and v2 is not None and fn(v2, v)
                for k2, v2 in rows
            )

        for cond in (f"q.v {op} p.v", f"p.v {flipped[op]} q.v"):
            for neg in ("", "NOT "):
                query = (
                    f"SELECT p.k, p.v FROM p WHERE {neg}EXISTS (SELECT * FROM q WHERE q.k = p.k AND {cond})"
                )
                df = ketch.sql(query, **tables)
                want = sorted(
                    ((k, v) for k, v in rows if exists(k, v) != bool(neg)),
                    key=lambda r: (r[0] or -1, r[1] or -1),
                )
                got = df.to_pydict()
                got_rows = sorted(
                    zip(got["k"], got["v"], strict=True), key=lambda r: (r[0] or -1, r[1] or -1)
                )
                assert got_rows == want, (query, got_rows, want)
    # One comparison: grouped min/max, the outer rows once; two: the outer tuples' path.
    one = _optimized(
        ketch.sql("SELECT p.k FROM p WHERE EXISTS (SELECT * FROM q WHERE q.k = p.k AND q.v <> p.v)", **tables)
    )
    assert "agg_min(col(v))" in one and "agg_max(col(v))" in one and "Type = left" in one
    two = _optimized(
        ketch.sql(
            "SELECT p.k FROM p WHERE EXISTS (SELECT * FROM q WHERE q.k = p.k AND q.v <> p.v AND q.v > p.k)",
            **tables,
        )
    )
    assert "agg_min" not in two and "Type = semi" in two


def test_an_or_across_tables_implies_a_filter_on_each_table(tmp_path):
    # TPC-H Q7's shape: each table gets the OR of its own parts, pushed into its scan; the
    # original condition still decides (same rows as evaluating it row by row).
    import pyarrow as pa
    import pyarrow.parquet as pq

    a = {"ak": [1, 2, 3, 4, 5], "an": ["FR", "DE", "IT", "FR", None]}
    b = {"bk": [1, 2, 3, 4, 5], "bn": ["DE", "FR", "DE", "ES", "DE"]}
    for name, data in (("a", a), ("b", b)):
        pq.write_table(pa.table(data), tmp_path / f"{name}.parquet")
    tables = {n: ketch.read_parquet(str(tmp_path / f"{n}.parquet")) for n in ("a", "b")}
    query = (
        "SELECT ak, an, bn FROM a, b WHERE ak = bk AND "
        "((an = 'FR' AND bn = 'DE') OR (an = 'DE' AND bn = 'FR') OR (an = 'IT' AND bk > 2)) ORDER BY ak"
    )
    df = ketch.sql(query, **tables)
    want = [
        (k, an, bn)
        for k, an in zip(a["ak"], a["an"], strict=True)
        for k2, bn in zip(b["bk"], b["bn"], strict=True)
        if k == k2 and ((an == "FR" and bn == "DE") or (an == "DE" and bn == "FR") or (an == "IT" and k2 > 2))
    ]
    plan = io.StringIO()
    df.explain(show_all=True, file=plan)
    got = df.to_pydict()
    assert list(zip(got["ak"], got["an"], got["bn"], strict=True)) == want
    optimized = plan.getvalue().split("== Optimized Logical Plan ==")[1].split("== Physical Plan ==")[0]
    pushdowns = [line for line in optimized.splitlines() if "Filter pushdown" in line]
    # a's scan gets an = FR or DE or IT; b's the OR of each branch's part on b: bn = DE,
    # bn = FR, bk > 2.
    assert any("FR" in p and "DE" in p and "IT" in p for p in pushdowns), optimized
    assert any("bn" in p and "bk" in p for p in pushdowns), pushdowns
