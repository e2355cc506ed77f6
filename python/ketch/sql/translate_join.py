"""SQL joins → ``DataFrame.join``: ON conditions split into equality keys (one side's columns
against the other's) and a residual predicate (a filter after an inner join), USING merges the
named columns, CROSS JOIN joins on a constant key."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from ketch.errors import KetchError
from ketch.expressions.expression import Expression, col, lit
from ketch.sql.errors import InvalidSQLException
from ketch.sql.relation import Field, Relation
from ketch.sql.translate_expr import ExprContext, ExprTranslator, sql_text, unsupported

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame
    from ketch.sql.translate_query import QueryPlanner

_HOW = {"": "inner", "INNER": "inner", "LEFT": "left", "RIGHT": "right", "FULL": "outer"}


def conjuncts(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Paren):
        return conjuncts(node.this)
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


def _side(node: exp.Expression, left: Relation, right: Relation) -> str | None:
    """ "left" / "right" when every column of ``node`` belongs to that side only, else None."""
    sides = set()
    for column in node.find_all(exp.Column):
        in_left = bool(left.find(column.table or None, column.name))
        in_right = bool(right.find(column.table or None, column.name))
        if in_left == in_right:  # in neither (unknown) or in both (ambiguous): field() names it
            Relation(left.df, left.fields + right.fields).field(column.table or None, column.name)
        sides.add("left" if in_left else "right")
    return sides.pop() if len(sides) == 1 else None


def _rename_clashes(planner: QueryPlanner, left: Relation, right: Relation) -> Relation:
    """``right`` with every column whose DataFrame name the left side uses renamed."""
    taken = set(left.df.column_names)
    fields: list[Field] = []
    exprs: list[Expression] = []
    for f in right.fields:
        internal = f.internal
        if internal in taken:
            internal = planner.fresh(f.name + "_")
        taken.add(internal)
        fields.append(Field(f.qualifier, f.name, internal, f.in_star, f.unqualified))
        exprs.append(col(f.internal).alias(internal))
    return Relation(right.df.select(*exprs), fields) if exprs else right


def plan_join(planner: QueryPlanner, left: Relation, right: Relation, join: exp.Join) -> Relation:
    """``left JOIN right`` as ``join`` says. Raises InvalidSQLException for NATURAL joins, an
    outer join without an equality between the sides, or a condition that is not understood."""
    if join.args.get("method"):
        raise unsupported(join, f"{join.args['method']} JOIN")
    kind = str(join.args.get("kind") or "").upper()
    side = str(join.args.get("side") or "").upper()
    if kind in ("SEMI", "ANTI"):
        how = kind.lower()
    elif kind == "CROSS":
        how = "cross"
    elif kind in ("", "INNER", "OUTER"):
        how = _HOW.get(side, "")
    else:
        how = ""
    if not how:
        raise unsupported(join, f"{side} {kind} JOIN".strip())
    right = _rename_clashes(planner, left, right)
    combined = Relation(left.df, left.fields + right.fields)
    on = join.args.get("on")
    using = join.args.get("using") or []
    if how == "cross" and (on is not None or using):
        raise InvalidSQLException(f"CROSS JOIN takes no ON / USING: '{sql_text(join)}'")
    if how != "cross" and on is None and not using:
        if not join.args.get("kind") and not side:
            how = "cross"  # "FROM a, b" is a cross join
        else:
            raise InvalidSQLException(f"{side or kind or 'INNER'} JOIN needs ON or USING: '{sql_text(join)}'")

    left_keys: list[Expression] = []
    right_keys: list[Expression] = []
    key_texts: list[str] = []  # for messages: "a.x = b.y"
    key_texts_left: list[str] = []
    key_texts_right: list[str] = []
    same_name_keys: list[tuple[Field, Field]] = []
    residual: list[exp.Expression] = []
    using_pairs: list[tuple[Field, Field]] = []
    if using:
        for ident in using:
            name = ident.name
            lf, rf = left.field(None, name), right.field(None, name)
            using_pairs.append((lf, rf))
            left_keys.append(col(lf.internal))
            right_keys.append(col(rf.internal))
            key_texts.append(f"USING ({name})")
            key_texts_left.append(f"{lf.qualifier}.{name}")
            key_texts_right.append(f"{rf.qualifier}.{name}")
    if on is not None:
        for cond in conjuncts(on):
            if isinstance(cond, exp.EQ):
                a, b = _side(cond.this, left, right), _side(cond.expression, left, right)
                if {a, b} == {"left", "right"}:
                    lnode, rnode = (
                        (cond.this, cond.expression) if a == "left" else (cond.expression, cond.this)
                    )
                    left_keys.append(
                        ExprTranslator(ExprContext(left.resolve, "ON", allow_windows=False))(lnode)
                    )
                    right_keys.append(
                        ExprTranslator(ExprContext(right.resolve, "ON", allow_windows=False))(rnode)
                    )
                    key_texts.append(sql_text(cond))
                    key_texts_left.append(sql_text(lnode))
                    key_texts_right.append(sql_text(rnode))
                    if (
                        isinstance(lnode, exp.Column)
                        and isinstance(rnode, exp.Column)
                        and lnode.name == rnode.name
                    ):
                        same_name_keys.append(
                            (
                                left.field(lnode.table or None, lnode.name),
                                right.field(rnode.table or None, rnode.name),
                            )
                        )
                    continue
            residual.append(cond)
    # An outer join's ON condition on its inner side's columns alone (TPC-H Q13's
    # `o_comment NOT LIKE ...` in a LEFT JOIN) filters that side before the join: rows it drops
    # still keep their outer rows, with nulls.
    inner_side = {"left": "right", "right": "left"}.get(how)
    if residual and inner_side is not None:
        alone = [
            cond for cond in residual if _side(cond, left, right) == inner_side and not _has_subquery(cond)
        ]
        if alone:
            residual = [cond for cond in residual if cond not in alone]
            side = right if inner_side == "right" else left
            translate = ExprTranslator(ExprContext(side.resolve, "ON", allow_windows=False))
            predicate = translate(alone[0])
            for cond in alone[1:]:
                predicate = predicate & translate(cond)
            filtered = Relation(side.df.where(predicate), side.fields)
            if inner_side == "right":
                right = filtered
            else:
                left = filtered
            combined = Relation(left.df, left.fields + right.fields)
    if residual and how not in ("inner", "cross"):
        text = " AND ".join(sql_text(r) for r in residual)
        raise InvalidSQLException(
            f"Unsupported SQL: '{text}' in the ON clause of a {how} join (only equalities between "
            "the two sides are supported there)"
        )
    if not left_keys:
        if how not in ("inner", "cross"):
            raise InvalidSQLException(
                f"{how} join needs an equality between the two sides: '{sql_text(join)}'"
            )
        # A cross join: every row matches every row. The optimizer turns the WHERE clause's
        # equalities between the two sides into join keys (push_down_filter.cc).
        fields = left.fields + right.fields
        df = left.df.join(right.df, how="cross").select(*[f.internal for f in fields])
        return _with_residual(Relation(df, fields), residual, combined)

    # The keys travel as extra columns, so the output columns do not depend on how join() names
    # or merges key columns.
    lnames = [planner.fresh("lkey") for _ in left_keys]
    rnames = [planner.fresh("rkey") for _ in right_keys]
    ldf = left.df.with_columns(dict(zip(lnames, left_keys, strict=True)))
    rdf = right.df.with_columns(dict(zip(rnames, right_keys, strict=True)))
    try:
        df = ldf.join(rdf, left_on=lnames, right_on=rnames, how="inner" if how == "cross" else how)
    except KetchError as error:
        # The message names the internal key columns: name the SQL keys instead.
        keys = ", ".join(key_texts) or "the join keys"
        message = str(error)
        for internal, text in zip(lnames + rnames, key_texts_left + key_texts_right, strict=True):
            message = message.replace(f"'{internal}'", f"'{text}'").replace(f"col({internal})", f"'{text}'")
        raise type(error)(f"cannot join on {keys}: {message}") from None
    fields = list(left.fields) if how in ("semi", "anti") else left.fields + right.fields
    keep = [f.internal for f in fields]

    if how == "inner" or how == "left":
        hidden = {id(r) for _, r in using_pairs + same_name_keys}
        fields = [_hide(f) if id(f) in hidden else f for f in fields]
    elif how == "right":
        hidden = {id(lf) for lf, _ in using_pairs}
        fields = [_hide(f) if id(f) in hidden else f for f in fields]
    elif how == "outer" and using_pairs:
        merged: dict[int, Field] = {}
        extra: dict[str, Expression] = {}
        for lf, rf in using_pairs:
            name = planner.fresh(lf.name + "_")
            extra[name] = Expression._call("coalesce", col(lf.internal), col(rf.internal))
            merged[id(lf)] = Field(None, lf.name, name)
        df = df.with_columns(extra)
        keep += list(extra)
        hidden = {id(r) for _, r in using_pairs} | set(merged)
        out: list[Field] = []
        for f in fields:
            if id(f) in merged:
                out.append(merged[id(f)])
            out.append(_hide(f) if id(f) in hidden else f)
        fields = out
    df = df.select(*keep)
    return _with_residual(Relation(df, fields), residual, combined)


def _with_residual(result: Relation, residual: list[exp.Expression], combined: Relation) -> Relation:
    """``result`` filtered by the ON conditions that are not keys (None: nothing to filter)."""
    if residual:
        translate = ExprTranslator(ExprContext(combined.resolve, "ON", allow_windows=False))
        predicate = translate(residual[0])
        for cond in residual[1:]:
            predicate = predicate & translate(cond)
        result = Relation(result.df.where(predicate), result.fields)
    return result


def _has_subquery(node: exp.Expression) -> bool:
    return any(True for _ in node.find_all(exp.Subquery, exp.Exists))


def _hide(f: Field) -> Field:
    return Field(f.qualifier, f.name, f.internal, in_star=False, unqualified=False)


def semi_join_in(planner: QueryPlanner, rel: Relation, node: exp.In, ctes: dict[str, DataFrame]) -> Relation:
    """``WHERE x IN (SELECT y ...)`` (a top-level conjunct, uncorrelated) as a semi join of
    ``rel`` with the subquery's one column: a row stays when its ``x`` equals some ``y`` (a null
    ``x`` never does). Raises InvalidSQLException when the subquery has more than one column."""
    sub = planner.plan(node.args["query"], ctes)
    if len(sub.column_names) != 1:
        raise InvalidSQLException(
            f"the subquery of IN must return one column, got {len(sub.column_names)}: '{sql_text(node)}'"
        )
    value = ExprTranslator(ExprContext(rel.resolve, "WHERE", allow_windows=False))(node.this)
    lkey, rkey = planner.fresh("lkey"), planner.fresh("rkey")
    left = rel.df.with_columns({lkey: value})
    right = sub.select(col(sub.column_names[0]).alias(rkey))
    try:
        joined = left.join(right, left_on=lkey, right_on=rkey, how="semi")
    except KetchError as error:
        message = str(error).replace(f"'{lkey}'", f"'{sql_text(node.this)}'")
        raise type(error)(f"cannot evaluate '{sql_text(node)}': {message}") from None
    return Relation(joined.select(*[f.internal for f in rel.fields]) if rel.fields else joined, rel.fields)


def scalar_subqueries(node: exp.Expression) -> list[exp.Subquery]:
    """Subqueries used as values inside ``node`` (not those of ``IN (SELECT ..)``)."""
    found: list[exp.Subquery] = []

    def walk(n: exp.Expression) -> None:
        if isinstance(n, exp.Subquery):
            found.append(n)
            return
        for key, child in n.args.items():
            if isinstance(n, exp.In) and key == "query":
                continue
            for c in child if isinstance(child, list) else [child]:
                if isinstance(c, exp.Expression):
                    walk(c)

    walk(node)
    return found


def attach_scalar_subqueries(
    planner: QueryPlanner, rel: Relation, nodes: list[exp.Expression], ctes: dict[str, DataFrame]
) -> tuple[Relation, dict[str, Expression]]:
    """Each uncorrelated scalar subquery inside ``nodes`` planned once and joined onto every row
    of ``rel`` (a left join on a constant key: an empty result gives null, as SQL). Returns the
    widened relation and the replacements (subquery SQL text → its column). A subquery must
    return one column; one returning several rows repeats each row of ``rel`` per subquery row
    (SQL would raise at run time; Ketch checks nothing at run time here)."""
    replacements: dict[str, Expression] = {}
    for node in nodes:
        for sub in scalar_subqueries(node):
            text = sql_text(sub)
            if text in replacements:
                continue
            from ketch.sql.decorrelate import correlated_scalar

            correlated = correlated_scalar(planner, rel, sub, ctes)
            if correlated is not None:
                rel, replacements[text] = correlated
                continue
            df = planner.plan(sub, ctes)
            if len(df.column_names) != 1:
                raise InvalidSQLException(
                    f"a scalar subquery must return one column, got {len(df.column_names)}: '{text}'"
                )
            name, lkey, rkey = planner.fresh("scalar"), planner.fresh("lkey"), planner.fresh("rkey")
            right = df.select(col(df.column_names[0]).alias(name), lit(1).alias(rkey))
            joined = rel.df.with_columns({lkey: lit(1)}).join(right, left_on=lkey, right_on=rkey, how="left")
            replacements[text] = col(name)
            rel = Relation(joined.select(*rel.df.column_names, name), rel.fields)
    return rel, replacements


def implied_table_filters(rel: Relation, conditions: list[exp.Expression]) -> list[exp.Expression]:
    """Single-table conditions implied by OR conditions that span tables: for ``(n1.x = 'A' AND
    n2.x = 'B') OR (n1.x = 'B' AND n2.x = 'A')`` (TPC-H Q7; Q19's part / lineitem branches) each
    table whose columns appear in every branch gets the OR of its own parts, ``n1.x = 'A' OR
    n1.x = 'B'``, which the optimizer pushes into that table's scan. The original condition
    stays, so the result is the same; the joins just see fewer rows. Conditions with subqueries
    are left alone. Returns the new conditions (none already among ``conditions``)."""

    def table_of(node: exp.Expression) -> str | None:
        owners: set[str | None] = set()
        for column in node.find_all(exp.Column):
            hits = rel.find(column.table or None, column.name)
            if len(hits) != 1:
                return None
            owners.add(hits[0].qualifier)
        return owners.pop() if len(owners) == 1 else None

    def disjuncts(node: exp.Expression) -> list[exp.Expression]:
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Or):
            return disjuncts(node.this) + disjuncts(node.expression)
        return [node]

    seen = {c.sql() for c in conditions}
    out: list[exp.Expression] = []
    for cond in conditions:
        branches = disjuncts(cond)
        if len(branches) < 2 or table_of(cond) is not None:
            continue  # not an OR, or one table's: the condition itself goes below the joins
        if any(True for _ in cond.find_all(exp.Subquery, exp.Exists)):
            continue
        per_branch: list[dict[str, list[exp.Expression]]] = []
        for branch in branches:
            parts: dict[str, list[exp.Expression]] = {}
            for part in conjuncts(branch):
                table = table_of(part)
                if table is not None:
                    parts.setdefault(table, []).append(part)
            per_branch.append(parts)
        for table in sorted(set(per_branch[0]).intersection(*per_branch[1:])):
            implied = exp.or_(*[exp.and_(*[p.copy() for p in parts[table]]) for parts in per_branch])
            if implied.sql() not in seen:
                seen.add(implied.sql())
                out.append(implied)
    return out
