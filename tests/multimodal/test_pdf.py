"""PDF kernels (pdfium through pypdfium2's libpdfium.so): pdf_page_count, pdf_text, pdf_render,
pdf_metadata over bytes and File columns, with both spellings (free function and ``.pdf``), and
bad input: each bad row fails with an error naming the row and the cause, or is null with
on_error="null", never a crash, a hang or other rows lost.

PDFs are generated here with reportlab (standard-14 Helvetica, an embedded DejaVuSans TTF when
Debian's fonts-dejavu-core is installed, encryption) or written by hand byte by byte. Text
comparisons are exact up to one documented normalization: pdfium's line breaks ("\\r\\n") come
out as "\\n"."""

from __future__ import annotations

import io
import os
import time

import numpy as np
import pyarrow as pa
import pytest
from reportlab.lib import pdfencrypt  # noqa: E402
from reportlab.lib.pagesizes import A4, letter  # noqa: E402
from reportlab.pdfbase import pdfmetrics  # noqa: E402
from reportlab.pdfbase.ttfonts import TTFont  # noqa: E402
from reportlab.pdfgen import canvas  # noqa: E402

import ketch
from ketch import col
from ketch.errors import KetchError, KetchTypeError, KetchValueError
from ketch.functions import pdf_metadata, pdf_page_count, pdf_render, pdf_text

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
# The black rectangle every generated page carries, in points from the bottom-left corner.
RECT = (100, 100, 50, 30)  # x, y, w, h
RED = (300, 100, 40, 40)  # a pure red square: the channel order of rendered pixels


def make_pdf(
    pages: list[list[str]],
    size: tuple[float, float] = letter,
    font: str = "Helvetica",
    encrypt: pdfencrypt.StandardEncryption | None = None,
    info: dict[str, str] | None = None,
) -> bytes:
    """A PDF with one page per entry of `pages`, each line drawn at 12 pt, and RECT filled black."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=size, encrypt=encrypt, invariant=1)
    if font == "DejaVuSans":
        pdfmetrics.registerFont(TTFont("DejaVuSans", DEJAVU))
    for key, value in (info or {}).items():
        getattr(c, f"set{key}")(value)
    for lines in pages:
        y = size[1] - 72
        for line in lines:
            c.setFont(font, 12)
            c.drawString(72, y, line)
            y -= 20
        c.rect(*RECT, fill=1, stroke=0)
        c.setFillColorRGB(1, 0, 0)
        c.rect(*RED, fill=1, stroke=0)
        c.setFillColorRGB(0, 0, 0)
        c.showPage()
    c.save()
    return buf.getvalue()


def hand_pdf(extra_catalog: bytes = b"", content: bytes = b"BT /F1 24 Tf 72 720 Td (Hello) Tj ET") -> bytes:
    """A one-page PDF written byte by byte, with a correct xref table."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R " + extra_catalog + b" >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def jpeg_bytes() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 10, 10)).save(buf, "JPEG")
    return buf.getvalue()


PAGES = [
    ["The quick brown fox", "jumps over the lazy dog."],
    ["Page two, line one.", "Numbers: 0123456789", "Symbols: (a) [b] {c} 50% & more"],
    ["Third and last page."],
]


def bytes_frame(blobs: list[bytes | None]) -> ketch.DataFrame:
    return ketch.from_arrow(pa.table({"b": pa.array(blobs, pa.binary())}))


def expected_text(pages: list[list[str]]) -> list[dict]:
    return [{"page_number": i + 1, "text": "\n".join(lines)} for i, lines in enumerate(pages)]


# -- values --------------------------------------------------------------------------------------------


def test_page_count_and_text_of_generated_pdfs_in_page_order():
    one = make_pdf(PAGES)
    two = make_pdf([["Only page"]])
    df = bytes_frame([one, None, two])
    out = df.select(
        col("b").pdf.page_count().alias("n"),
        col("b").pdf.text().alias("t"),
        pdf_page_count(col("b")).alias("n2"),
        pdf_text(col("b")).alias("t2"),
    ).to_pydict()
    assert out["n"] == [3, None, 1]
    assert out["t"] == [expected_text(PAGES), None, expected_text([["Only page"]])]
    assert out["n2"] == out["n"] and out["t2"] == out["t"]


def test_text_schema_and_explode_one_row_per_page():
    df = bytes_frame([make_pdf(PAGES)]).select(col("b").pdf.text().alias("t"))
    assert df.schema().to_pyarrow_schema().field("t").type == pa.list_(
        pa.struct([("page_number", pa.int64()), ("text", pa.large_string())])
    )
    pages = df.select(col("t").explode().alias("p")).to_pydict()["p"]
    assert [p["page_number"] for p in pages] == [1, 2, 3]


def test_text_with_an_embedded_truetype_font_is_readable_unicode():
    lines = ["Grüße aus Köln – naïve café", "Ελληνικά και кириллица ∑ ≤ ∞"]
    blob = make_pdf([lines], font="DejaVuSans")
    assert b"DejaVuSans" in blob  # embedded (a subset), not a standard-14 name
    out = bytes_frame([blob]).select(col("b").pdf.text().alias("t")).to_pydict()["t"]
    assert out == [expected_text([lines])]


def test_render_sizes_follow_points_times_dpi_over_72():
    letter_pdf = make_pdf([["letter"]], size=letter)
    a4_pdf = make_pdf([["a4"]], size=A4)
    df = bytes_frame([letter_pdf, a4_pdf])
    for dpi in (72, 150, 33.3):
        images = df.select(col("b").pdf.render(1, dpi=dpi).alias("i")).to_pydict()["i"]
        for image, (w_pt, h_pt) in zip(images, (letter, A4), strict=True):
            assert image.shape == (round(h_pt * dpi / 72), round(w_pt * dpi / 72), 3), (dpi, image.shape)
            assert image.dtype == np.uint8


@pytest.mark.parametrize("dpi", [72, 144])
def test_render_draws_the_black_rectangle_where_it_was_put(dpi):
    blob = make_pdf(PAGES)
    for page in (1, 3):
        image = bytes_frame([blob]).select(pdf_render(col("b"), page, dpi=dpi).alias("i")).to_pydict()["i"][0]
        s = dpi / 72
        x, y, w, h = RECT
        height = round(letter[1] * s)
        # PDF's origin is the bottom-left corner, the image's the top-left one.
        top, bottom, left, right = height - (y + h) * s, height - y * s, x * s, (x + w) * s
        inside = image[int(top) + 2 : int(bottom) - 2, int(left) + 2 : int(right) - 2]
        assert inside.size and inside.max() < 40, "the rectangle is dark"
        assert (image[int(bottom) + 5 : int(bottom) + 20, int(left) : int(right)] > 240).all(), (
            "white below it"
        )
        assert (image[5:20, 5:20] > 240).all(), "the background is white"
        rx, ry, rw, rh = RED
        red = image[
            int(height - (ry + rh) * s) + 2 : int(height - ry * s) - 2,
            int(rx * s) + 2 : int((rx + rw) * s) - 2,
        ]
        assert red.size and (red[..., 0] > 240).all() and (red[..., 1:] < 15).all(), (
            "red is R, G, B = 255, 0, 0"
        )
        # Some text is drawn (dark pixels in the line area at the top left).
        assert (image[int(60 * s) : int(90 * s), int(72 * s) : int(250 * s)] < 100).any()


def test_render_type_is_image_rgb():
    df = bytes_frame([make_pdf(PAGES)]).select(col("b").pdf.render(2).alias("i"))
    assert str(df.schema().field("i").type) == "Image[RGB]"


def test_metadata_strings_page_count_and_encryption_flag():
    info = {"Title": "A Title", "Author": "Ada Lovelace", "Subject": "Engines", "Keywords": "pdf, test"}
    plain = make_pdf(PAGES, info=info)
    owner_only = make_pdf([["x"]], encrypt=pdfencrypt.StandardEncryption("", "owner-secret", canPrint=0))
    out = bytes_frame([plain, owner_only]).select(pdf_metadata(col("b")).alias("m")).to_pydict()["m"]
    assert out[0]["page_count"] == 3
    assert (out[0]["title"], out[0]["author"], out[0]["subject"], out[0]["keywords"]) == (
        "A Title",
        "Ada Lovelace",
        "Engines",
        "pdf, test",
    )
    assert "ReportLab" in out[0]["producer"]
    assert out[0]["encrypted"] is False
    assert out[1]["page_count"] == 1 and out[1]["encrypted"] is True
    # Opened without a password, the owner-only document's text reads as usual.
    text = bytes_frame([owner_only]).select(col("b").pdf.text().alias("t")).to_pydict()["t"][0]
    assert text == expected_text([["x"]])


def test_file_column_gives_the_same_values_as_bytes(tmp_path):
    blobs = {"a.pdf": make_pdf(PAGES), "b.bin": make_pdf([["second file"]])}
    for name, blob in blobs.items():
        (tmp_path / name).write_bytes(blob)
    df = ketch.from_files(str(tmp_path / "*")).select(
        col("file").pdf.page_count().alias("n"),
        col("file").pdf.text().alias("t"),
        col("file").pdf.render(1, dpi=36).alias("i"),
    )
    out = df.to_pydict()
    assert out["n"] == [3, 1]
    assert out["t"] == [expected_text(PAGES), expected_text([["second file"]])]
    assert [i.shape for i in out["i"]] == [(396, 306, 3), (396, 306, 3)]


def test_explain_shows_the_pdf_kernels():
    df = bytes_frame([make_pdf(PAGES)]).select(
        col("b").pdf.text().alias("t"), pdf_render(col("b"), 1).alias("i")
    )
    buf = io.StringIO()
    df.explain(show_all=True, file=buf)
    plan = buf.getvalue()
    assert "pdf_text" in plan and "pdf_render" in plan


# -- bad input -----------------------------------------------------------------------------------------


def good_and(bad: bytes) -> ketch.DataFrame:
    return bytes_frame([make_pdf(PAGES), bad, make_pdf([["after"]])])


def assert_row_error_and_null(bad: bytes, cause: str) -> None:
    """Row 1 holds `bad`: the error names row 1 and `cause` for every kernel; with on_error="null"
    only that row is null."""
    df = good_and(bad)
    calls = {
        "pdf_page_count": lambda **kw: col("b").pdf.page_count(**kw),
        "pdf_text": lambda **kw: col("b").pdf.text(**kw),
        "pdf_render": lambda **kw: col("b").pdf.render(1, **kw),
        "pdf_metadata": lambda **kw: col("b").pdf.metadata(**kw),
    }
    for name, call in calls.items():
        with pytest.raises(KetchValueError, match=rf"{name} failed at row 1: .*{cause}"):
            df.select(call().alias("x")).collect()
    out = df.select(
        col("b").pdf.page_count(on_error="null").alias("n"), col("b").pdf.text(on_error="null").alias("t")
    ).to_pydict()
    assert out["n"] == [3, None, 1]
    assert out["t"] == [expected_text(PAGES), None, expected_text([["after"]])]


def test_zero_bytes():
    assert_row_error_and_null(b"", r"empty \(0 bytes\)")


def test_truncated_pdf():
    blob = make_pdf(PAGES)
    for cut in (len(blob) // 2, len(blob) - 20, 10):
        assert_row_error_and_null(blob[:cut], "truncated: no '%%EOF' marker in the last 1024 bytes")


def test_jpeg_renamed_pdf_through_a_file_column(tmp_path):
    (tmp_path / "a.pdf").write_bytes(make_pdf(PAGES))
    (tmp_path / "b.pdf").write_bytes(jpeg_bytes())
    (tmp_path / "c.pdf").write_bytes(b"")
    df = ketch.from_files(str(tmp_path / "*.pdf"))
    with pytest.raises(
        KetchValueError,
        match=r"pdf_text failed at row 1 \('.*b\.pdf'\): not a PDF: no '%PDF-' header in the first "
        r"1024 bytes \(the bytes look like image/jpeg\)",
    ):
        df.select(col("file").pdf.text()).collect()
    out = df.select(col("file").pdf.page_count(on_error="null").alias("n")).to_pydict()
    assert out["n"] == [3, None, None]
    assert_row_error_and_null(jpeg_bytes(), r"not a PDF: .*image/jpeg")


def test_missing_file_is_an_io_error_naming_the_row(tmp_path):
    (tmp_path / "a.pdf").write_bytes(make_pdf(PAGES))
    paths = [str(tmp_path / "a.pdf"), str(tmp_path / "gone.pdf")]
    df = ketch.from_pydict({"p": paths}).with_column("f", col("p").url.to_file())
    with pytest.raises(KetchError, match=r"pdf_page_count failed at row 1 \('.*gone\.pdf'\)"):
        df.select(col("f").pdf.page_count()).collect()
    assert df.select(col("f").pdf.page_count(on_error="null").alias("n")).to_pydict()["n"] == [3, None]


def test_encrypted_pdf_says_encrypted():
    blob = make_pdf([["secret"]], encrypt=pdfencrypt.StandardEncryption("user-pw", "owner-pw"))
    assert_row_error_and_null(blob, "encrypted: a password is required to open it")


def test_garbage_after_a_valid_header_is_a_parse_error():
    blob = b"%PDF-1.7\n" + bytes(range(256)) * 8 + b"\n%%EOF\n"
    assert_row_error_and_null(blob, r"not a PDF or corrupted \(pdfium could not parse it\)")


def deeply_nested_outcome(depth: int) -> object:
    arrays = hand_pdf(extra_catalog=b"/Deep " + b"[" * depth + b"]" * depth)
    dicts = hand_pdf(extra_catalog=b"/Deep " + b"<< /A " * depth + b"1" + b" >>" * depth)
    content = hand_pdf(content=b"[" * depth + b"]" * depth + b" BT /F1 24 Tf 72 720 Td (Hello) Tj ET")
    df = bytes_frame([arrays, dicts, content])
    return df.select(
        col("b").pdf.page_count().alias("n"),
        col("b").pdf.text().alias("t"),
        col("b").pdf.render(1, dpi=18).alias("i"),
    ).to_pydict()


def test_10000_deep_object_nesting_neither_crashes_nor_hangs(run_isolated):
    # pdfium stops parsing an object 64 levels deep (the too-deep object reads as null): the
    # documents open, and their real content is intact.
    assert hand_pdf().startswith(b"%PDF-")
    out = run_isolated(deeply_nested_outcome, 10_000, timeout=60)
    assert out["n"] == [1, 1, 1]
    assert out["t"] == [[{"page_number": 1, "text": "Hello"}]] * 3
    assert [i.shape for i in out["i"]] == [(198, 153, 3)] * 3


def test_a_1gb_file_of_zeros_is_refused_from_its_first_kilobyte(tmp_path):
    good = tmp_path / "a.pdf"
    good.write_bytes(make_pdf(PAGES))
    zeros = tmp_path / "b.pdf"
    with open(zeros, "wb") as f:
        f.truncate(1 << 30)  # sparse: takes no disk, reads as 1 GiB of zeros
    df = ketch.from_files(str(tmp_path / "*.pdf"))
    start = time.monotonic()
    with pytest.raises(
        KetchValueError,
        match=r"pdf_page_count failed at row 1 \('.*b\.pdf'\): not a PDF: no '%PDF-' header in the "
        r"first 1024 bytes",
    ):
        df.select(col("file").pdf.page_count()).collect()
    out = df.select(col("file").pdf.text(on_error="null").alias("t")).to_pydict()
    assert out["t"] == [expected_text(PAGES), None]
    assert time.monotonic() - start < 10, "the 1 GiB file was read, not refused from its header"


def test_a_pdf_file_larger_than_the_memory_budget_is_refused_before_reading(tmp_path):
    big = tmp_path / "big.pdf"
    with open(big, "wb") as f:
        f.write(make_pdf(PAGES))
        f.truncate(1 << 30)  # a real header, then a sparse 1 GiB
    ketch.set_execution_config(memory_budget_bytes=64 << 20)
    df = ketch.from_files(str(big))
    with pytest.raises(KetchValueError, match=r"row 0 .*exceed the query's memory budget of 67108864 bytes"):
        df.select(col("file").pdf.page_count()).collect()


def test_render_page_out_of_range_names_the_row_and_the_page_count():
    df = bytes_frame([make_pdf([["one"]]), make_pdf(PAGES)])
    with pytest.raises(
        KetchValueError,
        match=r"pdf_render failed at row 0: page 3 is out of range: the document has 1 page \(in pdf_render",
    ):
        df.select(col("b").pdf.render(3)).collect()
    out = df.select(col("b").pdf.render(3, on_error="null").alias("i")).to_pydict()["i"]
    assert out[0] is None and out[1].shape == (792, 612, 3)


def test_render_over_the_pixel_limit_is_refused_before_allocating(run_isolated):
    # 612 x 792 points at 2400 dpi = 20400 x 26400 pixels > 178,956,970.
    out = run_isolated(render_outcome, make_pdf([["big"]]), 2400)
    assert "would be 20400 x 26400 pixels; the limit is 178956970 pixels per image" in out


def render_outcome(blob: bytes, dpi: float) -> str:
    try:
        bytes_frame([blob]).select(col("b").pdf.render(1, dpi=dpi)).collect()
    except KetchValueError as exc:
        return str(exc)
    return "ok"


def test_bad_arguments_fail_when_the_expression_is_built():
    df = ketch.from_pydict({"x": [1, 2]})
    with pytest.raises(KetchTypeError, match="pdf_text expects binary bytes or a File column"):
        df.select(col("x").pdf.text())
    with pytest.raises(ValueError, match="page must be a page number >= 1"):
        col("b").pdf.render(0)
    with pytest.raises(ValueError, match=r"dpi must be a number in \(0, 2400\]"):
        col("b").pdf.render(1, dpi=0)
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'null'"):
        col("b").pdf.text(on_error="skip")


def test_file_column_pipeline_on_both_runners(runner, tmp_path):
    """The kernels and their options travel in the serialized plan; Ray's engine workers find
    pdfium by themselves (beside pyarrow) and name the failing row as the native runner does."""
    for i in range(4):
        (tmp_path / f"{i}.pdf").write_bytes(make_pdf([[f"document {i}"], ["end"]]))
    (tmp_path / "4.pdf").write_bytes(jpeg_bytes())
    df = ketch.from_files(str(tmp_path / "*.pdf")).select(
        col("file").pdf.page_count(on_error="null").alias("n"),
        pdf_text(col("file"), on_error="null").alias("t"),
        col("file").pdf.render(2, dpi=9, on_error="null").alias("i"),
    )
    out = df.to_pydict()
    assert out["n"] == [2, 2, 2, 2, None]
    assert out["t"][:4] == [expected_text([[f"document {i}"], ["end"]]) for i in range(4)]
    assert out["t"][4] is None
    assert [None if i is None else i.shape for i in out["i"]] == [(99, 77, 3)] * 4 + [None]


def page_count_with_pdfium_at(path: str) -> str:
    os.environ["KETCH_PDFIUM_LIBRARY"] = path  # read at the process's first pdf call
    try:
        bytes_frame([make_pdf(PAGES)]).select(col("b").pdf.page_count()).collect()
    except KetchError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "ok"


def test_missing_pdfium_is_a_clear_error_naming_pypdfium2(run_isolated, tmp_path):
    message = run_isolated(page_count_with_pdfium_at, str(tmp_path / "nowhere" / "libpdfium.so"))
    assert message.startswith("KetchIOError: pdf functions need pdfium"), message
    assert 'pip install "ketch[media]"' in message and "nowhere/libpdfium.so" in message


def test_many_rows_across_compute_threads_give_each_row_its_own_document():
    # pdfium is not thread-safe: the kernels share one lock, so parallel morsels must neither crash
    # nor mix up documents.
    docs = [make_pdf([[f"doc {i} page {p}"] for p in range(1 + i % 3)]) for i in range(200)]
    ketch.set_execution_config(num_compute_threads=4)
    out = (
        bytes_frame(docs)
        .select(col("b").pdf.text().alias("t"), col("b").pdf.page_count().alias("n"))
        .to_pydict()
    )
    assert out["n"] == [1 + i % 3 for i in range(200)]
    assert out["t"] == [expected_text([[f"doc {i} page {p}"] for p in range(1 + i % 3)]) for i in range(200)]
