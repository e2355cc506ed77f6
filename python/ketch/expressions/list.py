"""``Expression.list``: kernels over list columns (Daft's names), one native call each; the
``ketch.functions`` free functions (list_sum, list_sort, ...) call these methods. A non-list input
raises KetchTypeError at plan time naming the function, the expression and its type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


def _count_mode(mode: Any) -> str:
    name = str(getattr(mode, "value", getattr(mode, "name", mode))).lower()
    if name not in ("valid", "all", "null"):
        raise ValueError(f"count mode must be 'valid', 'all' or 'null', got {mode!r}")
    return name


class ListNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def _call(self, function: str, *args: Any, **options: Any) -> Expression:
        from ketch.expressions.expression import Expression

        return Expression._call(function, self._expr, *args, **options)

    def length(self) -> Expression:
        """Number of elements per list, nulls included (uint64); null for a null list."""
        return self._call("list_count", mode="all")

    def lengths(self) -> Expression:
        """Same as :meth:`length` (Daft's older name)."""
        return self.length()

    def count(self, mode: Any = "valid") -> Expression:
        """Number of elements per list (uint64): ``mode`` "valid" (non-null, default), "null" or "all"."""
        return self._call("list_count", mode=_count_mode(mode))

    def get(self, idx: Any, default: Any = None) -> Expression:
        """The element at ``idx`` (int or int column; negative counts from the end), ``default``
        where the index is out of bounds; the list's value type."""
        from ketch.expressions.expression import lit

        return self._call("list_get", idx, lit(default))

    def slice(self, start: Any, end: Any = None) -> Expression:
        """Elements ``[start, end)`` of each list, Python slicing rules (negative counts from the end,
        ``end=None`` to the end); a list of the same value type."""
        from ketch.expressions.expression import lit

        return self._call("list_slice", start, lit(end) if end is None else end)

    def chunk(self, size: int) -> Expression:
        """Consecutive chunks of ``size`` elements: list<fixed_size_list<T, size>>; a trailing partial
        chunk is dropped. ValueError unless ``size`` is a positive int."""
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise ValueError(f"chunk size must be a positive int, got {size!r}")
        return self._call("list_chunk", size=size)

    def join(self, delimiter: Any) -> Expression:
        """Each list of strings joined with ``delimiter`` (str or string column), a string of the
        list's string type; a null element joins as ``""`` (Daft: ``["a", None, "b"]`` with ``"-"``
        is ``"a--b"``), a null list stays null. KetchTypeError at plan time for lists of
        non-strings."""
        from ketch.expressions.expression import element

        filled = ListNamespace(self._call("list_map", element().fill_null("")))
        return filled._call("list_join", delimiter)

    def sort(self, desc: bool | None = None, nulls_first: bool | None = None) -> Expression:
        """Each list sorted (ascending unless ``desc``); nulls go first when ``nulls_first``, which
        defaults to ``desc`` (Daft's rule: nulls count as the largest values)."""
        from ketch.expressions.expression import Expression

        if isinstance(desc, Expression) or isinstance(nulls_first, Expression):
            raise TypeError("list.sort takes desc / nulls_first as bools, not per-row columns")
        if nulls_first is None:
            nulls_first = bool(desc)
        return self._call("list_sort", desc=bool(desc), nulls_first=bool(nulls_first))

    def distinct(self) -> Expression:
        """The distinct non-null elements of each list in order of first occurrence."""
        return self._call("list_distinct")

    def unique(self) -> Expression:
        """Same as :meth:`distinct`."""
        return self.distinct()

    def value_counts(self) -> Expression:
        """map<element, uint64>: how often each non-null element occurs in the list."""
        return self._call("list_value_counts")

    def contains(self, item: Any) -> Expression:
        """True where the list holds ``item`` (literal or column); null for a null list or item."""
        return self._call("list_contains", item)

    def append(self, other: Any) -> Expression:
        """Each list with ``other`` (literal or column, cast to the value type) added at its end; a
        null list stays null."""
        return self._call("list_append", other)

    def flatten(self) -> Expression:
        """Each row's inner lists concatenated (list<list<T>> -> list<T>); null inner lists add
        nothing, a null row stays null."""
        return self._call("list_flatten")

    def sum(self) -> Expression:
        """Sum of each list's non-null elements (Arrow's sum type: int64 / uint64 / float64 /
        decimal); null for empty or all-null lists."""
        return self._call("list_sum")

    def mean(self) -> Expression:
        """Mean of each list's non-null elements (float64); null for empty or all-null lists."""
        return self._call("list_mean")

    def min(self) -> Expression:
        """Smallest non-null element (the value type); null for empty or all-null lists."""
        return self._call("list_min")

    def max(self) -> Expression:
        """Largest non-null element (the value type); null for empty or all-null lists."""
        return self._call("list_max")

    def bool_and(self) -> Expression:
        """True when every non-null element is true; null for empty or all-null lists."""
        return self._call("list_bool_and")

    def bool_or(self) -> Expression:
        """True when any non-null element is true; null for empty or all-null lists."""
        return self._call("list_bool_or")

    def map(self, mapper: Expression) -> Expression:
        """Each list with ``mapper`` applied to its elements: ``mapper`` is an expression over
        :func:`ketch.element` (e.g. ``element().upper()``), evaluated once per morsel on all lists'
        elements together; a list of the mapper's type (list/large_list keep their kind,
        fixed-size lists give large_list). A null list stays null. The mapper may read nothing
        but ``element()`` and may not call a UDF (KetchValueError / KetchNotImplementedError at plan
        time)."""
        return self._call("list_map", mapper)

    def filter(self, predicate: Expression) -> Expression:
        """Each list keeping the elements where the boolean ``predicate`` over
        :func:`ketch.element` is true (false and null drop them); null lists stay null, empty ones
        empty. KetchTypeError at plan time for a non-boolean predicate."""
        return self._call("list_filter", predicate)
