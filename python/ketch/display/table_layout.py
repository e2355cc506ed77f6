"""Column widths and line wrapping of a terminal table as Daft's tables get them: comfy_table's
``ContentArrangement::Dynamic`` (Daft's Rust display code lays every table out with it, for the
terminal's width or 120 columns), ported so that a wide table wraps its cells where Daft's does.

- ``arrange(max_widths, table_width)``: each column's content width. Columns whose widest line fits
  the average space left are fixed to it (repeatedly, as the average grows); a column whose lines,
  wrapped at the average, leave 3 or more spaces free is fixed to its longest wrapped line; the
  rest share what is left evenly (the first columns get the odd spaces).
- ``split_line(line, width)``: comfy_table's wrap of one line: words (split at spaces) fill a line
  while they fit; a line with 2 or fewer free characters is closed; a word longer than the width is
  cut to fill the line.

Widths are terminal cells (``display_width``: East Asian wide characters count 2, combining marks
0, as the unicode-width crate comfy_table uses), except where comfy_table counts bytes
(``_longest_after_split``)."""

from __future__ import annotations

import unicodedata

_MIN_FREE_CHARS = 2


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes: 2 per East Asian wide or fullwidth character, 0 per
    combining mark, 1 otherwise."""
    if text.isascii():
        return len(text)
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _split_word(word: str, width: int) -> tuple[str, str]:
    """The longest head of ``word`` that fits ``width`` cells, and the rest."""
    used = 0
    for i, ch in enumerate(word):
        used += display_width(ch)
        if used > width:
            return word[:i], word[i:]
    return word, ""


def split_line(line: str, width: int) -> list[str]:
    """``line`` wrapped to lines of at most ``width`` characters (comfy_table's split_line with the
    space delimiter)."""
    lines: list[str] = []
    elements = line.split(" ")
    elements.reverse()
    current = ""

    def close_if_full(text: str) -> str:
        if display_width(text) > max(width - _MIN_FREE_CHARS, 0):
            lines.append(text)
            return ""
        return text

    while elements:
        word = elements.pop()
        added = display_width(word) + display_width(current) + (1 if current else 0)
        remaining = width - display_width(current) - (1 if current else 0)
        remaining = max(remaining, 0)
        if added <= width:
            current = (current + " " if current else "") + word
            current = close_if_full(current)
            continue
        if current and remaining <= _MIN_FREE_CHARS:
            elements.append(word)
            lines.append(current)
            current = ""
            continue
        if display_width(word) > width:
            fresh = not current
            if not fresh:
                current += " "
            head, rest = _split_word(word, remaining)
            if fresh and not head:
                head, rest = word[:1], word[1:]
            current += head
            elements.append(rest)
            lines.append(current)
            current = ""
            continue
        lines.append(current)
        current = close_if_full(word)
    if current:
        lines.append(current)
    return lines


def _longest_after_split(lines: list[str], width: int) -> int:
    """The longest line of a column wrapped at ``width``, in UTF-8 bytes: comfy_table measures
    this step with ``str::len`` (so a "…" counts 3), which decides the widths Daft prints."""
    longest = 0
    for line in lines:
        parts = split_line(line, width) if display_width(line) > width else [line]
        longest = max([longest] + [len(part.encode()) for part in parts])
    return longest


def arrange(column_lines: list[list[str]], table_width: int) -> list[int]:
    """The content width of each column (``column_lines[c]``: every line of column ``c``, header
    included) in a table at most ``table_width`` characters wide, with one border character
    around and between columns and one space of padding on each side of a cell."""
    count = len(column_lines)
    max_widths = [max((display_width(line) for line in lines), default=0) for lines in column_lines]
    remaining = max(table_width - (count + 1) - 2 * count, 0)
    widths: list[int | None] = [None] * count
    left = count

    def fix(c: int, width: int) -> None:
        nonlocal remaining, left
        widths[c] = width
        remaining = max(remaining - width, 0)
        left -= 1

    found = True
    while found and left:
        found = False
        if remaining // left == 0:
            break
        for c in range(count):
            if widths[c] is not None or not left:
                continue
            if max_widths[c] <= remaining // left:
                fix(c, max_widths[c])
                found = True
    found = True
    while found and left:
        found = False
        for c in range(count):
            if widths[c] is not None or not left:
                continue
            average = remaining // left
            longest = _longest_after_split(column_lines[c], average)
            if average - longest >= 3:
                fix(c, longest)
                found = True
    if left:
        remaining = max(remaining, left)
        share, extra = divmod(remaining, left)
        index = 0
        for c in range(count):
            if widths[c] is None:
                widths[c] = share + (1 if index < extra else 0)
                index += 1
    return [int(w or 0) for w in widths]


def wrap_cell(lines: list[str], width: int) -> list[str]:
    """A cell's lines with every line wider than ``width`` wrapped (``split_line``)."""
    out: list[str] = []
    for line in lines:
        out.extend(split_line(line, width) if display_width(line) > width else [line])
    return out
