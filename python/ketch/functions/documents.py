"""Document free functions (``pdf_text(col("f"))``): each is the ``Expression.pdf`` method of the
same name, so both spellings share one implementation (pdfium, native; see
:class:`ketch.expressions.pdf.PdfNamespace` for shapes, units and errors)."""

from __future__ import annotations

from typing import Any

from ketch.expressions.expression import Expression, _expr

__all__ = ["pdf_metadata", "pdf_page_count", "pdf_render", "pdf_text"]


def pdf_page_count(pdf: Expression, io_config: Any = None, on_error: str = "raise") -> Expression:
    """Number of pages (int64); see :meth:`PdfNamespace.page_count`."""
    return _expr(pdf).pdf.page_count(io_config=io_config, on_error=on_error)


def pdf_text(pdf: Expression, io_config: Any = None, on_error: str = "raise") -> Expression:
    """Per-page text, ``list<struct<page_number: int64 (1-based), text: large_string>>``; see
    :meth:`PdfNamespace.text`."""
    return _expr(pdf).pdf.text(io_config=io_config, on_error=on_error)


def pdf_render(
    pdf: Expression, page: int, dpi: float = 72, io_config: Any = None, on_error: str = "raise"
) -> Expression:
    """Page ``page`` (1-based) rendered at ``dpi`` as Image[RGB]; see :meth:`PdfNamespace.render`."""
    return _expr(pdf).pdf.render(page, dpi=dpi, io_config=io_config, on_error=on_error)


def pdf_metadata(pdf: Expression, io_config: Any = None, on_error: str = "raise") -> Expression:
    """Page count, Info-dictionary strings and the encrypted flag as a struct; see
    :meth:`PdfNamespace.metadata`."""
    return _expr(pdf).pdf.metadata(io_config=io_config, on_error=on_error)
