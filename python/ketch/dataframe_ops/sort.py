"""DataFrame.sort by computed keys: the native sort orders by columns, so keys that are not plain
columns (``col("a") + col("b")``, aliases, casts) are computed into hidden columns first, sorted
by, and dropped after. Both runners then sort by plain columns (the Ray runner's range shuffle
samples them like any other)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ketch.expressions.expression import Expression, col

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

_HIDDEN_KEY = "__ketch_sort_key_{}__"


def sort(df: DataFrame, keys: list[Expression], descending: list[bool], nulls_first: list[bool]) -> DataFrame:
    """``df`` sorted by ``keys`` (one flag of each list per key); the output has ``df``'s columns."""
    from ketch.dataframe import DataFrame

    hidden: dict[str, Expression] = {}
    plain: list[Expression] = []
    for i, key in enumerate(keys):
        if key._native.is_column():
            plain.append(key)
        else:
            name = _HIDDEN_KEY.format(i)
            hidden[name] = key
            plain.append(col(name))
    source = df.with_columns(hidden) if hidden else df
    natives = [k._native for k in plain]
    out = DataFrame(source._plan.sort(natives, descending, nulls_first))
    if not hidden:
        return out
    return DataFrame(out._plan.project([col(name)._native for name in df.column_names]))
