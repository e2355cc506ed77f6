"""``decode_media`` / ``col(...).decode()`` / ``.file.decode()``: a column of mixed media, each row
routed by the MIME type of its first bytes to the native kernel of its kind. Each field is
checked against the kernel called directly on the same bytes (the oracle), and the routing is
checked to read bytes, not names (a PNG named .wav is decoded as an image)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from audio_fixtures import make_audio_files
from PIL import Image
from reportlab.lib.pagesizes import letter  # noqa: E402
from reportlab.pdfgen import canvas  # noqa: E402
from video_media import make_videos

import ketch
from ketch import col
from ketch.functions import decode_audio, decode_media, pdf_text, video_metadata


def _pdf(lines: list[str]) -> bytes:
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=letter, invariant=1)
    for line in lines:
        c.setFont("Helvetica", 12)
        c.drawString(72, 700, line)
        c.showPage()
    c.save()
    return buf.getvalue()


def _png(seed: int) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, size=(12, 17, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> dict[str, bytes]:
    root = tmp_path_factory.mktemp("mixed")
    audio = make_audio_files(root / "audio")
    (root / "video").mkdir()
    videos = make_videos(root / "video")
    return {
        "png": _png(1),
        "flac": audio["speech.flac"].read_bytes(),
        "wav": audio["stereo.wav"].read_bytes(),
        "mp4": videos["h264"].read_bytes(),
        "avi": videos["mjpeg"].read_bytes(),
        "mkv": videos["mkv"].read_bytes(),
        "pdf": _pdf(["first page", "second page"]),
        "text": b"just some text\n",
    }


def test_each_row_goes_to_the_kernel_its_bytes_name(media) -> None:
    names = ["png", "flac", "text", "mp4", "pdf", "wav", "avi", "mkv"]
    values = [media[n] for n in names] + [None]
    df = ketch.from_pydict({"b": values})
    out = df.select(decode_media(col("b")).alias("d")).to_pydict()["d"]
    assert [row["mime_type"] if row else None for row in out] == [
        "image/png", "audio/flac", "text/plain", "video/mp4", "application/pdf", "audio/wav",
        "video/x-msvideo", "video/x-matroska", None,
    ]  # fmt: skip
    assert out[-1] is None
    # Exactly one field is set per decodable row; text has none.
    for name, row in zip(names, out, strict=False):
        set_fields = [k for k in ("image", "audio", "video", "pdf") if row[k] is not None]
        assert set_fields == ([] if name == "text" else [{"png": "image", "flac": "audio", "wav": "audio",
                              "pdf": "pdf"}.get(name, "video")]), name  # fmt: skip
    # Each field equals its kernel on the same bytes.
    np.testing.assert_array_equal(out[0]["image"], np.asarray(Image.open(io.BytesIO(media["png"]))))
    direct = (
        ketch.from_pydict({"b": [media["flac"], media["wav"]]})
        .select(decode_audio(col("b")).alias("a"))
        .to_pydict()["a"]
    )
    np.testing.assert_array_equal(out[1]["audio"], direct[0])
    np.testing.assert_array_equal(out[5]["audio"], direct[1])
    assert out[5]["audio"].shape == (22050, 2)
    mp4 = ketch.from_pydict({"b": [media["mp4"]]})
    meta = mp4.select(video_metadata(col("b")).alias("m")).to_pydict()["m"][0]
    assert out[3]["video"] == meta and meta["width"] == 320
    pages = ketch.from_pydict({"b": [media["pdf"]]}).select(pdf_text(col("b")).alias("p")).to_pydict()["p"][0]
    assert out[4]["pdf"] == pages
    assert [p["text"].strip() for p in out[4]["pdf"]] == ["first page", "second page"]


def test_files_are_routed_by_their_bytes_not_their_names(media, tmp_path: Path) -> None:
    """File input: a PNG named .wav decodes as an image; the three spellings agree."""
    (tmp_path / "looks_like.wav").write_bytes(media["png"])
    (tmp_path / "doc.bin").write_bytes(media["pdf"])
    (tmp_path / "clip.dat").write_bytes(media["flac"])
    df = ketch.from_glob_path(str(tmp_path / "*")).sort("path")
    a = df.select(col("path").url.to_file().file.decode().alias("d")).to_pydict()["d"]
    b = df.select(decode_media(col("path").url.to_file()).alias("d")).to_pydict()["d"]
    c = df.select(col("path").url.to_file().file.read().decode().alias("d")).to_pydict()["d"]
    assert [r["mime_type"] for r in a] == ["audio/flac", "application/pdf", "image/png"]
    for x, y, z in zip(a, b, c, strict=True):
        assert x["mime_type"] == y["mime_type"] == z["mime_type"]
    np.testing.assert_array_equal(a[2]["image"], np.asarray(Image.open(io.BytesIO(media["png"]))))
    np.testing.assert_array_equal(a[0]["audio"], c[0]["audio"])


def test_a_bad_row_names_its_row_file_type_and_cause_or_is_null(media, tmp_path: Path) -> None:
    truncated = media["flac"][:200]
    df = ketch.from_pydict({"b": [media["png"], truncated, media["pdf"]]})
    with pytest.raises(ValueError, match=r"decode_media failed at row 1 \(audio/flac, audio_decode\)"):
        df.select(decode_media(col("b"))).to_pydict()
    out = df.select(decode_media(col("b"), on_error="null").alias("d")).to_pydict()["d"]
    assert out[1]["mime_type"] == "audio/flac" and out[1]["audio"] is None
    assert out[0]["image"] is not None and out[2]["pdf"] is not None
    (tmp_path / "bad.flac").write_bytes(truncated)
    files = ketch.from_pydict({"p": [str(tmp_path / "bad.flac")]}).select(col("p").url.to_file().alias("f"))
    with pytest.raises(ValueError, match=r"at row 0 \('.*bad\.flac'\) \(audio/flac"):
        files.select(col("f").file.decode()).to_pydict()


def test_decode_with_a_charset_is_still_the_byte_codec() -> None:
    df = ketch.from_pydict({"b": [b"aGk="]})
    assert df.select(col("b").decode("base64").alias("x")).to_pydict()["x"] == [b"hi"]
    with pytest.raises(Exception, match="decode_media expects encoded bytes"):
        ketch.from_pydict({"x": [1]}).select(col("x").decode()).to_pydict()


def test_explain_shows_the_decode_as_its_own_node(media, tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(media["png"])
    files = ketch.from_glob_path(str(tmp_path / "*.png"))
    df = files.select(col("path").url.to_file().file.decode().alias("d"))
    out = io.StringIO()
    df.explain(show_all=True, file=out)
    text = out.getvalue()
    assert "media_decode" in text and "file_read" in text
