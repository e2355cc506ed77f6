"""Terminal tables drawn with box characters, in the layout Daft prints schemas and DataFrames:
rounded corners, ``┆`` between columns, ``╞═╡`` under the header and ``├╌┤`` between rows."""

from __future__ import annotations


def box_table(header: list[list[str]], rows: list[list[str]], has_body: bool | None = None) -> str:
    """A table whose header cells hold one or more lines (``header[c]`` for column ``c``) and
    whose body has ``rows`` (each a list of cells, one per column; a cell with newlines spans
    lines). The ``╞═╡`` rule under the header is drawn when ``has_body`` (default: when there
    are rows): Daft draws it for a materialized DataFrame of no rows, and closes the table right
    under the header for an unmaterialized one."""
    if not header:
        return "(No columns)"
    # A body cell may hold several lines (Daft prints a struct one field per line).
    split = [[cell.split("\n") for cell in row] for row in rows]
    widths = [
        max([len(line) for line in header[c]] + [len(part) for row in split for part in row[c]])
        for c in range(len(header))
    ]
    height = max(len(cell) for cell in header)

    def line(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right

    def cells(values: list[str]) -> str:
        return "│ " + " ┆ ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " │"

    out = [line("╭", "─", "┬", "╮")]
    for i in range(height):
        out.append(cells([cell[i] if i < len(cell) else "" for cell in header]))
    if rows or has_body:
        out.append(line("╞", "═", "╪", "╡"))
        for r, row in enumerate(split):
            if r:
                out.append(line("├", "╌", "┼", "┤"))
            for i in range(max(len(cell) for cell in row)):
                out.append(cells([cell[i] if i < len(cell) else "" for cell in row]))
    out.append(line("╰", "─", "┴", "╯"))
    return "\n".join(out)
