"""A DataFrame as Daft shows it: ``repr`` (terminal) and ``_repr_html_`` (notebooks).

A materialized DataFrame shows its first rows under a header of column names and types; an
unmaterialized one shows only the header (running nothing) and says so."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch.datatype import DataType
from ketch.display.cells import cell_html, cell_text, column_kinds
from ketch.display.text_table import box_table, hide_columns
from ketch.series import to_pylist

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

_CELL = "border: 1px solid #ccc; padding: 2px 6px; vertical-align: top;"
# Long values wrap inside their column instead of running over the next one.
_VALUE = "text-align: left; max-width: 192px; overflow-wrap: anywhere"
NOT_MATERIALIZED = "(No data to display: Dataframe not materialized, use .collect() to materialize)"


def _preview_rows() -> int:
    from ketch.context import get_execution_config

    return int(get_execution_config().daft_value("num_preview_rows"))


def _values(column: pa.ChunkedArray, kind: str) -> list:
    # Durations print from their integer ticks (Python's timedelta has no nanoseconds).
    if kind.startswith("duration:"):
        return column.cast(pa.int64()).to_pylist()
    return to_pylist(column)


def _rows(table: pa.Table, kinds: list[str], render: object) -> list[list[str]]:
    columns = [[render(v, k) for v in _values(table.column(i), k)] for i, k in enumerate(kinds)]  # type: ignore[operator]
    return [[column[r] for column in columns] for r in range(table.num_rows)]


def show_formatted(
    df: DataFrame, n: int, fmt: str | None, verbose: bool | None, max_width: int | None, align: str | None
) -> str:
    """``df.show(n, format=..., ...)``: the first ``n`` rows in one of Daft's preview formats,
    then Daft's footer."""
    from ketch.display.preview_formats import ALIGNS, FORMATS, render

    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"show(): format must be one of {list(FORMATS)}, got {fmt!r}")
    if align is not None and align not in ALIGNS:
        raise ValueError(f"show(): align must be one of {list(ALIGNS)}, got {align!r}")
    if fmt == "html":
        raise ValueError("Formatting options with HTML are not currently supported.")
    if max_width is not None and (not isinstance(max_width, int) or max_width < 1):
        raise ValueError(f"show(): max_width must be a positive int, got {max_width!r}")
    table = df.limit(n).to_arrow()
    schema = table.schema
    rows = _rows(table, column_kinds(schema), cell_text)
    text = render(
        list(schema.names),
        list(schema.types),
        [str(DataType(t)) for t in schema.types],
        rows,
        fmt or "fancy",
        bool(verbose),
        30 if max_width is None else max_width,
        align or "left",
    )
    if not rows:
        return text + "\n" + NO_ROWS
    return text + f"\n(Showing first {len(rows)}{known_total(df, table.num_rows, n)} rows)"


def known_total(df: Any, fetched: int, n: int) -> str:
    """Daft's " of N" in the show() footer: N when it is known, that is when ``df`` is
    materialized or its first-``n`` query gave fewer than ``n`` rows (then those are all);
    "" otherwise."""
    if df._result is not None:
        return f" of {df._result.num_rows}"
    return f" of {fetched}" if fetched < n else ""


NO_ROWS = "(No data to display: Materialized dataframe has no rows)"


def _footer(shown: int, total: int | None) -> str:
    if total is None:
        return NOT_MATERIALIZED
    if shown == 0:
        return NO_ROWS
    return f"(Showing first {shown} of {total} rows)"


def text_table(schema: pa.Schema, table: pa.Table | None) -> str:
    """The box table of ``schema`` and, when given, the rows of ``table``."""
    header = [[f.name, "---", str(DataType(f.type))] for f in schema]
    rows = [] if table is None else _rows(table, column_kinds(schema), cell_text)
    header, rows, centered = hide_columns(header, rows)
    return box_table(header, rows, has_body=table is not None, centered_header=centered)


def text_repr(schema: pa.Schema, result: pa.Table | None) -> str:
    """``repr(df)``: up to ``num_preview_rows`` (execution config, default 8) rows of a
    materialized result, else the schema and a note that nothing ran."""
    if result is None:
        return text_table(schema, None) + "\n\n" + NOT_MATERIALIZED
    shown = result.slice(0, _preview_rows())
    return text_table(schema, shown) + "\n\n" + _footer(shown.num_rows, result.num_rows)


def html_repr(schema: pa.Schema, result: pa.Table | None) -> str:
    """``df._repr_html_()``: an HTML table (header: name and type per column) with the first
    ``num_preview_rows`` rows when materialized; images as PNG thumbnails of at most 128 px,
    tensors and embeddings as shapes, text uncut (as Daft), everything HTML-escaped."""
    head = "".join(
        f'<th style="{_CELL} text-align: left; white-space: nowrap">'
        f"{html.escape(f.name)}<br />{html.escape(str(DataType(f.type)))}</th>"
        for f in schema
    )
    parts = [
        '<div><table class="dataframe" style="border-collapse: collapse">',
        f"<thead><tr>{head}</tr></thead>",
    ]
    if result is not None:
        shown = result.slice(0, _preview_rows())
        body = "".join(
            "<tr>"
            + "".join(f'<td style="{_CELL}"><div style="{_VALUE}">{c}</div></td>' for c in row)
            + "</tr>"
            for row in _rows(shown, column_kinds(schema), cell_html)
        )
        parts.append(f"<tbody>{body}</tbody></table>")
        parts.append(f"<small>{html.escape(_footer(shown.num_rows, result.num_rows))}</small></div>")
    else:
        parts.append(f"</table><small>{html.escape(NOT_MATERIALIZED)}</small></div>")
    return "".join(parts)
