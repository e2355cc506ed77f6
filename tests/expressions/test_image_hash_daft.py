"""daft.functions.image_hash / Expression.image_hash against Daft 0.7.26: the hashes real Daft gave
for the same pixels (tests/data/image_hash_daft/expected.json, written by generate.py there from
images.py), for every method, several hash sizes, binbits and segments, L / LA / RGB / RGBA images;
plus the signature, output types, nulls and errors Daft has."""

from __future__ import annotations

import importlib.util
import io
import json
import math
import pathlib
from types import ModuleType

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image

import ketch
from ketch import col
from ketch.errors import KetchTypeError
from ketch.functions import image_hash

DATA = pathlib.Path(__file__).parent.parent / "data" / "image_hash_daft"


def _load_images_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("image_hash_daft_images", DATA / "images.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


IMAGES = _load_images_module()
EXPECTED = json.loads((DATA / "expected.json").read_text())


def png(pixels: np.ndarray) -> bytes:
    mode = IMAGES.MODES[pixels.shape[2]]
    buf = io.BytesIO()
    Image.fromarray(pixels[..., 0] if mode == "L" else pixels, mode).save(buf, "PNG")
    return buf.getvalue()


def image_frame(pixels: list[np.ndarray | None]) -> ketch.DataFrame:
    """One Image[mode] column "img" of the given arrays (all of one mode; None for null), through
    lossless PNG and image.decode."""
    mode = IMAGES.MODES[next(p for p in pixels if p is not None).shape[2]]
    df = ketch.from_pydict({"b": [None if p is None else png(p) for p in pixels]})
    return df.select(col("b").image.decode(mode=mode).alias("img"))


def ketch_hashes(method: str, hash_size: int, binbits: int, segments: int) -> list[str]:
    images = IMAGES.make_images()
    out: dict[str, str] = {}
    for channels in sorted({p.shape[2] for _, p in images}):
        group = [(n, p) for n, p in images if p.shape[2] == channels]
        expr = image_hash(col("img"), method=method, hash_size=hash_size, binbits=binbits, segments=segments)
        got = image_frame([p for _, p in group]).select(expr.alias("h")).to_pydict()["h"]
        out.update({n: h.hex() for (n, _), h in zip(group, got, strict=True)})
    return [out[n] for n, _ in images]


def test_reference_file_matches_the_images() -> None:
    assert EXPECTED["daft_version"] == "0.7.26"
    assert EXPECTED["images"] == [n for n, _ in IMAGES.make_images()]
    assert set(EXPECTED["cases"]) == {IMAGES.case_key(*c) for c in IMAGES.CASES}


# The one inexact (case, image): a crop of the diagonal gradient whose 32 x 32 thumbnail has flat
# columns, so some DCT coefficients are 0 in exact arithmetic; Daft's rustfft leaves rounding noise
# (~1e-13) there, which decides those bits, and Ketch's sums leave different noise. (For constant
# thumbnails rustfft gives exact zeros and Ketch snaps to them; for sizes that are not powers of two
# Daft sums directly in f64 and Ketch repeats that arithmetic, noise included.)
KNOWN_DCT_NOISE = {("crop_resistant/8/3/4", "diagonal_l")}


def hamming(a: str, b: str) -> int:
    return bin(int(a, 16) ^ int(b, 16)).count("1")


@pytest.mark.parametrize("case", IMAGES.CASES, ids=lambda c: IMAGES.case_key(*c))
def test_hash_matches_daft_bit_for_bit(case: tuple[str, int, int, int]) -> None:
    key = IMAGES.case_key(*case)
    want = EXPECTED["cases"][key]
    got = ketch_hashes(*case)
    names = EXPECTED["images"]
    diffs = []
    for name, g, w in zip(names, got, want, strict=True):
        if w is None or g == w:
            continue
        if (key, name) in KNOWN_DCT_NOISE:
            assert len(g) == len(w) and hamming(g, w) <= 4, (name, g, w)
            continue
        diffs.append(f"{name}: {g} != {w}")
    assert not diffs, diffs


def test_flat_methods_and_defaults_match_the_free_function() -> None:
    pixels = [p for n, p in IMAGES.make_images() if p.shape[2] == 3]
    df = image_frame(pixels)
    got = df.select(
        col("img").image_hash().alias("default"),
        col("img").image_hash(method="dhash_vertical", hash_size=4).alias("dv"),
        col("img").image_hash(method="colorhash", binbits=4).alias("ch"),
    ).to_pydict()
    want = df.select(
        image_hash(col("img"), method="phash", hash_size=8, binbits=3, segments=3).alias("default"),
        image_hash(col("img"), method="dhash_vertical", hash_size=4).alias("dv"),
        image_hash(col("img"), method="colorhash", binbits=4).alias("ch"),
    ).to_pydict()
    assert got == want
    names = [n for n, p in IMAGES.make_images() if p.shape[2] == 3]
    phash = dict(zip(EXPECTED["images"], EXPECTED["cases"][IMAGES.case_key("phash", 8, 3, 3)], strict=True))
    assert [h.hex() for h in got["default"]] == [phash[n] for n in names]


@pytest.mark.parametrize(
    ("kwargs", "width"),
    [
        ({}, 8),
        ({"method": "ahash", "hash_size": 5}, math.ceil(25 / 8)),
        ({"method": "whash", "hash_size": 16}, 32),
        ({"method": "crop_resistant"}, 9 * 8),
        ({"method": "crop_resistant", "hash_size": 4, "segments": 2}, math.ceil(4 * 16 / 8)),
        ({"method": "colorhash"}, math.ceil(14 * 3 / 8)),
        ({"method": "colorhash", "binbits": 5}, math.ceil(14 * 5 / 8)),
    ],
)
def test_output_is_fixed_size_binary_with_nulls(kwargs: dict[str, object], width: int) -> None:
    pixels = np.arange(7 * 9 * 3, dtype=np.uint8).reshape(7, 9, 3)
    df = image_frame([pixels, None])
    table = df.select(image_hash(col("img"), **kwargs).alias("h")).to_arrow()  # type: ignore[arg-type]
    assert table.schema.field("h").type == pa.binary(width)
    values = table.column("h").to_pylist()
    assert values[1] is None and len(values[0]) == width


@pytest.mark.parametrize("method", ["phash", "dhash", "whash", "colorhash", "crop_resistant"])
def test_fixed_shape_images_hash_like_variable_shape(method: str) -> None:
    pixels = [p for n, p in IMAGES.make_images() if n == "smooth_rgb_200x150"]
    fixed = image_frame(pixels).select(col("img").image.resize(64, 48).alias("img"))
    resized = np.asarray(fixed.to_pydict()["img"][0], dtype=np.uint8).reshape(48, 64, 3)
    got = fixed.select(image_hash(col("img"), method=method).alias("h")).to_pydict()["h"]
    want = image_frame([resized]).select(image_hash(col("img"), method=method).alias("h")).to_pydict()["h"]
    assert str(fixed.schema()["img"].dtype) == "Image[RGB; 48 x 64]"  # fixed shape
    assert got == want


def test_non_image_input_fails_at_plan_time() -> None:
    df = ketch.from_pydict({"s": ["a", "b"]})
    with pytest.raises(KetchTypeError, match=r"image_hash.*col\(s\).*string"):
        df.select(image_hash(col("s")))


def test_bad_arguments_raise_daft_value_errors() -> None:
    x = col("x")
    with pytest.raises(ValueError, match="method must be one of .*'colorhash'.*but got: 'median'"):
        image_hash(x, method="median")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="hash_size must be a positive integer, but got: 0"):
        image_hash(x, hash_size=0)
    with pytest.raises(ValueError, match="hash_size must be a positive integer"):
        image_hash(x, hash_size=True)
    with pytest.raises(ValueError, match="power of 2 for 'whash', but got: 12"):
        image_hash(x, method="whash", hash_size=12)
    with pytest.raises(ValueError, match="binbits must be a positive integer"):
        image_hash(x, method="colorhash", binbits=-1)
    with pytest.raises(ValueError, match="segments must be a positive integer"):
        image_hash(x, method="crop_resistant", segments=0)
    with pytest.raises(ValueError, match="multiple of 8 for 'crop_resistant'"):
        image_hash(x, method="crop_resistant", hash_size=3)
    with pytest.raises(TypeError):
        image_hash(x, "phash")  # type: ignore[misc]  # keyword-only, as in Daft


@pytest.mark.parametrize("binbits", [3, 4, 1])
def test_colorhash_bits_equal_the_imagehash_package(binbits: int) -> None:
    """Daft's colorhash follows imagehash.colorhash (Pillow's L and HSV): the same 14 * binbits bits,
    in Daft's layout (MSB first from byte 0) rather than imagehash's left-padded hex."""
    import imagehash

    images = IMAGES.make_images()
    got = ketch_hashes("colorhash", 8, binbits, 3)
    for (name, pixels), g in zip(images, got, strict=True):
        mode = IMAGES.MODES[pixels.shape[2]]
        picture = Image.fromarray(pixels[..., 0] if mode == "L" else pixels, mode)
        want = imagehash.colorhash(picture, binbits=binbits).hash.flatten()
        bits = np.unpackbits(np.frombuffer(bytes.fromhex(g), np.uint8))[: 14 * binbits].astype(bool)
        assert (bits == want).all(), name
