"""A relation while a query is planned: a DataFrame plus which SQL names (``table.column``) reach
which of its columns. Columns keep their own names where they can; a join renames the right
side's clashing columns to fresh internal names so both stay addressable."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pyarrow as pa
from sqlglot import exp

from ketch.dataframe import DataFrame
from ketch.expressions.expression import Expression, col
from ketch.sql.errors import InvalidSQLException


@dataclass(frozen=True)
class Field:
    """One column: the table (alias) it belongs to, its SQL name, the DataFrame column holding it.
    ``in_star``: part of ``SELECT *``; ``unqualified``: reachable by its bare name (a USING
    join's right key is neither: the merged column stands for both)."""

    qualifier: str | None
    name: str
    internal: str
    in_star: bool = True
    unqualified: bool = True


@dataclass
class Relation:
    df: DataFrame
    fields: list[Field] = field(default_factory=list)

    @staticmethod
    def of(df: DataFrame, qualifier: str | None) -> Relation:
        """Every column of ``df`` under ``qualifier``."""
        return Relation(df, [Field(qualifier, name, name) for name in df.column_names])

    def requalified(self, qualifier: str | None) -> Relation:
        """The same columns, all under ``qualifier`` (a subquery's alias)."""
        return Relation(self.df, [replace(f, qualifier=qualifier) for f in self.fields])

    def qualifiers(self) -> list[str]:
        return sorted({f.qualifier for f in self.fields if f.qualifier})

    def visible_names(self) -> list[str]:
        return [
            f.name if f.qualifier is None else f"{f.qualifier}.{f.name}" for f in self.fields if f.in_star
        ]

    def find(self, table: str | None, name: str) -> list[Field]:
        """Fields matching ``table.name`` (exact case first, then case-insensitively)."""
        for same in (lambda a, b: a == b, lambda a, b: a.lower() == b.lower()):
            if table is None:
                hits = [f for f in self.fields if f.unqualified and same(f.name, name)]
            else:
                hits = [
                    f for f in self.fields if f.qualifier and same(f.qualifier, table) and same(f.name, name)
                ]
            if hits:
                return hits
        return []

    def field(self, table: str | None, name: str, node: exp.Expression | None = None) -> Field:
        """The one field ``table.name`` names. Raises InvalidSQLException (naming the column and
        what exists) when none or several match."""
        hits = self.find(table, name)
        if len(hits) == 1:
            return hits[0]
        shown = f"{table}.{name}" if table else name
        if not hits:
            if table is not None and not any(
                f.qualifier and f.qualifier.lower() == table.lower() for f in self.fields
            ):
                raise InvalidSQLException(
                    f"Column {shown} not found: no table or alias '{table}' in FROM "
                    f"(tables: {self.qualifiers()})"
                )
            raise InvalidSQLException(f"Column {shown} not found; available columns: {self.visible_names()}")
        tables = sorted({str(f.qualifier) for f in hits})
        raise InvalidSQLException(f"column reference '{shown}' is ambiguous: it is in tables {tables}")

    def type_of(self, expr: Expression) -> pa.DataType:
        """The Arrow type ``expr`` has over this relation (plan-time type resolution)."""
        return self.df._plan.project([expr._native]).schema().field(0).type

    def resolve(self, table: str | None, name: str, node: exp.Expression | None = None) -> Expression:
        return col(self.field(table, name, node).internal)

    def star(self, table: str | None = None) -> list[Field]:
        """The fields ``*`` (or ``table.*``) expands to."""
        if table is None:
            return [f for f in self.fields if f.in_star]
        hits = [f for f in self.fields if f.qualifier and f.qualifier.lower() == table.lower()]
        if not hits:
            raise InvalidSQLException(
                f"no table or alias '{table}' in FROM for '{table}.*' (tables: {self.qualifiers()})"
            )
        return hits
