"""The notebook view (``DataFrame._repr_html_``) and the terminal one (``repr``): image
thumbnails, shapes for tensors and embeddings, truncation and escaping; a screenshot of the HTML
in headless Chromium checks that the thumbnails really render where they should."""

from __future__ import annotations

import base64
import html
import io
import re
import shutil
import subprocess

import numpy as np
import pytest

import ketch
from ketch import col
from ketch.display.cells import png_bytes

LONG = 100  # characters of the long text cell


def _solid(height: int, width: int, rgb: tuple[int, int, int]) -> bytes:
    return png_bytes(np.tile(np.array(rgb, dtype=np.uint8), (height, width, 1)))


@pytest.fixture
def media_df() -> ketch.DataFrame:
    df = ketch.from_pydict(
        {
            "id": [1, 2, 3],
            "png": [_solid(64, 64, (255, 0, 0)), _solid(48, 32, (0, 0, 255)), _solid(200, 300, (0, 255, 0))],
            "text": ["<script>alert(1)</script>", "x" * LONG, None],
            "emb": [[0.5] * 4, [1.0] * 4, [2.0] * 4],
        }
    )
    df = df.with_column("image", col("png").image.decode(mode="RGB")).exclude("png")
    return df.with_column("emb", col("emb").cast(ketch.DataType.embedding(ketch.DataType.float32(), 4)))


def _images(page: str) -> list[tuple[int, int, bytes]]:
    """(width, height, PNG bytes) of each <img> data URI in the page, in order."""
    out = []
    for match in re.finditer(r'<img src="data:image/png;base64,([^"]+)" width="(\d+)" height="(\d+)"', page):
        out.append((int(match.group(2)), int(match.group(3)), base64.b64decode(match.group(1))))
    return out


def test_unmaterialized_repr_shows_the_schema_only(media_df):
    text = repr(media_df)
    assert "Dataframe not materialized" in text
    expected = {"id": "Int64", "text": "String", "emb": "Embedding[Float32; 4]", "image": "Image[RGB]"}
    for name, dtype in expected.items():
        assert name in text and dtype in text
    page = media_df._repr_html_()
    assert "<img" not in page and "Dataframe not materialized" in page


def test_materialized_html_has_thumbnails_shapes_and_escaped_text(media_df):
    from PIL import Image

    page = media_df.collect()._repr_html_()
    images = _images(page)
    assert [(w, h) for w, h, _ in images] == [(64, 64), (32, 48), (128, 85)]  # bounded at 128 px
    decoded = [np.asarray(Image.open(io.BytesIO(data)).convert("RGB")) for _, _, data in images]
    assert decoded[0].shape == (64, 64, 3) and (decoded[0] == [255, 0, 0]).all()
    assert decoded[2].shape == (85, 128, 3) and (decoded[2] == [0, 255, 0]).all()
    assert "<script>" not in page and html.escape("<script>alert(1)</script>") in page
    # Daft 0.7.26's HTML keeps long strings whole (its CSS clips the cell): no "…".
    assert "x" * LONG + "<" in page and "x…" not in page
    assert "&lt;Embedding shape=(4,)&gt;" in page
    assert "(Showing first 3 of 3 rows)" in page


def test_materialized_repr_shows_rows(media_df):
    text = repr(media_df.collect())
    assert "<Image 64x64x3>" in text and "<Image 300x200x3>" in text
    assert "<Embedding shape=(4,)>" in text
    assert "(Showing first 3 of 3 rows)" in text


def test_repr_shows_num_preview_rows():
    df = ketch.from_pydict({"x": list(range(20))}).collect()
    assert "(Showing first 8 of 20 rows)" in repr(df)
    with ketch.execution_config_ctx(num_preview_rows=3):
        assert "(Showing first 3 of 20 rows)" in repr(df)


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_html_screenshot_in_headless_chromium(media_df, tmp_path):
    from PIL import Image

    page = tmp_path / "table.html"
    page.write_text(
        '<html><body style="margin:0;background:#fff">' + media_df.collect()._repr_html_() + "</body></html>",
        encoding="utf-8",
    )
    shot = tmp_path / "table.png"
    subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--window-size=1000,700",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)

    def box(rgb: tuple[int, int, int]) -> tuple[int, int, int, int]:
        """(top, left, height, width) of the pixels of exactly this colour."""
        ys, xs = np.nonzero((np.abs(pixels - np.array(rgb)) <= 8).all(axis=2))
        assert len(ys), f"no pixel of colour {rgb} in the screenshot"
        return int(ys.min()), int(xs.min()), int(ys.max() - ys.min() + 1), int(xs.max() - xs.min() + 1)

    red, blue, green = box((255, 0, 0)), box((0, 0, 255)), box((0, 255, 0))
    assert red[2:] == (64, 64) and blue[2:] == (48, 32) and green[2:] == (85, 128)
    assert red[0] < blue[0] < green[0]  # rows in order, one under the other
    assert red[1] == blue[1] == green[1]  # in the same column
    text = media_df.collect()._repr_html_()
    assert "<script>" not in text  # the escaped script did not run nor vanish
