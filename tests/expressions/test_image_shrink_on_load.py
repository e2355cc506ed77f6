"""Shrink-on-load: ``image.decode().image.resize(w, h)`` decodes JPEGs reduced in the DCT (1/2, 1/4
or 1/8, as Pillow's ``thumbnail`` asks ``draft`` for: at least twice the target) before the
bilinear resize. Reference values come from Pillow: with that ``Image.draft`` the same pixels
exactly, without it (full decode) within a mean of 3 levels, the tolerance of Ketch's resize
against Pillow's."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from sklearn.datasets import load_sample_images

import ketch
from ketch import col

TARGET = (224, 160)  # (w, h)


def _jpeg(size: tuple[int, int], mode: str = "RGB", progressive: bool = False) -> bytes:
    photo = Image.fromarray(load_sample_images().images[0]).resize(size, Image.BICUBIC)
    if mode != "RGB":
        photo = photo.convert(mode)
    out = io.BytesIO()
    photo.save(out, "JPEG", quality=90, progressive=progressive)
    return out.getvalue()


def _pillow(blob: bytes, mode: str, draft: bool) -> np.ndarray:
    image = Image.open(io.BytesIO(blob))
    if draft:
        image.draft(mode, (2 * TARGET[0], 2 * TARGET[1]))  # Pillow's thumbnail, reducing_gap=2
    return np.asarray(image.convert(mode).resize(TARGET, Image.BILINEAR))


def _ketch(blobs: list[bytes], mode: str) -> np.ndarray:
    df = ketch.from_pydict({"b": blobs}).select(
        col("b").image.decode(mode=mode).image.resize(*TARGET).alias("i")
    )
    return ketch.Series(df.to_arrow().column("i")).to_numpy()


@pytest.mark.parametrize(
    ("size", "mode", "progressive"),
    [
        ((1000, 700), "RGB", False),  # 1/2
        ((1900, 1300), "RGB", True),  # 1/4, progressive
        ((3600, 2600), "RGB", False),  # 1/8
        ((1900, 1300), "L", False),  # grayscale, 1/4
        ((460, 330), "RGB", False),  # too small to reduce
        ((100, 60), "RGB", False),  # smaller than the target: upscaled
    ],
)
def test_reduced_decode_matches_pillow_draft(size: tuple[int, int], mode: str, progressive: bool):
    blob = _jpeg(size, mode, progressive)
    got = _ketch([blob], mode)[0]
    assert np.array_equal(got.reshape(_pillow(blob, mode, draft=True).shape), _pillow(blob, mode, draft=True))
    full = _pillow(blob, mode, draft=False).astype(int)
    assert np.abs(got.reshape(full.shape).astype(int) - full).mean() < 3


def test_cmyk_and_other_formats_decode_at_full_size_then_resize():
    photo = Image.fromarray(load_sample_images().images[1]).resize((900, 600))
    cmyk, png = io.BytesIO(), io.BytesIO()
    photo.convert("CMYK").save(cmyk, "JPEG", quality=90)
    photo.save(png, "PNG")
    got = _ketch([cmyk.getvalue(), png.getvalue()], "RGB")
    for blob, image in zip((cmyk.getvalue(), png.getvalue()), got, strict=True):
        ref = np.asarray(Image.open(io.BytesIO(blob)).convert("RGB").resize(TARGET, Image.BILINEAR)).astype(
            int
        )
        assert np.abs(image.astype(int) - ref).mean() < 3


def test_only_the_decode_under_the_resize_shrinks():
    blob = _jpeg((1000, 700))
    df = ketch.from_pydict({"b": [blob]}).select(
        col("b").image.decode(mode="RGB").alias("full"),
        col("b").image.decode(mode="RGB").image.resize(*TARGET).alias("small"),
    )
    plan = io.StringIO()
    df.explain(show_all=True, file=plan)
    assert "draft_w=224" in plan.getvalue() and "draft_h=160" in plan.getvalue()
    out = df.to_pydict()
    assert out["full"][0].shape == (700, 1000, 3)
    assert np.array_equal(out["small"][0], _pillow(blob, "RGB", draft=True))
