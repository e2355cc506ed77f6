"""sqlglot query trees → DataFrame operations.

A SELECT is planned in SQL's logical order: FROM (tables, subqueries, CTEs, joins) → WHERE →
GROUP BY / aggregates → HAVING → the SELECT list (window functions included) → DISTINCT →
ORDER BY → LIMIT / OFFSET. Every step is a DataFrame method, so the result is the same logical
plan the DataFrame API builds; all checks happen here, while the plan is built.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sqlglot import exp

from ketch.dataframe import DataFrame
from ketch.expressions.expression import Expression, col, lit
from ketch.sql.errors import InvalidSQLException
from ketch.sql.functions import literal_int
from ketch.sql.relation import Field, Relation
from ketch.sql.translate_expr import (
    ExprContext,
    ExprTranslator,
    aggregate_calls,
    literal_value,
    sql_text,
    unsupported,
)


@dataclass
class _Item:
    """One SELECT list entry after ``*`` expansion: its tree and output name."""

    node: exp.Expression
    name: str
    field: Field | None = None  # set for a star-expanded column


class QueryPlanner:
    """Plans queries against named tables (``bindings``); CTEs shadow bindings inside their query."""

    def __init__(self, tables: dict[str, DataFrame]) -> None:
        self.tables = tables
        self._counter = itertools.count()

    def fresh(self, stem: str) -> str:
        return f"__sql_{stem}{next(self._counter)}"

    # -- queries -----------------------------------------------------------------------------------------
    def plan(self, node: exp.Expression, ctes: dict[str, DataFrame] | None = None) -> DataFrame:
        """The DataFrame of a query tree, with its output column names."""
        ctes = dict(ctes or {})
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is not None:
            if with_.args.get("recursive"):
                raise unsupported(with_, "WITH RECURSIVE")
            for cte in with_.expressions:
                planned = self.plan(cte.this, ctes)
                # WITH t(x, y) AS (...): the column list renames the query's columns in order.
                table_alias = cte.args.get("alias")
                renames = [c.name for c in table_alias.columns] if table_alias is not None else []
                if renames:
                    if len(renames) != len(planned.column_names):
                        raise InvalidSQLException(
                            f"CTE '{cte.alias_or_name}' names {len(renames)} columns, its query has "
                            f"{len(planned.column_names)}"
                        )
                    planned = planned.select(
                        *[col(old).alias(new) for old, new in zip(planned.column_names, renames, strict=True)]
                    )
                ctes[cte.alias_or_name] = planned
        if isinstance(node, exp.Subquery):
            return self._modifiers(self.plan(node.this, ctes), node, ctes)
        if isinstance(node, exp.Select):
            return self._select(node, ctes)
        if isinstance(node, exp.Union | exp.Intersect | exp.Except):
            return self._modifiers(self._set_operation(node, ctes), node, ctes)
        raise unsupported(node, f"{type(node).__name__} statement")

    def _set_operation(self, node: exp.Expression, ctes: dict[str, DataFrame]) -> DataFrame:
        left = self.plan(node.this, ctes)
        right = self.plan(node.expression, ctes)
        distinct = node.args.get("distinct", True) is not False
        if node.args.get("by_name"):
            raise unsupported(node, "UNION BY NAME")
        if isinstance(node, exp.Union):
            return left.union(right) if distinct else left.union_all(right)
        if isinstance(node, exp.Intersect):
            return left.intersect(right) if distinct else left.intersect_all(right)
        return left.except_distinct(right) if distinct else left.except_all(right)

    def _modifiers(self, df: DataFrame, node: exp.Expression, ctes: dict[str, DataFrame]) -> DataFrame:
        """ORDER BY / LIMIT / OFFSET attached to a set operation or a parenthesised query."""
        order = node.args.get("order")
        if order is not None:
            rel = Relation.of(df, None)
            keys, desc, nulls = [], [], []
            for o in order.expressions:
                target = o.this
                position = literal_value(target)
                if isinstance(position, int) and not isinstance(position, bool):
                    if not 1 <= position <= len(df.column_names):
                        raise InvalidSQLException(f"ORDER BY position {position} is not in the SELECT list")
                    keys.append(col(df.column_names[position - 1]))
                else:
                    keys.append(ExprTranslator(ExprContext(rel.resolve, "ORDER BY"))(target))
                desc.append(bool(o.args.get("desc")))
                nulls.append(bool(o.args.get("nulls_first")))
            df = df.sort(keys, desc=desc, nulls_first=nulls)
        return self._limit(df, node)

    def _limit(self, df: DataFrame, node: exp.Expression) -> DataFrame:
        offset = node.args.get("offset")
        limit = node.args.get("limit")
        if offset is not None:
            skip = literal_int(offset.expression, "OFFSET", offset)
            if skip < 0:
                raise InvalidSQLException(f"OFFSET must be >= 0, got {skip}")
            if not hasattr(df, "offset"):
                raise InvalidSQLException(
                    "Unsupported SQL: OFFSET needs DataFrame.offset, which this build lacks"
                )
            df = df.offset(skip)  # type: ignore[attr-defined]
        if limit is not None:
            if isinstance(limit, exp.Fetch):
                raise unsupported(limit, "FETCH")
            count = literal_int(limit.expression, "LIMIT", limit)
            if count < 0:
                raise InvalidSQLException(f"LIMIT must be >= 0, got {count}")
            df = df.limit(count)
        return df

    # -- FROM ----------------------------------------------------------------------------------------------
    def _table(self, node: exp.Expression, ctes: dict[str, DataFrame]) -> Relation:
        alias = node.args.get("alias")
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Func):
            from ketch.sql.table_functions import table_function

            name, df = table_function(node.this)
            rel = Relation.of(df, node.alias or name)
        elif isinstance(node, exp.Table):
            if node.args.get("db") is not None or node.args.get("catalog") is not None:
                name = ".".join(p.name for p in node.parts)
            else:
                name = node.name
            if name in ctes:
                df = ctes[name]
            elif name in self.tables:
                df = self.tables[name]
            else:
                known = sorted(set(ctes) | set(self.tables))
                raise InvalidSQLException(f"Table not found: '{name}' (known tables: {known})")
            rel = Relation.of(df, node.alias_or_name)
        elif isinstance(node, exp.Subquery):
            rel = Relation.of(self.plan(node, ctes), node.alias or None)
        else:
            raise unsupported(node, f"{type(node).__name__} in FROM")
        column_aliases = alias.columns if alias is not None else []
        if column_aliases:
            if len(column_aliases) != len(rel.fields):
                raise InvalidSQLException(
                    f"'{alias.sql()}' names {len(column_aliases)} columns, the table has {len(rel.fields)}"
                )
            names = [c.name for c in column_aliases]
            df = rel.df.select(*[col(f.internal).alias(n) for f, n in zip(rel.fields, names, strict=True)])
            rel = Relation.of(df, rel.fields[0].qualifier if rel.fields else None)
        return rel

    def _from(self, select: exp.Select, ctes: dict[str, DataFrame]) -> Relation:
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None:
            from ketch.io import from_pydict

            return Relation(from_pydict({"__sql_one_row": [0]}), [])
        joins = select.args.get("joins") or []
        where = select.args.get("where")
        if joins and where is not None and all(_is_comma_join(j) for j in joins):
            return self._comma_joins(from_, joins, where.this, ctes)
        rel = self._table(from_.this, ctes)
        for join in joins:
            rel = self._join(rel, join, ctes)
        return rel

    def _comma_joins(
        self, from_: exp.Expression, joins: list[exp.Join], where: exp.Expression, ctes: dict[str, DataFrame]
    ) -> Relation:
        """``FROM t0, t1, ... WHERE ...``: the tables joined in an order where each next one shares
        a WHERE equality with those already joined (greedy, in FROM order otherwise), so that the
        optimizer turns every join into a keyed one instead of a cross product (TPC-H Q2 lists
        part, supplier, partsupp: part x supplier has no key). ``SELECT *`` keeps FROM's order."""
        from ketch.sql.translate_join import conjuncts, plan_join

        tables = [self._table(from_.this, ctes)] + [self._table(j.this, ctes) for j in joins]

        def owner(column: exp.Column) -> int | None:
            owners = [i for i, t in enumerate(tables) if t.find(column.table or None, column.name)]
            return owners[0] if len(owners) == 1 else None

        linked: set[tuple[int, int]] = set()
        for cond in conjuncts(where):
            if isinstance(cond, exp.EQ) and isinstance(cond.this, exp.Column):
                if isinstance(cond.expression, exp.Column):
                    a, b = owner(cond.this), owner(cond.expression)
                    if a is not None and b is not None and a != b:
                        linked |= {(a, b), (b, a)}
        order = [0]
        rest = list(range(1, len(tables)))
        while rest:
            following = next((i for i in rest if any((i, j) in linked for j in order)), rest[0])
            order.append(following)
            rest.remove(following)
        rel = tables[order[0]]
        for i in order[1:]:
            rel = plan_join(self, rel, tables[i], joins[max(i, 1) - 1])
        if order == sorted(order):
            return rel
        # The joined fields come table by table in join order: put them back in FROM order.
        chunks: dict[int, list] = {}
        start = 0
        for i in order:
            chunks[i] = rel.fields[start : start + len(tables[i].fields)]
            start += len(tables[i].fields)
        return Relation(rel.df, [f for i in range(len(tables)) for f in chunks[i]])

    def _where(self, rel: Relation, condition: exp.Expression, ctes: dict[str, DataFrame]) -> Relation:
        """WHERE: ``x IN (SELECT ..)`` conjuncts become semi joins, the rest one filter."""
        from ketch.sql.decorrelate import exists_join, not_in_join
        from ketch.sql.translate_join import (
            attach_scalar_subqueries,
            conjuncts,
            implied_table_filters,
            semi_join_in,
        )

        # Plain conditions filter first; the subquery joins (IN, EXISTS, NOT IN) then see fewer
        # rows (TPC-H Q21's EXISTS over a filtered lineitem instead of all of it).
        rest: list[exp.Expression] = []
        joins: list[tuple[str, exp.Expression]] = []
        for cond in conjuncts(condition):
            negated = cond.this if isinstance(cond, exp.Not) else None
            if isinstance(negated, exp.Paren):
                negated = negated.this
            if (
                isinstance(cond, exp.In)
                and cond.args.get("query") is not None
                and not cond.args.get("negate")
            ):
                joins.append(("in", cond))
            elif isinstance(cond, exp.Exists):
                joins.append(("exists", cond))
            elif isinstance(negated, exp.Exists):
                joins.append(("not exists", negated))
            elif isinstance(negated, exp.In) and negated.args.get("query") is not None:
                joins.append(("not in", negated))
            else:
                rest.append(cond)
        rest += implied_table_filters(rel, rest)
        if rest:
            rel, scalars = attach_scalar_subqueries(self, rel, rest, ctes)
            ctx = ExprContext(
                rel.resolve, "WHERE", allow_windows=False, type_of=rel.type_of, replacements=scalars
            )
            translate = ExprTranslator(ctx)
            predicate = translate(rest[0])
            for cond in rest[1:]:
                predicate = predicate & translate(cond)
            rel = Relation(rel.df.where(predicate), rel.fields)
        for kind, node in joins:
            if kind == "in":
                rel = semi_join_in(self, rel, node, ctes)
            elif kind == "not in":
                rel = not_in_join(self, rel, node, ctes)
            else:
                rel = exists_join(self, rel, node, kind == "not exists", ctes)
        return rel

    def _join(self, left: Relation, join: exp.Join, ctes: dict[str, DataFrame]) -> Relation:
        from ketch.sql.translate_join import plan_join

        return plan_join(self, left, self._table(join.this, ctes), join)

    # -- SELECT --------------------------------------------------------------------------------------------
    def _select(self, select: exp.Select, ctes: dict[str, DataFrame]) -> DataFrame:
        for key in ("laterals", "pivots", "qualify", "windows", "into", "sample", "prewhere"):
            if select.args.get(key):
                raise unsupported(select, key.upper())
        if select.args.get("kind"):
            raise unsupported(select, f"SELECT {select.args['kind']}")
        distinct = select.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise unsupported(distinct, "DISTINCT ON")
        rel = self._from(select, ctes)
        where = select.args.get("where")
        if where is not None:
            rel = self._where(rel, where.this, ctes)

        items = self._items(select, rel)
        group = select.args.get("group")
        having = select.args.get("having")
        if having is not None:
            having = exp.Having(this=self._expand_aliases(having.this, items, rel))
        order = select.args.get("order")
        order_nodes = [o.this for o in order.expressions] if order is not None else []
        agg_nodes = [a for i in items for a in aggregate_calls(i.node)]
        if having is not None:
            agg_nodes += aggregate_calls(having.this)
        agg_nodes += [a for n in order_nodes if not self._is_output_ref(n, items) for a in aggregate_calls(n)]

        if group is not None or agg_nodes:
            rel, ctx = self._aggregate(rel, items, group, agg_nodes)
        else:
            from ketch.sql.translate_join import attach_scalar_subqueries

            select_nodes = [i.node for i in items if i.field is None]
            select_nodes += [n for n in order_nodes if not self._is_output_ref(n, items)]
            rel, scalars = attach_scalar_subqueries(self, rel, select_nodes, ctes)
            ctx = ExprContext(
                rel.resolve,
                "SELECT",
                count_star=self._count_star(rel),
                type_of=rel.type_of,
                replacements=scalars,
            )
        if having is not None:
            if group is None and not agg_nodes:
                raise InvalidSQLException("HAVING needs GROUP BY or an aggregate function")
            ctx.clause = "HAVING"
            if group is not None or agg_nodes:
                # A scalar subquery in HAVING (TPC-H Q11) is joined onto the aggregated rows.
                from ketch.sql.translate_join import attach_scalar_subqueries

                rel, scalars = attach_scalar_subqueries(self, rel, [having.this], ctes)
                ctx.replacements = {**(ctx.replacements or {}), **scalars}
            rel = Relation(rel.df.where(ExprTranslator(ctx)(having.this)), rel.fields)

        # The SELECT list, plus hidden columns for ORDER BY keys that are not output columns.
        ctx.clause = "SELECT"
        translate = ExprTranslator(ctx)
        exprs: list[Expression] = []
        names: list[str] = []
        for item in items:
            if item.field is not None:
                if group is not None or agg_nodes:
                    # A star column after GROUP BY: only grouping columns remain.
                    expr = ctx.resolve(item.field.qualifier, item.field.name, item.node)
                else:
                    expr = col(item.field.internal)
            else:
                node = item.node.this if isinstance(item.node, exp.Alias) else item.node
                expr = translate(node)
            exprs.append(expr.alias(item.name))
            names.append(item.name)
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise InvalidSQLException(
                f"duplicate output column names {dupes}: give them distinct aliases (AS ...)"
            )
        sort_keys: list[str] = []
        desc: list[bool] = []
        nulls: list[bool] = []
        hidden: list[Expression] = []
        ctx.clause = "ORDER BY"
        for o, node in zip(order.expressions if order is not None else [], order_nodes, strict=True):
            position = literal_value(node)
            if isinstance(position, int) and not isinstance(position, bool):
                if not 1 <= position <= len(names):
                    raise InvalidSQLException(f"ORDER BY position {position} is not in the SELECT list")
                sort_keys.append(names[position - 1])
            elif self._is_output_ref(node, items):
                sort_keys.append(node.name)
            else:
                key = self.fresh("order")
                hidden.append(translate(node).alias(key))
                sort_keys.append(key)
            desc.append(bool(o.args.get("desc")))
            nulls.append(bool(o.args.get("nulls_first")))
        if hidden and distinct is not None:
            raise InvalidSQLException(
                "for SELECT DISTINCT, ORDER BY expressions must appear in the SELECT list"
            )

        df = rel.df.select(*exprs, *hidden)
        if distinct is not None:
            df = df.distinct()
        if sort_keys:
            df = df.sort(sort_keys, desc=desc, nulls_first=nulls)
        df = self._limit(df, select)
        if hidden:
            df = df.select(*names)
        return df

    @staticmethod
    def _is_output_ref(node: exp.Expression, items: list[_Item]) -> bool:
        """An unqualified name of a SELECT alias or of a column selected as is (ORDER BY's first
        choice, as in SQL). An unaliased expression named after its column does not count:
        ``SELECT -x FROM t ORDER BY x`` sorts by the input ``x``."""
        if not isinstance(node, exp.Column) or node.table or isinstance(node.this, exp.Star):
            return False
        return any(
            i.name == node.name and i.field is None and isinstance(i.node, exp.Alias | exp.Column)
            for i in items
        )

    def _items(self, select: exp.Select, rel: Relation) -> list[_Item]:
        items: list[_Item] = []
        for node in select.expressions:
            if isinstance(node, exp.Star):
                fields = rel.star()
            elif isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
                fields = rel.star(node.table)
            else:
                items.append(_Item(node, self._output_name(node)))
                continue
            if node.args.get("except") or node.args.get("replace"):
                raise unsupported(node, "* EXCEPT / REPLACE")
            items.extend(_Item(node, f.name, f) for f in fields)
        if not items:
            raise InvalidSQLException("SELECT list is empty (FROM has no columns)")
        # Star-expanded columns of different tables may share a name: later ones get Daft's
        # join prefix "right.".
        seen: set[str] = {i.name for i in items if i.field is None}
        for item in items:
            if item.field is None:
                continue
            while item.name in seen:
                item.name = f"right.{item.name}"
            seen.add(item.name)
        return items

    @staticmethod
    def _output_name(node: exp.Expression) -> str:
        """Daft's rule for an unaliased expression: the name of its first column, ``count`` for
        COUNT(*), ``literal`` for a constant."""
        if isinstance(node, exp.Alias):
            return node.alias
        if isinstance(node, exp.Column):
            return node.name
        first = next(iter(node.find_all(exp.Column)), None)
        if first is not None and not isinstance(first.this, exp.Star):
            return first.name
        if isinstance(node, exp.Count):
            return "count"
        if isinstance(node, exp.Func):
            return node.sql_name().lower() if not isinstance(node, exp.Anonymous) else str(node.this).lower()
        return "literal"

    @staticmethod
    def _count_star(rel: Relation):  # type: ignore[no-untyped-def]
        def build() -> Expression:
            if rel.fields:
                return col(rel.fields[0].internal).count("all")
            return col(rel.df.column_names[0]).count("all")

        return build

    # -- GROUP BY ------------------------------------------------------------------------------------------
    def _aggregate(
        self, rel: Relation, items: list[_Item], group: exp.Group | None, agg_nodes: list[exp.Expression]
    ) -> tuple[Relation, ExprContext]:
        """Groups ``rel`` and computes every aggregate call once; returns the grouped relation and
        the context later clauses translate in (group keys and aggregates by SQL text)."""
        pre = ExprTranslator(ExprContext(rel.resolve, "GROUP BY", allow_windows=False, type_of=rel.type_of))
        key_columns: list[str] = []
        computed: dict[str, Expression] = {}
        replacements: dict[str, Expression] = {}
        kept: list[Field] = []
        rollup: list[exp.Expression] = []  # GROUP BY ..., ROLLUP(k1, .., kn): its keys, in order
        if group is not None:
            for key in ("grouping_sets", "cube", "rollup"):
                if group.args.get(key):
                    raise unsupported(group, key.upper().replace("_", " "))
            nodes: list[exp.Expression] = []
            for node in group.expressions:
                if isinstance(node, exp.Rollup) and not rollup:
                    rollup = list(node.expressions)
                elif isinstance(node, exp.Cube | exp.GroupingSets | exp.Rollup):
                    raise unsupported(node, type(node).__name__.upper())
                else:
                    nodes.append(node)
            for node in nodes + rollup:
                target = self._group_target(node, items, rel)
                if aggregate_calls(target):
                    raise InvalidSQLException(
                        f"aggregate functions are not allowed in GROUP BY: '{sql_text(node)}'"
                    )
                expr = pre(target)
                if expr._native.is_column():
                    name = expr.name()
                    kept.extend(f for f in rel.fields if f.internal == name)
                else:
                    name = self.fresh("key")
                    computed[name] = expr
                    replacements[sql_text(target)] = col(name)
                if name not in key_columns:
                    key_columns.append(name)
                elif node in rollup:
                    rollup.remove(node)
        agg_ctx = ExprContext(
            rel.resolve,
            "an aggregate",
            allow_aggregates=True,
            count_star=self._count_star(rel),
            type_of=rel.type_of,
        )
        aggs: list[Expression] = []
        for node in agg_nodes:
            text = sql_text(node)
            if text in replacements:
                continue
            inner = aggregate_calls_inside(node)
            if inner:
                raise InvalidSQLException(f"aggregate function calls cannot be nested: '{text}'")
            name = self.fresh("agg")
            aggs.append(ExprTranslator(agg_ctx)(node).alias(name))
            replacements[text] = col(name)
        df = rel.df.with_columns(computed) if computed else rel.df
        if rollup:
            grouped = _rollup(df, key_columns, len(key_columns) - len(rollup), aggs)
        elif key_columns:
            grouped = df.groupby(*key_columns).agg(*aggs) if aggs else df.select(*key_columns).distinct()
        else:
            grouped = df.agg(*aggs)
        post = Relation(grouped, kept)

        def resolve(table: str | None, name: str, node: exp.Expression | None = None) -> Expression:
            if not rel.find(table, name):
                rel.field(table, name, node)  # raises: unknown column
            hits = post.find(table, name)
            if not hits:
                shown = f"{table}.{name}" if table else name
                raise InvalidSQLException(
                    f"column '{shown}' must appear in the GROUP BY clause or be used in an aggregate function"
                )
            return post.resolve(table, name, node)

        def count_rows() -> Expression:  # COUNT(*) OVER (..) after the grouping: counts groups
            return col(grouped.column_names[0]).count("all")

        ctx = ExprContext(
            resolve, "SELECT", replacements=replacements, type_of=post.type_of, count_star=count_rows
        )
        return post, ctx

    @staticmethod
    def _expand_aliases(node: exp.Expression, items: list[_Item], rel: Relation) -> exp.Expression:
        """``node`` with unqualified names of SELECT aliases that are no input column replaced by
        the aliased expressions (``HAVING n > 1`` for ``count(*) AS n``, as DuckDB allows)."""
        aliases = {i.name: i.node.this for i in items if isinstance(i.node, exp.Alias)}
        if not aliases:
            return node

        def swap(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and not n.table and n.name in aliases and not rel.find(None, n.name):
                return aliases[n.name].copy()
            return n

        return node.copy().transform(swap)

    @staticmethod
    def _group_target(node: exp.Expression, items: list[_Item], rel: Relation) -> exp.Expression:
        """A GROUP BY item: a position or a SELECT alias stands for that SELECT expression."""
        position = literal_value(node)
        if isinstance(position, int) and not isinstance(position, bool):
            if not 1 <= position <= len(items):
                raise InvalidSQLException(f"GROUP BY position {position} is not in the SELECT list")
            target = items[position - 1].node
            return target.this if isinstance(target, exp.Alias) else target
        if isinstance(node, exp.Column) and not node.table and not rel.find(None, node.name):
            for item in items:
                if isinstance(item.node, exp.Alias) and item.name == node.name:
                    return item.node.this
        return node


def _rollup(df: DataFrame, keys: list[str], fixed: int, aggs: list[Expression]) -> DataFrame:
    """GROUP BY ROLLUP: the union of the groupings by ``keys[:fixed + k]`` for k = n .. 0 (n =
    the rollup's keys), each with the keys it drops as nulls (Daft's and SQL's rows: per group,
    per prefix, then the total)."""
    types = {f.name: f.dtype for f in df.schema()}
    out: DataFrame | None = None
    for k in range(len(keys) - fixed, -1, -1):
        by = keys[: fixed + k]
        if by:
            part = df.groupby(*by).agg(*aggs) if aggs else df.select(*by).distinct()
        else:
            part = df.agg(*aggs) if aggs else df.limit(1).select(*[lit(None).alias(c) for c in keys])
        part = part.select(
            *[col(c) if c in by else lit(None).cast(types[c]).alias(c) for c in keys],
            *[col(a.name()) for a in aggs],
        )
        out = part if out is None else out.concat(part)
    assert out is not None
    return out


def aggregate_calls_inside(node: exp.Expression) -> list[exp.Expression]:
    """Aggregate calls strictly inside an aggregate call's arguments."""
    return [a for child in node.iter_expressions() for a in aggregate_calls(child)]


def _is_comma_join(join: exp.Join) -> bool:
    """``FROM a, b``: a join with no kind, side, method, ON or USING."""
    return not any(join.args.get(key) for key in ("kind", "side", "method", "on", "using"))
