"""``col("*")``: Daft's wildcard, one expression per column. ``select``, ``agg`` and
``groupby(...).agg`` expand an expression that reads ``*`` into one copy per column of the input
(group keys skipped), each named as its column: ``df.agg(col("*").max())``,
``df.agg(count(mode="all"))``. An aliased wildcard expression is one column, computed over the
input's last column, as Daft does (``count(mode="all").alias("n")`` counts the rows)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ketch.expressions.expression import Expression, col

WILDCARD = "*"


def reads_wildcard(expr: Expression) -> bool:
    """Whether ``expr`` reads ``col("*")``."""
    return WILDCARD in expr._native.columns()


def expand(exprs: Iterable[Expression], columns: Sequence[str], skip: Sequence[str] = ()) -> list[Expression]:
    """``exprs`` with each wildcard expression replaced by one per column of ``columns`` not in
    ``skip``. Raises ValueError when no column is left to expand into."""
    out: list[Expression] = []
    for expr in exprs:
        if not reads_wildcard(expr):
            out.append(expr)
            continue
        names = [c for c in columns if c not in skip]
        if not names:
            raise ValueError(f"{expr!r}: col('*') has no columns to expand into")
        aliased = expr._native.output_name() != WILDCARD
        for name in names[-1:] if aliased else names:
            out.append(Expression(expr._native.substitute_column(WILDCARD, col(name)._native)))
    return out
