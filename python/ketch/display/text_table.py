"""Terminal tables drawn with box characters, in the layout Daft prints schemas and DataFrames:
rounded corners, ``┆`` between columns, ``╞═╡`` under the header and ``├╌┤`` between rows."""

from __future__ import annotations

from ketch.display.table_layout import arrange, display_width, wrap_cell


def box_table(
    header: list[list[str]],
    rows: list[list[str]],
    has_body: bool | None = None,
    centered_header: frozenset[int] = frozenset(),
    width: int | None = None,
) -> str:
    """A table whose header cells hold one or more lines (``header[c]`` for column ``c``) and
    whose body has ``rows`` (each a list of cells, one per column; a cell with newlines spans
    lines). The ``╞═╡`` rule under the header is drawn when ``has_body`` (default: when there
    are rows): Daft draws it for a materialized DataFrame of no rows, and closes the table right
    under the header for an unmaterialized one. Header cells of the columns in ``centered_header``
    are centred (an odd space left over goes to the left, as comfy_table does). ``width``: the
    table's width (default: ``table_width()``)."""
    if not header:
        return "(No columns)"
    # A body cell may hold several lines (Daft prints a struct one field per line); cells wider
    # than their column's share of the table width wrap (table_layout: comfy_table's Dynamic).
    split = [[cell.split("\n") for cell in row] for row in rows]
    column_lines = [list(header[c]) + [part for row in split for part in row[c]] for c in range(len(header))]
    widths = arrange(column_lines, table_width() if width is None else width)
    header = [wrap_cell(cell, w) for cell, w in zip(header, widths, strict=True)]
    split = [[wrap_cell(cell, w) for cell, w in zip(row, widths, strict=True)] for row in split]
    height = max(len(cell) for cell in header)

    def line(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right

    def cells(values: list[str], centered: frozenset[int] = frozenset()) -> str:
        parts = []
        for c, (v, w) in enumerate(zip(values, widths, strict=True)):
            pad = max(w - display_width(v), 0)
            if c in centered:
                parts.append(" " * ((pad + 1) // 2) + v + " " * (pad // 2))
            else:
                parts.append(v + " " * pad)
        return "│ " + " ┆ ".join(parts) + " │"

    out = [line("╭", "─", "┬", "╮")]
    for i in range(height):
        out.append(cells([cell[i] if i < len(cell) else "" for cell in header], centered_header))
    if rows or has_body:
        out.append(line("╞", "═", "╪", "╡"))
        for r, row in enumerate(split):
            if r:
                out.append(line("├", "╌", "┼", "┤"))
            for i in range(max(len(cell) for cell in row)):
                out.append(cells([cell[i] if i < len(cell) else "" for cell in row]))
    out.append(line("╰", "─", "┴", "╯"))
    return "\n".join(out)


# Daft's column budget (its Rust display code): a table gets ceil(width / 18) - 1 columns of the
# terminal's width (120 when stdout is not a terminal); beyond that it shows the first half and
# the last half, rounded as Daft does, around a "…" column that says how many are hidden.
DEFAULT_WIDTH_IF_NO_TTY = 120
EXPECTED_COL_WIDTH = 18


def table_width() -> int:
    """The width Daft lays tables out for: the terminal's when stdout is one (not under pytest),
    else 120."""
    import os
    import shutil
    import sys

    try:
        tty = sys.stdout.isatty() and "PYTEST_CURRENT_TEST" not in os.environ
    except (AttributeError, ValueError):
        tty = False
    return shutil.get_terminal_size((DEFAULT_WIDTH_IF_NO_TTY, 24)).columns if tty else DEFAULT_WIDTH_IF_NO_TTY


def visible_columns(num_columns: int, width: int | None = None) -> tuple[int, int]:
    """(head, tail): the first ``head`` and the last ``tail`` columns are shown (tail 0: all)."""
    width = table_width() if width is None else width
    max_cols = max(-(-width // EXPECTED_COL_WIDTH) - 1, 1)
    if num_columns <= max_cols:
        return num_columns, 0
    return -(-max_cols // 2), max_cols // 2


def hide_columns(
    header: list[list[str]], rows: list[list[str]]
) -> tuple[list[list[str]], list[list[str]], frozenset[int]]:
    """The header and rows with the middle columns replaced by Daft's "…" column, and the index
    of that column (to centre its header); unchanged when all columns fit."""
    head, tail = visible_columns(len(header))
    if not tail:
        return header, rows, frozenset()
    hidden = len(header) - head - tail
    marker = ["…", "", f"({hidden} hidden)"]
    new_header = header[:head] + [marker] + header[len(header) - tail :]
    new_rows = [row[:head] + ["…"] + row[len(row) - tail :] for row in rows]
    return new_header, new_rows, frozenset({head})
