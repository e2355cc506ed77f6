"""Subqueries that read the outer query's columns (correlated), planned as joins.

A correlated subquery is supported when its outer references are equalities between an inner
and an outer column in its WHERE clause (``WHERE l_orderkey = o_orderkey``): those become join
keys, the rest of its WHERE stays inside it. Then

- ``EXISTS (SELECT ...)`` / ``NOT EXISTS`` is a semi / anti join on the keys (TPC-H Q4, Q21, Q22);
- a scalar subquery ``(SELECT agg(...) FROM ... WHERE inner.k = outer.k ...)`` is the subquery
  grouped by its keys, left-joined onto the outer rows (TPC-H Q2, Q17, Q20): a row without
  inner rows gets null, as SQL's aggregate over no rows (except COUNT, which SQL makes 0: a
  correlated COUNT gives null here, documented);
- ``x NOT IN (SELECT y ...)`` (uncorrelated) is an anti join with SQL's null rules: no row when
  the subquery holds a null, a null ``x`` only when the subquery is empty (TPC-H Q16).

Other correlations (``inner.x <> outer.y``, outer columns in the SELECT list) raise
InvalidSQLException naming the condition. This is the textbook decorrelation of Kim (1982) and
Dayal (1987) for the equality case, as DuckDB and Spark apply it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlglot.expressions as exp

from ketch.expressions.expression import Expression, col, lit
from ketch.sql.errors import InvalidSQLException
from ketch.sql.relation import Relation
from ketch.sql.translate_expr import ExprContext, ExprTranslator, sql_text
from ketch.sql.translate_join import conjuncts

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame
    from ketch.sql.translate_query import QueryPlanner


def split_correlation(
    planner: QueryPlanner,
    select: exp.Expression,
    outer: Relation,
    ctes: dict[str, DataFrame],
    residual: list[exp.Expression] | None = None,
) -> tuple[exp.Select, list[tuple[exp.Column, exp.Column]]]:
    """``select`` without its correlated equalities, and those as (inner column, outer column)
    pairs ([] for an uncorrelated subquery). Other correlated conditions go to ``residual`` when
    it is given (EXISTS handles them); otherwise, or for an outer column outside WHERE, raises
    InvalidSQLException naming it."""
    if not isinstance(select, exp.Select):
        return select, []
    where = select.args.get("where")
    if where is None:
        return select, []
    bare = select.copy()
    bare.set("where", None)
    inner = planner._from(bare, ctes)

    def is_outer(column: exp.Column) -> bool:
        return not inner.find(column.table or None, column.name) and bool(
            outer.find(column.table or None, column.name)
        )

    pairs: list[tuple[exp.Column, exp.Column]] = []
    kept: list[exp.Expression] = []
    for cond in conjuncts(where.this):
        outer_columns = [c for c in cond.find_all(exp.Column) if is_outer(c)]
        if not outer_columns:
            kept.append(cond)
            continue
        sides = (cond.this, cond.expression) if isinstance(cond, exp.EQ) else (None, None)
        if all(isinstance(s, exp.Column) for s in sides):
            a, b = sides
            if is_outer(b) and not is_outer(a):
                pairs.append((a, b))
                continue
            if is_outer(a) and not is_outer(b):
                pairs.append((b, a))
                continue
        if residual is not None and not any(True for _ in cond.find_all(exp.Subquery, exp.Exists)):
            residual.append(cond)
            continue
        raise InvalidSQLException(
            f"Unsupported SQL: the correlated condition '{sql_text(cond)}' (a subquery may use the "
            "outer query's columns only in equalities with its own columns)"
        )
    if not pairs and not residual:
        return select, []
    out = select.copy()
    out.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
    for node in out.find_all(exp.Column):
        if is_outer(node) and node.find_ancestor(exp.Where) is None:
            raise InvalidSQLException(
                f"Unsupported SQL: the outer column '{sql_text(node)}' in a subquery's "
                f"{type(node.find_ancestor(exp.Expression)).__name__} (only its WHERE may use it)"
            )
    out.meta["ketch_is_outer"] = is_outer
    return out, pairs


def _outer_keys(outer: Relation, pairs: list[tuple[exp.Column, exp.Column]]) -> list[Expression]:
    translate = ExprTranslator(ExprContext(outer.resolve, "WHERE", allow_windows=False))
    return [translate(o) for _, o in pairs]


def exists_join(
    planner: QueryPlanner, rel: Relation, node: exp.Exists, negate: bool, ctes: dict[str, DataFrame]
) -> Relation:
    """``[NOT] EXISTS (subquery)`` as a semi (anti) join of ``rel`` with the subquery's rows."""
    residual: list[exp.Expression] = []
    sub, pairs = split_correlation(planner, node.this, rel, ctes, residual)
    how = "anti" if negate else "semi"
    if residual:
        by_extremes = _exists_by_extremes(planner, rel, sub, pairs, residual, negate, ctes)
        if by_extremes is not None:
            return by_extremes
        return _exists_with_residual(planner, rel, sub, pairs, residual, how, ctes)
    if pairs:
        keys = [planner.fresh("ekey") for _ in pairs]
        sub = sub.copy()
        sub.set(
            "expressions", [exp.alias_(inner.copy(), k) for (inner, _), k in zip(pairs, keys, strict=True)]
        )
        sub.set("distinct", None)
        right = planner.plan(sub, ctes)
        lkeys = [planner.fresh("lkey") for _ in pairs]
        left = rel.df.with_columns(dict(zip(lkeys, _outer_keys(rel, pairs), strict=True)))
        joined = left.join(right, left_on=lkeys, right_on=keys, how=how)
    else:  # uncorrelated: every row, or none, by whether the subquery has a row
        right = planner.plan(sub, ctes).limit(1)
        lkey, rkey = planner.fresh("lkey"), planner.fresh("rkey")
        right = right.select(lit(1).alias(rkey))
        joined = rel.df.with_columns({lkey: lit(1)}).join(right, left_on=lkey, right_on=rkey, how=how)
    return Relation(joined.select(*[f.internal for f in rel.fields]), rel.fields)


# ``inner op outer`` after swapping the sides of ``outer op inner``.
_FLIPPED: dict[type, type] = {
    exp.NEQ: exp.NEQ,
    exp.LT: exp.GT,
    exp.LTE: exp.GTE,
    exp.GT: exp.LT,
    exp.GTE: exp.LTE,
}


def _join_grouped(
    planner: QueryPlanner,
    rel: Relation,
    sub: exp.Select,
    pairs: list[tuple[exp.Column, exp.Column]],
    aggregates: list[exp.Expression],
    extra: dict[str, Expression],
    ctes: dict[str, DataFrame],
) -> DataFrame:
    """``sub`` grouped by its correlation keys (the inner side of ``pairs``), computing
    ``aggregates`` (aliased expressions), left-joined onto ``rel``'s rows by the outer side of the
    keys; ``extra`` adds columns to the outer rows first. An outer row without inner rows gets
    nulls, as SQL's aggregate over no rows."""
    keys = [planner.fresh("gkey") for _ in pairs]
    grouped = sub.copy()
    grouped.set(
        "expressions",
        [exp.alias_(inner.copy(), k) for (inner, _), k in zip(pairs, keys, strict=True)] + aggregates,
    )
    grouped.set("distinct", None)
    grouped.set("group", exp.Group(expressions=[inner.copy() for inner, _ in pairs]))
    right = planner.plan(grouped, ctes)
    lkeys = [planner.fresh("lkey") for _ in pairs]
    left = rel.df.with_columns({**dict(zip(lkeys, _outer_keys(rel, pairs), strict=True)), **extra})
    return left.join(right, left_on=lkeys, right_on=keys, how="left")


def _exists_by_extremes(
    planner: QueryPlanner,
    rel: Relation,
    sub: exp.Select,
    pairs: list[tuple[exp.Column, exp.Column]],
    residual: list[exp.Expression],
    negate: bool,
    ctes: dict[str, DataFrame],
) -> Relation | None:
    """EXISTS whose correlation is equalities plus one comparison ``inner op outer`` (TPC-H Q21's
    ``l2.l_suppkey <> l1.l_suppkey``), answered from the extremes of the inner column per key:
    some inner value differs from x when the non-null values are not all x (min or max differs),
    is below x when their minimum is, above x when their maximum is. The subquery is grouped by
    its keys (min, max) and left-joined onto the outer rows, so the outer rows are computed once;
    a null x, or a key without non-null inner values, matches nothing (SQL's unknown). This is
    the classic rewrite of a quantified comparison into an aggregate (``x > ANY (S)`` is
    ``x > MIN(S)``), applied per correlation key. None when the shape does not fit."""
    if not pairs or len(residual) != 1 or type(residual[0]) not in _FLIPPED:
        return None
    is_outer = sub.meta["ketch_is_outer"]
    cond = residual[0]
    op, a, b = type(cond), cond.this, cond.expression
    if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
        return None
    if is_outer(a) and not is_outer(b):
        a, b, op = b, a, _FLIPPED[op]
    elif not (is_outer(b) and not is_outer(a)):
        return None
    low, high, value = planner.fresh("xmin"), planner.fresh("xmax"), planner.fresh("xval")
    translate = ExprTranslator(ExprContext(rel.resolve, "WHERE", allow_windows=False))
    joined = _join_grouped(
        planner,
        rel,
        sub,
        pairs,
        [exp.alias_(exp.Min(this=a.copy()), low), exp.alias_(exp.Max(this=a.copy()), high)],
        {value: translate(b)},
        ctes,
    )
    x, lo, hi = col(value), col(low), col(high)
    if op is exp.NEQ:
        match = lo.not_null() & x.not_null() & ((lo != x) | (hi != x))
    elif op is exp.LT:
        match = lo < x
    elif op is exp.LTE:
        match = lo <= x
    elif op is exp.GT:
        match = hi > x
    else:
        match = hi >= x
    match = match.fill_null(False)
    kept = joined.where(~match if negate else match)
    return Relation(kept.select(*[f.internal for f in rel.fields]), rel.fields)


def _exists_with_residual(
    planner: QueryPlanner,
    rel: Relation,
    sub: exp.Select,
    pairs: list[tuple[exp.Column, exp.Column]],
    residual: list[exp.Expression],
    how: str,
    ctes: dict[str, DataFrame],
) -> Relation:
    """EXISTS whose correlation includes conditions other than equalities (TPC-H Q21's
    ``l2.l_suppkey <> l1.l_suppkey``). Whether a row passes depends only on the outer columns the
    subquery reads: the distinct tuples of those are joined with the subquery's rows on the
    equalities, the other conditions filter the pairs, and the outer rows are then semi (anti)
    joined with the tuples that found a match. A null in those columns never matches, as in SQL."""
    from ketch.sql.relation import Field

    is_outer = sub.meta["ketch_is_outer"]
    outer_cols: list[exp.Column] = [o for _, o in pairs]
    inner_cols: list[exp.Column] = [i for i, _ in pairs]
    for cond in residual:
        for column in cond.find_all(exp.Column):
            bucket = outer_cols if is_outer(column) else inner_cols
            if all(sql_text(column) != sql_text(c) for c in bucket):
                bucket.append(column)
    o_names = [planner.fresh("okey") for _ in outer_cols]
    i_names = [planner.fresh("ikey") for _ in inner_cols]
    translate = ExprTranslator(ExprContext(rel.resolve, "WHERE", allow_windows=False))
    outer_values = {n: translate(c) for n, c in zip(o_names, outer_cols, strict=True)}
    tuples = rel.df.select(*[v.alias(n) for n, v in outer_values.items()]).distinct()
    inner = sub.copy()
    inner.set("expressions", [exp.alias_(c.copy(), n) for c, n in zip(inner_cols, i_names, strict=True)])
    inner.set("distinct", None)
    right = planner.plan(inner, ctes)
    key_count = len(pairs)
    if key_count:
        pairs_df = tuples.join(right, left_on=o_names[:key_count], right_on=i_names[:key_count], how="inner")
    else:
        pairs_df = tuples.join(right, how="cross")
    # The residual conditions over the joined tuples: each column read by its alias.
    names = {sql_text(c): n for c, n in zip(outer_cols + inner_cols, o_names + i_names, strict=True)}
    fields = [Field(None, n, n) for n in o_names + i_names]
    joined = Relation(pairs_df, fields)
    check = ExprTranslator(ExprContext(joined.resolve, "WHERE", allow_windows=False))
    predicate: Expression | None = None
    for cond in residual:
        renamed = cond.copy().transform(
            lambda n: exp.column(names[sql_text(n)]) if isinstance(n, exp.Column) else n
        )
        part = check(renamed)
        predicate = part if predicate is None else predicate & part
    assert predicate is not None
    matched = pairs_df.where(predicate).select(*o_names).distinct()
    left = rel.df.with_columns(outer_values)
    out = left.join(matched, left_on=o_names, right_on=o_names, how=how)
    return Relation(out.select(*[f.internal for f in rel.fields]), rel.fields)


def correlated_scalar(
    planner: QueryPlanner, rel: Relation, sub: exp.Subquery, ctes: dict[str, DataFrame]
) -> tuple[Relation, Expression] | None:
    """A correlated scalar subquery joined onto ``rel`` (grouped by its keys, left join), and the
    column holding its value; None when ``sub`` is not correlated."""
    select, pairs = split_correlation(planner, sub.this, rel, ctes)
    if not pairs:
        return None
    if select.args.get("group") is not None or len(select.expressions) != 1:
        raise InvalidSQLException(
            f"Unsupported SQL: a correlated scalar subquery must compute one aggregate without GROUP BY: "
            f"'{sql_text(sub)}'"
        )
    value = planner.fresh("scalar")
    aggregate = exp.alias_(select.expressions[0].unalias().copy(), value)
    joined = _join_grouped(planner, rel, select, pairs, [aggregate], {}, ctes)
    return Relation(joined.select(*rel.df.column_names, value), rel.fields), col(value)


def not_in_join(planner: QueryPlanner, rel: Relation, node: exp.In, ctes: dict[str, DataFrame]) -> Relation:
    """``x NOT IN (SELECT y ...)`` (uncorrelated): rows whose ``x`` equals no ``y``, with SQL's
    null rules (a null ``y`` makes every row unknown: none stays; a null ``x`` stays only when
    the subquery is empty)."""
    sub = planner.plan(node.args["query"], ctes)
    if len(sub.column_names) != 1:
        raise InvalidSQLException(
            f"the subquery of NOT IN must return one column, got {len(sub.column_names)}: '{sql_text(node)}'"
        )
    value = ExprTranslator(ExprContext(rel.resolve, "WHERE", allow_windows=False))(node.this)
    y = sub.column_names[0]
    lkey, rkey, total, nulls, one_l, one_r = (
        planner.fresh(n) for n in ("lkey", "rkey", "n", "nn", "l1", "r1")
    )
    left = rel.df.with_columns({lkey: value})
    unmatched = left.join(sub.select(col(y).alias(rkey)), left_on=lkey, right_on=rkey, how="anti")
    counts = sub.agg(col(y).count("all").alias(total), col(y).count("null").alias(nulls))
    counts = counts.with_column(one_r, lit(1))
    joined = unmatched.with_column(one_l, lit(1)).join(counts, left_on=one_l, right_on=one_r, how="inner")
    keep = (col(total) == 0) | (col(lkey).not_null() & (col(nulls) == 0))
    return Relation(joined.where(keep).select(*[f.internal for f in rel.fields]), rel.fields)
