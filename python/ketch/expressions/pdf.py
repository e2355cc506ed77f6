"""``Expression.pdf``: PDF kernels over a PDF's bytes (binary) or a File column, native C++ over
pdfium (the ``libpdfium.so`` shipped by the ``pypdfium2`` package, loaded at first use)."""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression

_ERRORS = """

        Errors (one row's own bytes decide its outcome; other rows are unaffected): an empty input,
        one without the ``%PDF-`` header in its first 1024 bytes (a File column's header is checked
        with one ranged read, so a large non-PDF is never read whole), one without ``%%EOF`` in its
        last 1024 bytes ("truncated"), an encrypted PDF that needs a password (the message says
        "encrypted"), one pdfium cannot parse, or a file larger than the query's memory budget raise
        ``KetchValueError`` (``KetchIOError`` for a file that cannot be read) naming the source row,
        the path and the cause; with ``on_error="null"`` that row is null instead. A column that is
        neither binary nor File fails at plan time with ``KetchTypeError``. Without pypdfium2
        installed the query fails naming it."""


def _locate_pdfium() -> None:
    """Points the core at pypdfium2's libpdfium.so (KETCH_PDFIUM_LIBRARY) unless already set. The
    core also finds it by itself beside pyarrow in the same site-packages (as in Ray workers)."""
    if os.environ.get("KETCH_PDFIUM_LIBRARY"):
        return
    spec = importlib.util.find_spec("pypdfium2_raw")  # finds the package without importing it
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            path = os.path.join(folder, "libpdfium.so")
            if os.path.exists(path):
                os.environ["KETCH_PDFIUM_LIBRARY"] = path
                return


class PdfNamespace:
    """PDF documents, one per row: bytes (binary / large_binary) or a File column
    (``ketch.from_files``; local, http(s)://, s3:// with ``io_config``)."""

    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def _call(self, function: str, io_config: Any, on_error: str, **options: Any) -> Expression:
        from ketch.expressions.expression import Expression
        from ketch.io.config import io_options

        if on_error not in ("raise", "null"):
            raise ValueError(f"on_error must be 'raise' or 'null', got {on_error!r}")
        _locate_pdfium()
        return Expression._call(function, self._expr, on_error=on_error, **io_options(io_config), **options)

    def page_count(self, io_config: Any = None, on_error: str = "raise") -> Expression:
        """Number of pages (int64) of each PDF (pdfium's FPDF_GetPageCount)."""
        return self._call("pdf_page_count", io_config, on_error)

    def text(self, io_config: Any = None, on_error: str = "raise") -> Expression:
        """The text of every page: ``list<struct<page_number: int64, text: large_string>>``, one
        element per page in page order, ``page_number`` counting from 1. Text is pdfium's
        extraction (standard-14 and embedded fonts, reading order as pdfium finds it) as UTF-8; its
        line breaks are ``"\\n"`` (pdfium's ``"\\r\\n"`` normalized); a page without text gives
        ``""``. ``.explode()`` it for one row per page."""
        return self._call("pdf_text", io_config, on_error)

    def render(
        self, page: int, dpi: float = 72, io_config: Any = None, on_error: str = "raise"
    ) -> Expression:
        """Page ``page`` (1-based, as ``text()``'s ``page_number``) of each PDF rendered by pdfium
        on a white background, annotations included: an ``Image[RGB]`` column (HWC uint8) of
        ``round(width_pt * dpi / 72)`` x ``round(height_pt * dpi / 72)`` pixels, the page size in
        points (1/72 inch) after its /Rotate. ``dpi`` in (0, 2400].

        A page number past the document's end, or an output over 178,956,970 pixels (the image
        decoder's limit) or over the memory budget (refused before allocating), is a row error as
        below. A page < 1 or a bad dpi raises ``ValueError`` when building the expression."""
        if isinstance(page, bool) or not isinstance(page, int) or page < 1:
            raise ValueError(f"page must be a page number >= 1 (pages count from 1), got {page!r}")
        if isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or not 0 < dpi <= 2400:
            raise ValueError(f"dpi must be a number in (0, 2400], got {dpi!r}")
        return self._call("pdf_render", io_config, on_error, page=page, dpi=float(dpi))

    def metadata(self, io_config: Any = None, on_error: str = "raise") -> Expression:
        """The document's metadata: ``struct<page_count: int64, title, author, subject, keywords,
        creator, producer: string, encrypted: bool>`` (strings from the Info dictionary, null when
        absent or empty; ``encrypted`` is true for a document with a security handler that opened
        without a password, e.g. one with only an owner password)."""
        return self._call("pdf_metadata", io_config, on_error)


for _method in (PdfNamespace.page_count, PdfNamespace.text, PdfNamespace.render, PdfNamespace.metadata):
    _method.__doc__ = (_method.__doc__ or "") + _ERRORS
