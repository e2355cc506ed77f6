"""``DataFrame.show(format=, verbose=, max_width=, align=)``: Daft's preview formats.

Formats (as Daft 0.7.26 prints them): ``fancy`` (rounded box, ``┆`` between columns; with
``verbose`` the header holds name, ``---`` and type on three lines), ``grid`` (square box, ``│``),
``markdown`` (``| a |`` rows under ``|---|``), ``plain`` (cells padded by one space, no rules) and
``simple`` (``plain`` with a ``---+---`` rule under the header). Outside ``fancy``, ``verbose``
writes ``name (Type)``. A cell of ``max_width - 2`` characters or more keeps ``max_width - 3`` of
them and ends with ``…`` (headers are never cut). ``align``: ``left`` (default), ``right``,
``center`` (an odd spare space goes left) or ``auto`` (numbers right, the rest left); headers
stay left-aligned."""

from __future__ import annotations

import pyarrow as pa

FORMATS = ("fancy", "plain", "simple", "grid", "markdown", "html")
ALIGNS = ("auto", "left", "center", "right")


def _cut(text: str, max_width: int | None) -> str:
    if max_width is None or len(text) < max_width - 2:
        return text
    return text[: max(0, max_width - 3)] + "…"


def _pad(text: str, width: int, align: str) -> str:
    spare = width - len(text)
    if align == "right":
        return " " * spare + text
    if align == "center":
        left = (spare + 1) // 2
        return " " * left + text + " " * (spare - left)
    return text + " " * spare


def render(
    names: list[str],
    types: list[pa.DataType],
    type_names: list[str],
    rows: list[list[str]],
    fmt: str,
    verbose: bool,
    max_width: int | None,
    align: str,
) -> str:
    """The table of ``rows`` (cell texts, one list per row) under ``names`` in format ``fmt``."""
    fancy_header = fmt == "fancy" and verbose
    if fancy_header:
        header = [[n, "---", t] for n, t in zip(names, type_names, strict=True)]
    else:
        header = [[f"{n} ({t})" if verbose else n] for n, t in zip(names, type_names, strict=True)]
    body = [[_cut(cell, max_width) for cell in row] for row in rows]
    widths = [max([len(h) for h in header[c]] + [len(row[c]) for row in body]) for c in range(len(names))]
    aligns = [
        ("right" if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) else "left")
        if align == "auto"
        else align
        for t in types
    ]

    def row_text(cells: list[str], left: str, sep: str, right: str, body_row: bool) -> str:
        padded = [
            _pad(c, w, a if body_row else "left") for c, w, a in zip(cells, widths, aligns, strict=True)
        ]
        return left + sep.join(padded) + right

    def rule(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right

    out: list[str] = []
    height = max(len(h) for h in header)
    header_lines = [[h[i] if i < len(h) else "" for h in header] for i in range(height)]
    if fmt in ("fancy", "grid"):
        bar = "┆" if fmt == "fancy" else "│"
        top, bottom = (
            (("╭", "┬", "╮"), ("╰", "┴", "╯")) if fmt == "fancy" else (("┌", "┬", "┐"), ("└", "┴", "┘"))
        )
        between = ("├", "╌", "┼", "┤") if fmt == "fancy" else ("├", "─", "┼", "┤")
        out.append(rule(top[0], "─", top[1], top[2]))
        out += [row_text(line, "│ ", f" {bar} ", " │", False) for line in header_lines]
        out.append(rule("╞", "═", "╪", "╡"))  # also above no rows, as Daft prints it
        for r, row in enumerate(body):
            if r:
                out.append(rule(*between))
            out.append(row_text(row, "│ ", f" {bar} ", " │", True))
        out.append(rule(bottom[0], "─", bottom[1], bottom[2]))
    elif fmt == "markdown":
        out += [row_text(line, "| ", " | ", " |", False) for line in header_lines]
        out.append(rule("|", "-", "|", "|"))
        out += [row_text(row, "| ", " | ", " |", True) for row in body]
    else:  # plain, simple
        sep = "  " if fmt == "plain" else "   "
        out += [row_text(line, " ", sep, " ", False) for line in header_lines]
        if fmt == "simple":
            out.append(rule("", "-", "+", ""))
        out += [row_text(row, " ", sep, " ", True) for row in body]
    return "\n".join(out)
