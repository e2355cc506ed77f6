"""sqlglot expression trees → Ketch Expressions.

The translator knows nothing about tables: column references go to a resolver the query planner
(or ``sql_expr``) supplies, and subtrees the planner already computed (aggregations, GROUP BY
expressions after the aggregation) are swapped in by their SQL text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from sqlglot import exp

from ketch.expressions.expression import Expression, lit
from ketch.sql import functions
from ketch.sql.errors import InvalidSQLException
from ketch.sql.functions import MISSING, Arg
from ketch.sql.parse import DIALECT

Resolver = Callable[[str | None, str, exp.Column], Expression]


def sql_text(node: exp.Expression) -> str:
    """A node's SQL in one normal form: the key that matches a SELECT item to a GROUP BY item."""
    return node.sql(dialect=DIALECT)


@dataclass
class ExprContext:
    """What a translation may use.

    ``resolve(table, name, node)`` returns the expression of a column reference (or raises);
    ``replacements`` maps the SQL text of subtrees computed earlier to their columns;
    ``clause`` names the clause for messages; ``allow_aggregates`` / ``allow_windows`` say
    whether aggregate calls / OVER may appear here; ``count_star`` builds ``COUNT(*)``."""

    resolve: Resolver
    clause: str
    replacements: dict[str, Expression] = field(default_factory=dict)
    allow_aggregates: bool = False
    allow_windows: bool = True
    count_star: Callable[[], Expression] | None = None
    type_of: Callable[[Expression], pa.DataType] | None = None


_BINARY: dict[type[exp.Expression], Callable[[Expression, Expression], Expression]] = {
    exp.Add: lambda a, b: a + b,
    exp.Sub: lambda a, b: a - b,
    exp.Mul: lambda a, b: a * b,
    exp.Div: lambda a, b: a / b,
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.NullSafeEQ: lambda a, b: a.eq_null_safe(b),
    exp.NullSafeNEQ: lambda a, b: ~a.eq_null_safe(b),
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
    exp.And: lambda a, b: a & b,
    exp.Or: lambda a, b: a | b,
}

# SQL type names → Arrow types (Daft's SQL mapping: INT is Int32, REAL/FLOAT Float32...).
_TYPES: dict[Any, pa.DataType] = {
    exp.DataType.Type.BOOLEAN: pa.bool_(),
    exp.DataType.Type.TINYINT: pa.int8(),
    exp.DataType.Type.SMALLINT: pa.int16(),
    exp.DataType.Type.INT: pa.int32(),
    exp.DataType.Type.BIGINT: pa.int64(),
    exp.DataType.Type.UTINYINT: pa.uint8(),
    exp.DataType.Type.USMALLINT: pa.uint16(),
    exp.DataType.Type.UINT: pa.uint32(),
    exp.DataType.Type.UBIGINT: pa.uint64(),
    exp.DataType.Type.FLOAT: pa.float32(),
    exp.DataType.Type.DOUBLE: pa.float64(),
    exp.DataType.Type.VARCHAR: pa.large_string(),
    exp.DataType.Type.CHAR: pa.large_string(),
    exp.DataType.Type.NVARCHAR: pa.large_string(),
    exp.DataType.Type.TEXT: pa.large_string(),
    exp.DataType.Type.BINARY: pa.large_binary(),
    exp.DataType.Type.VARBINARY: pa.large_binary(),
    exp.DataType.Type.DATE: pa.date32(),
    exp.DataType.Type.TIMESTAMP: pa.timestamp("us"),
    exp.DataType.Type.DATETIME: pa.timestamp("us"),
}


def sql_type(node: exp.DataType) -> pa.DataType:
    """The Arrow type of a SQL type name. Raises InvalidSQLException for one Ketch has no match for."""
    kind = node.this
    if kind == exp.DataType.Type.DECIMAL:
        params = [
            int(p.this.this) if isinstance(p.this, exp.Literal) else int(p.name) for p in node.expressions
        ]
        precision, scale = (params + [38, 0][len(params) :])[:2] if params else (38, 0)
        return pa.decimal128(precision, scale)
    if kind in _TYPES:
        return _TYPES[kind]
    raise InvalidSQLException(f"Unsupported SQL: type '{node.sql(dialect=DIALECT)}' in CAST")


def literal_value(node: exp.Expression) -> Any:
    """The Python value of a literal node, or MISSING when ``node`` is not a literal."""
    if isinstance(node, exp.Paren):
        return literal_value(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        try:
            return int(text)
        except ValueError:
            return float(text)
    if isinstance(node, exp.Neg):
        inner = literal_value(node.this)
        if isinstance(inner, int | float) and not isinstance(inner, bool):
            return -inner
    return MISSING


def function_name(node: exp.Func) -> str:
    """The SQL name of a function call node (``SUM``, ``my_fn``...), lower-cased."""
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return node.sql_name().lower()


def function_args(node: exp.Func) -> list[exp.Expression]:
    """A call's argument nodes, in their order."""
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    out: list[exp.Expression] = []
    for key in node.arg_types:
        value = node.args.get(key)
        if value is None or isinstance(value, bool | str):
            continue
        out.extend(value if isinstance(value, list) else [value])
    return out


def is_aggregate_call(node: exp.Expression) -> bool:
    """Whether ``node`` calls an aggregate function (COUNT(*) and COUNT(DISTINCT ..) included)."""
    if isinstance(node, exp.Count):
        return True
    if isinstance(node, exp.AggFunc) and not isinstance(node, exp.Anonymous):
        entry = functions.lookup(function_name(node))
        return entry is None or entry.aggregate
    if isinstance(node, exp.Func):
        entry = functions.lookup(function_name(node))
        return entry is not None and entry.aggregate
    return False


def aggregate_calls(node: exp.Expression) -> list[exp.Expression]:
    """The outermost aggregate calls inside ``node``, not looking into OVER (a windowed aggregate
    is no GROUP BY aggregate)."""
    found: list[exp.Expression] = []

    def walk(n: exp.Expression) -> None:
        if isinstance(n, exp.Window | exp.Subquery | exp.Select):
            return
        if is_aggregate_call(n):
            found.append(n)
            return
        for child in n.iter_expressions():
            walk(child)

    walk(node)
    return found


def unsupported(node: exp.Expression, what: str | None = None) -> InvalidSQLException:
    text = node.sql(dialect=DIALECT)
    if len(text) > 80:
        text = text[:77] + "..."
    kind = what or type(node).__name__
    return InvalidSQLException(f"Unsupported SQL: '{text}' ({kind} is not supported)")


class ExprTranslator:
    """Translates one expression tree under an :class:`ExprContext`."""

    def __init__(self, ctx: ExprContext) -> None:
        self.ctx = ctx

    def __call__(self, node: exp.Expression) -> Expression:
        return self.translate(node)

    def translate(self, node: exp.Expression) -> Expression:
        if self.ctx.replacements:
            key = sql_text(node)
            if key in self.ctx.replacements:
                return self.ctx.replacements[key]
        value = literal_value(node)
        if value is not MISSING:
            return lit(value)
        if isinstance(node, exp.Paren):
            return self.translate(node.this)
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                raise unsupported(node, f"'{node.table}.*' outside the SELECT list")
            return self.ctx.resolve(node.table or None, node.name, node)
        if isinstance(node, exp.Alias):
            return self.translate(node.this).alias(node.alias)
        if type(node) in _BINARY:
            return _BINARY[type(node)](self.translate(node.this), self.translate(node.expression))
        if isinstance(node, exp.Mod):
            return functions.lookup("mod").build("mod", [self._arg(node.this), self._arg(node.expression)])  # type: ignore[union-attr]
        if isinstance(node, exp.DPipe):
            # || propagates nulls (concat() does not).
            left = self.translate(node.this).cast(pa.large_string())
            right = self.translate(node.expression).cast(pa.large_string())
            return Expression._call("binary_join_element_wise", left, right, lit(""))
        if isinstance(node, exp.Neg):
            return -self.translate(node.this)
        if isinstance(node, exp.Not):
            if isinstance(node.this, exp.In) and node.this.args.get("query") is not None:
                raise unsupported(node, "NOT IN (subquery)")
            return ~self.translate(node.this)
        if isinstance(node, exp.Is | exp.In | exp.Between | exp.Like | exp.ILike):
            # sqlglot marks IS NOT / NOT IN / NOT BETWEEN / NOT LIKE with negate=True.
            result = self._predicate(node)
            return ~result if node.args.get("negate") else result
        if isinstance(node, exp.Case):
            return self._case(node)
        if isinstance(node, exp.If):
            return self._if(node.this, node.args.get("true"), node.args.get("false"))
        if isinstance(node, exp.Cast):
            if isinstance(node, exp.TryCast):
                raise unsupported(node, "TRY_CAST")
            return self._cast(self.translate(node.this), sql_type(node.args["to"]))
        if isinstance(node, exp.Window):
            return self._window(node)
        if isinstance(node, exp.Extract):
            unit = node.this.name.lower()
            return self._call(unit, node, [node.expression])
        if isinstance(node, exp.Count):
            return self._count(node)
        if isinstance(node, exp.Func):
            return self._call(function_name(node), node, function_args(node))
        if isinstance(node, exp.Subquery | exp.Select | exp.Exists):
            raise unsupported(
                node,
                "a subquery here (scalar subqueries work in WHERE, HAVING and in the SELECT list "
                "without GROUP BY)",
            )
        if isinstance(node, exp.Star):
            raise unsupported(node, "'*' outside the SELECT list and COUNT(*)")
        raise unsupported(node)

    # -- pieces ------------------------------------------------------------------------------------------
    def _cast(self, value: Expression, target: pa.DataType) -> Expression:
        # Floats and decimals cast to integers truncate toward zero (as Daft's SQL CAST does);
        # Arrow's safe cast would refuse a fractional value.
        if pa.types.is_integer(target) and self.ctx.type_of is not None:
            try:
                source = self.ctx.type_of(value)
            except Exception:  # noqa: BLE001 - type unknown here (e.g. an aggregate): plain cast
                source = None
            if source is not None and (pa.types.is_floating(source) or pa.types.is_decimal(source)):
                value = Expression._call("trunc", value.cast(pa.float64()))
        return value.cast(target)

    def _arg(self, node: exp.Expression) -> Arg:
        return Arg(self.translate(node), literal_value(node))

    def _predicate(self, node: exp.Expression) -> Expression:
        if isinstance(node, exp.Is):
            return self._is(node)
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Between):
            low, high = self.translate(node.args["low"]), self.translate(node.args["high"])
            return self.translate(node.this).between(low, high)
        return self._like(node)  # type: ignore[arg-type]

    def _is(self, node: exp.Is) -> Expression:
        target = node.expression
        if isinstance(target, exp.Null):
            return self.translate(node.this).is_null()
        if isinstance(target, exp.Boolean):
            # IS TRUE / IS FALSE never give null.
            value = self.translate(node.this)
            matched = value if target.this else ~value
            return Expression._call("coalesce", matched, lit(False))
        raise unsupported(node, "IS with something other than NULL, TRUE or FALSE")

    def _in(self, node: exp.In) -> Expression:
        if node.args.get("query") is not None or node.args.get("unnest") is not None:
            if node.args.get("negate"):
                raise unsupported(node, "NOT IN (subquery)")
            raise unsupported(node, "IN (subquery) other than a top-level WHERE condition")
        items = node.expressions
        values = [literal_value(i) for i in items]
        target = self.translate(node.this)
        if all(v is not MISSING for v in values):
            non_null = [v for v in values if v is not None]
            result = target.is_in(non_null)
            if len(non_null) != len(values):  # x IN (.., NULL): true or null, never false
                result = result.if_else(lit(True), lit(None).cast(pa.bool_()))
            return result
        terms = [target == self.translate(i) for i in items]
        result = terms[0]
        for term in terms[1:]:
            result = result | term
        return result

    def _like(self, node: exp.Like | exp.ILike) -> Expression:
        if node.args.get("escape") is not None:
            raise unsupported(node, "LIKE ... ESCAPE")
        name = "ilike" if isinstance(node, exp.ILike) else "like"
        pattern = literal_value(node.expression)
        if not isinstance(pattern, str):
            raise InvalidSQLException(f"{name.upper()} needs a string literal pattern: '{sql_text(node)}'")
        entry = functions.lookup(name)
        assert entry is not None
        return entry.build(name, [self._arg(node.this), Arg(lit(pattern), pattern)])

    def _if(
        self, cond: exp.Expression, then: exp.Expression | None, other: exp.Expression | None
    ) -> Expression:
        # A null condition picks the ELSE branch, as in SQL (if_else would give null).
        condition = Expression._call("coalesce", self.translate(cond), lit(False))
        then_expr = self.translate(then) if then is not None else lit(None)
        other_expr = self.translate(other) if other is not None else lit(None)
        return condition.if_else(then_expr, other_expr)

    def _case(self, node: exp.Case) -> Expression:
        operand = node.this
        default = node.args.get("default")
        result = self.translate(default) if default is not None else lit(None)
        for branch in reversed(node.args.get("ifs") or []):
            cond = branch.this
            if operand is not None:
                cond = exp.EQ(this=operand, expression=cond)
            test = Expression._call("coalesce", self.translate(cond), lit(False))
            result = test.if_else(self.translate(branch.args["true"]), result)
        return result

    def _count(self, node: exp.Count) -> Expression:
        self._check_aggregate(node)
        inner = node.this
        if isinstance(inner, exp.Star) or inner is None:
            if self.ctx.count_star is None:
                raise unsupported(node, "COUNT(*) without a table")
            return self.ctx.count_star()
        if isinstance(inner, exp.Distinct):
            if len(inner.expressions) != 1:
                raise unsupported(node, "COUNT(DISTINCT ..) over several expressions")
            entry = functions.lookup("count_distinct")
            assert entry is not None
            return entry.build("count_distinct", [self._arg(inner.expressions[0])])
        return self.translate(inner).count()

    def _check_aggregate(self, node: exp.Expression) -> None:
        if not self.ctx.allow_aggregates and not getattr(self, "_in_window", False):
            raise InvalidSQLException(
                f"aggregate function '{sql_text(node)}' is not allowed in {self.ctx.clause}"
            )

    def _call(self, name: str, node: exp.Expression, arg_nodes: list[exp.Expression]) -> Expression:
        entry = functions.lookup(name)
        if entry is None:
            raise InvalidSQLException(f"Unsupported SQL: unknown function '{name}' in '{sql_text(node)}'")
        if any(isinstance(a, exp.Distinct) for a in arg_nodes):
            raise unsupported(node, f"DISTINCT inside {name}()")
        if entry.nargs is not None and len(arg_nodes) not in entry.nargs:
            expected = " or ".join(str(n) for n in entry.nargs)
            raise InvalidSQLException(
                f"function {name}() takes {expected} argument(s), got {len(arg_nodes)}: '{sql_text(node)}'"
            )
        if entry.window_only and not getattr(self, "_in_window", False):
            raise InvalidSQLException(f"window function {name}() needs an OVER clause: '{sql_text(node)}'")
        if entry.aggregate:
            self._check_aggregate(node)
        return entry.build(name, [self._arg(a) for a in arg_nodes])

    def _window(self, node: exp.Window) -> Expression:
        if not self.ctx.allow_windows:
            raise InvalidSQLException(
                f"window function '{sql_text(node)}' is not allowed in {self.ctx.clause}"
            )
        from ketch.sql.translate_window import translate_window

        return translate_window(node, self)
