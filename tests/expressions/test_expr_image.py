"""Image kernels: decode (PNG exact, JPEG close to Pillow), mode conversion, bilinear resize (within 1
of Pillow), FixedShapeImage numpy views, corrupt-input errors and plan-time type errors."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image

import ketch
from image_helpers import image_column
from ketch import col
from ketch.errors import KetchTypeError

CHANNELS = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}

# -- helpers -------------------------------------------------------------------------------------------


def random_pixels(rng: np.random.Generator, height: int, width: int, mode: str) -> np.ndarray:
    shape = (height, width) if mode == "L" else (height, width, CHANNELS[mode])
    return rng.integers(0, 256, shape, dtype=np.uint8)


def encode_pixels(pixels: np.ndarray, mode: str, fmt: str = "PNG", **kwargs) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels, mode).save(buf, fmt, **kwargs)
    return buf.getvalue()


def smooth_pixels(rng: np.random.Generator, height: int, width: int, mode: str) -> np.ndarray:
    """A gradient with mild noise: JPEG-friendly, still not constant."""
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack(
        [x * 200 // max(width, 1), y * 200 // max(height, 1), (x + y) * 100 // (width + height)], -1
    )
    noisy = np.clip(base + rng.integers(0, 20, base.shape), 0, 255).astype(np.uint8)
    return noisy if mode == "RGB" else np.asarray(Image.fromarray(noisy).convert(mode))


def encode(pixels: np.ndarray, fmt: str = "PNG", **kwargs) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, fmt, **kwargs)
    return buf.getvalue()


def hwc(image: Image.Image) -> np.ndarray:
    """Pillow pixels as (H, W, C) uint8, the layout Ketch returns (C = 1 for L)."""
    array = np.asarray(image)
    return array[:, :, None] if array.ndim == 2 else array


def pillow_decode(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def fixed_shape_column(block: np.ndarray, mode: str) -> pa.ExtensionArray:
    n, h, w, c = block.shape
    ext_type = ketch.DataType.image(mode, h, w).to_arrow()
    storage = pa.FixedSizeListArray.from_arrays(pa.array(block.reshape(-1), pa.uint8()), h * w * c)
    return pa.ExtensionArray.from_storage(ext_type, storage.cast(ext_type.storage_type))


def max_abs_diff(a: np.ndarray, b: np.ndarray) -> int:
    assert a.shape == b.shape, (a.shape, b.shape)
    return int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max())


SIZES = [(1, 1), (5, 7), (33, 20), (48, 64)]  # (height, width)


# -- decode --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA"])
def test_decode_png_matches_pillow_exactly(rng, mode):
    originals = [random_pixels(rng, h, w, mode) for h, w in SIZES]
    blobs = [encode_pixels(p, mode) for p in originals]
    df = ketch.from_pydict({"b": blobs + [None]}).with_column("img", col("b").image.decode())
    assert ketch.DataType(df.schema().field("img").type).is_image()
    images = df.to_pydict()["img"]
    assert images[-1] is None
    for blob, original, got in zip(blobs, originals, images, strict=False):
        expected = hwc(pillow_decode(blob))
        assert isinstance(got, np.ndarray) and got.dtype == np.uint8
        assert got.shape == expected.shape == (original.shape[0], original.shape[1], CHANNELS[mode])
        np.testing.assert_array_equal(got, expected)


def test_decode_flat_form_is_identical(rng):
    blobs = [
        encode(random_pixels(rng, h, w, m))
        for (h, w), m in zip(SIZES, ["L", "RGB", "RGBA", "RGB"], strict=True)
    ]
    df = ketch.from_pydict({"b": blobs}).with_columns(
        {
            "ns": col("b").image.decode(mode="RGB"),
            "flat": col("b").decode_image(mode="RGB"),
            "ns_raw": col("b").image.decode(),
            "flat_raw": col("b").decode_image(),
        }
    )
    table = df.to_arrow()
    assert table.schema.field("ns").type == table.schema.field("flat").type
    assert table.column("ns").equals(table.column("flat"))
    assert table.column("ns_raw").equals(table.column("flat_raw"))
    out = df.to_pydict()
    for a, b in zip(out["ns"], out["flat"], strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.shape[2] == 3


@pytest.mark.parametrize("mode", ["L", "RGB"])
def test_decode_jpeg_close_to_pillow(rng, mode):
    blobs = [
        encode(smooth_pixels(rng, h, w, mode), "JPEG", quality=90) for h, w in [(16, 16), (40, 50), (61, 37)]
    ]
    images = ketch.from_pydict({"b": blobs}).with_column("img", col("b").image.decode()).to_pydict()["img"]
    for blob, got in zip(blobs, images, strict=True):
        expected = hwc(pillow_decode(blob))
        assert got.shape == expected.shape
        assert got.shape[2] == CHANNELS[mode]
        assert np.abs(got.astype(float) - expected.astype(float)).mean() < 1.0


@pytest.mark.parametrize(
    ("source", "target", "tolerance"),
    [
        ("RGB", "L", 1),
        ("RGBA", "L", 1),
        ("RGB", "LA", 1),
        ("L", "RGB", 0),
        ("RGBA", "RGB", 0),
        ("RGB", "RGBA", 0),
        ("L", "RGBA", 0),
    ],
)
def test_decode_with_mode_conversion_matches_pillow_convert(rng, source, target, tolerance):
    blobs = [encode(random_pixels(rng, h, w, source)) for h, w in SIZES]
    df = ketch.from_pydict({"b": blobs}).with_column("img", col("b").image.decode(mode=target))
    assert ketch.DataType(df.schema().field("img").type).image_info()[0] == target
    for blob, got in zip(blobs, df.to_pydict()["img"], strict=True):
        expected = hwc(pillow_decode(blob).convert(target))
        assert got.shape == expected.shape
        assert max_abs_diff(got, expected) <= tolerance


def test_decode_of_int_column_fails_at_plan_time():
    df = ketch.from_pydict({"x": [1, 2, 3]})
    with pytest.raises(KetchTypeError) as info:
        df.with_column("img", col("x").image.decode())
    assert isinstance(info.value, TypeError)
    message = str(info.value)
    assert "col(x)" in message and "int64" in message


def test_resize_of_non_image_column_fails_at_plan_time():
    with pytest.raises(KetchTypeError, match=r"col\(s\).*string"):
        ketch.from_pydict({"s": ["a"]}).with_column("r", col("s").image.resize(4, 4))


def test_invalid_mode_and_on_error_rejected():
    with pytest.raises(ValueError, match="CMYK"):
        col("b").image.decode(mode="CMYK")
    with pytest.raises(ValueError, match="on_error"):
        col("b").image.decode(on_error="ignore")
    with pytest.raises(ValueError):
        col("b").image.resize(0, 5)


@pytest.mark.parametrize("gamma", [100000, 50000])  # gAMA = 1.0 (linear) and 0.5, in units of 1e-5
def test_decode_png_with_gamma_chunk_matches_pillow(rng, gamma):
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add(b"gAMA", gamma.to_bytes(4, "big"))
    original = random_pixels(rng, 8, 9, "RGB")
    blob = encode(original, pnginfo=info)
    got = ketch.from_pydict({"b": [blob]}).with_column("img", col("b").image.decode()).to_pydict()["img"][0]
    expected = hwc(pillow_decode(blob))
    np.testing.assert_array_equal(expected, original)  # Pillow ignores gAMA
    np.testing.assert_array_equal(got, expected)


# -- corrupt input -------------------------------------------------------------------------------------


def _corruptions(good: bytes) -> dict[str, bytes]:
    idat = good.find(b"IDAT")
    idat_len = int.from_bytes(good[idat - 4 : idat], "big")
    idat_crc = bytearray(good)
    idat_crc[idat + 4 + idat_len] ^= 0xFF  # first byte of IDAT's CRC
    ihdr_crc = bytearray(good)
    ihdr_crc[8 + 8 + 13] ^= 0xFF  # first byte of IHDR's CRC (signature 8, length+type 8, data 13)
    return {
        "truncated": good[: len(good) // 2],
        "idat_crc": bytes(idat_crc),
        "ihdr_crc": bytes(ihdr_crc),
        "not_an_image": b"definitely not an image",
    }


def test_corrupt_png_row_index_after_filter_names_the_source_row(rng):
    good = encode(random_pixels(rng, 4, 4, "RGB"))
    blobs = [good] * 400  # several 64-row morsels
    blobs[300] = b"not an image at all"
    df = ketch.from_pydict({"b": blobs, "k": list(range(400))})

    def reported_row(dropped: int) -> str:
        query = df.where(col("k") != dropped).with_column("img", col("b").image.decode())
        with pytest.raises(ValueError) as info:
            query.collect()
        message = str(info.value)
        return message[message.index("row ") :].split(":")[0]

    # Whether the dropped row sits in an earlier morsel or in the same one, the error names the
    # row's position in the source (cpp/ketch/exec/operator.h: errors name source rows).
    assert reported_row(3) == "row 300"
    assert reported_row(296) == "row 300"


@pytest.mark.parametrize("kind", ["truncated", "idat_crc", "ihdr_crc", "not_an_image"])
def test_corrupt_png_raises_naming_the_row(rng, kind):
    good = encode(random_pixels(rng, 12, 10, "RGB"))
    blobs = [good] * 400
    blobs[300] = _corruptions(good)[kind]  # beyond the first morsels
    df = ketch.from_pydict({"b": blobs}).with_column("img", col("b").image.decode())
    with pytest.raises(ValueError) as info:
        df.collect()
    assert isinstance(info.value, ketch.errors.KetchError)
    message = str(info.value)
    assert "row 300" in message


def test_corrupt_png_on_error_null_nulls_exactly_bad_rows(rng):
    originals = [random_pixels(rng, 6 + i % 5, 9, "RGB") for i in range(400)]
    blobs = [encode(p) for p in originals]
    bad = {3: "truncated", 257: "idat_crc", 300: "ihdr_crc", 399: "not_an_image"}
    for row, kind in bad.items():
        blobs[row] = _corruptions(blobs[row])[kind]
    blobs[10] = None  # a null input stays null
    images = (
        ketch.from_pydict({"b": blobs})
        .with_column("img", col("b").image.decode(on_error="null"))
        .to_pydict()["img"]
    )
    assert [i for i, v in enumerate(images) if v is None] == sorted([*bad, 10])
    for i, got in enumerate(images):
        if got is not None:
            np.testing.assert_array_equal(got, originals[i])


# -- resize --------------------------------------------------------------------------------------------

RESIZES = {
    "down": ([(48, 64), (33, 20), (100, 90)], (16, 12)),  # (source (h, w) list, target (w, h))
    "up": ([(5, 7), (12, 9), (1, 1)], (40, 30)),
    "mixed": ([(30, 20), (64, 48)], (45, 8)),
}


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA"])  # RGBA fully opaque here; see the next test
@pytest.mark.parametrize("case", sorted(RESIZES))
def test_decode_then_resize_matches_pillow_bilinear(rng, mode, case):
    sources, (w, h) = RESIZES[case]
    originals = [random_pixels(rng, sh, sw, mode) for sh, sw in sources]
    if mode == "RGBA":
        for o in originals:
            o[..., 3] = 255
    blobs = [encode(p) for p in originals]
    df = ketch.from_pydict({"b": blobs}).with_column("r", col("b").image.decode(mode=mode).image.resize(w, h))
    dtype = ketch.DataType(df.schema().field("r").type)
    assert dtype.is_fixed_shape_image()
    assert dtype.image_info() == (mode, h, w)
    table = df.to_arrow()
    block = ketch.Series(table.column("r")).to_numpy()
    assert block.shape == (len(blobs), h, w, CHANNELS[mode]) and block.dtype == np.uint8
    rows = df.to_pydict()["r"]
    for blob, got, from_block in zip(blobs, rows, block, strict=True):
        expected = hwc(pillow_decode(blob).convert(mode).resize((w, h), Image.BILINEAR))
        assert max_abs_diff(got, expected) <= 1
        np.testing.assert_array_equal(got, from_block)


def test_decode_then_resize_translucent_rgba_matches_pillow(rng):
    original = random_pixels(rng, 20, 30, "RGBA")
    blob = encode(original)
    got = ketch.from_pydict({"b": [blob]}).with_column(
        "r", col("b").image.decode(mode="RGBA").image.resize(9, 7)
    )
    got = got.to_pydict()["r"][0]
    expected = hwc(pillow_decode(blob).resize((9, 7), Image.BILINEAR))
    assert max_abs_diff(got, expected) <= 1


@pytest.mark.parametrize("mode", ["L", "RGB"])
@pytest.mark.parametrize("case", sorted(RESIZES))
def test_resize_of_image_column_matches_pillow_bilinear(rng, mode, case):
    """Same check as above on an Image column built from arrays (independent of decode)."""
    sources, (w, h) = RESIZES[case]
    originals = [random_pixels(rng, sh, sw, mode) for sh, sw in sources]
    images = image_column([*originals, None], mode)
    df = ketch.from_arrow(pa.table({"img": images})).with_column("r", col("img").image.resize(w, h))
    dtype = ketch.DataType(df.schema().field("r").type)
    assert dtype.is_fixed_shape_image() and dtype.image_info() == (mode, h, w)
    rows = df.to_pydict()["r"]
    assert rows[-1] is None
    for original, got in zip(originals, rows, strict=False):
        expected = hwc(Image.fromarray(original).resize((w, h), Image.BILINEAR))
        assert got.shape == (h, w, CHANNELS[mode])
        assert max_abs_diff(got, expected) <= 1


def test_resize_without_known_mode_keeps_variable_shape_type(rng):
    originals = [random_pixels(rng, 10, 12, "RGB"), random_pixels(rng, 8, 8, "L")]
    images = image_column(originals, "RGB")
    mixed = pa.ExtensionArray.from_storage(ketch.DataType.image().to_arrow(), images.storage)
    df = ketch.from_arrow(pa.table({"img": mixed})).with_column("r", col("img").resize(6, 5))
    dtype = ketch.DataType(df.schema().field("r").type)
    assert dtype.is_image() and not dtype.is_fixed_shape_image()
    rows = df.to_pydict()["r"]
    assert [r.shape for r in rows] == [(5, 6, 3), (5, 6, 1)]
    for original, got in zip(originals, rows, strict=True):
        assert max_abs_diff(got, hwc(Image.fromarray(original).resize((6, 5), Image.BILINEAR))) <= 1


def test_series_to_numpy_of_fixed_shape_column(rng):
    originals = [random_pixels(rng, 20 + i, 15 + 2 * i, "RGB") for i in range(6)]
    df = ketch.from_arrow(pa.table({"img": image_column(originals, "RGB")}))
    table = df.with_column("r", col("img").image.resize(8, 6)).to_arrow()
    series = ketch.Series(table.column("r"), "r")
    block = series.to_numpy()
    assert isinstance(block, np.ndarray)
    assert block.shape == (6, 6, 8, 3) and block.dtype == np.uint8
    for original, got in zip(originals, block, strict=True):
        assert max_abs_diff(got, hwc(Image.fromarray(original).resize((8, 6), Image.BILINEAR))) <= 1
    assert len(series) == 6
    assert series.datatype().is_fixed_shape_image()


def test_series_to_numpy_of_sliced_fixed_shape_column():
    block = np.arange(5 * 2 * 3 * 3, dtype=np.uint8).reshape(5, 2, 3, 3)
    column = fixed_shape_column(block, "RGB")
    assert ketch.Series(column).to_numpy().shape == (5, 2, 3, 3)
    np.testing.assert_array_equal(ketch.Series(column).to_numpy(), block)
    np.testing.assert_array_equal(ketch.Series(column.slice(2, 2)).to_numpy(), block[2:4])


def test_fixed_shape_rows_survive_morsel_slicing():
    block = np.arange(7 * 2 * 2 * 1, dtype=np.uint8).reshape(7, 2, 2, 1)
    df = ketch.from_arrow(pa.table({"img": fixed_shape_column(block, "L"), "n": list(range(7))}))
    with ketch.execution_config_ctx(morsel_size_rows=2):
        out = df.select("img", "n").to_pydict()
    assert out["n"] == list(range(7))
    for expected, got in zip(block, out["img"], strict=True):
        np.testing.assert_array_equal(got, expected)
