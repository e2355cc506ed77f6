"""Image formats beyond PNG/JPEG (WebP, GIF, TIFF) against Pillow's pixels, encode round trips for
every format and mode, crop / to_mode / width / height / channels / mode, and bad input per format."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image

import ketch
from ketch import col
from ketch.errors import KetchError, KetchTypeError

CHANNELS = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}


def pixels(rng: np.random.Generator, h: int, w: int, mode: str) -> np.ndarray:
    return rng.integers(0, 256, (h, w, CHANNELS[mode]), dtype=np.uint8)


def pil(array: np.ndarray, mode: str) -> Image.Image:
    return Image.fromarray(array[:, :, 0] if mode == "L" else array, mode)


def save(image: Image.Image, fmt: str, **kwargs) -> bytes:
    buf = io.BytesIO()
    image.save(buf, fmt, **kwargs)
    return buf.getvalue()


def hwc(image: Image.Image) -> np.ndarray:
    array = np.asarray(image)
    return array[:, :, None] if array.ndim == 2 else array


def decode_all(blobs: list[bytes | None], **kwargs) -> list:
    df = ketch.from_arrow(pa.table({"b": pa.array(blobs, pa.binary())}))
    return df.with_column("img", col("b").image.decode(**kwargs)).to_pydict()["img"]


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def smooth(h: int, w: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([x * 255 // w, y * 255 // h, (x + y) * 127 // (w + h)], -1).astype(np.uint8)


# -- decode: exact against Pillow for lossless formats ---------------------------------------------


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
def test_decode_lossless_webp_matches_pillow(rng, mode):
    arrays = [pixels(rng, h, w, mode) for h, w in [(1, 1), (17, 9), (40, 64)]]
    blobs = [save(pil(a, mode), "WEBP", lossless=True) for a in arrays]
    for got, data in zip(decode_all(blobs), blobs, strict=True):
        np.testing.assert_array_equal(got, hwc(Image.open(io.BytesIO(data)).convert(mode)))


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
def test_decode_animated_webp_first_frame_matches_pillow(rng, mode):
    frames = [pil(pixels(rng, 12, 16, mode), mode) for _ in range(3)]
    data = save(frames[0], "WEBP", save_all=True, append_images=frames[1:], lossless=True, duration=50)
    (got,) = decode_all([data])
    reference = Image.open(io.BytesIO(data))
    assert reference.n_frames == 3
    np.testing.assert_array_equal(got, hwc(reference.convert(mode)))


def test_decode_lossy_webp_close_to_pillow():
    a = smooth(48, 64)
    data = save(Image.fromarray(a), "WEBP", quality=90)
    (got,) = decode_all([data])
    assert psnr(got, hwc(Image.open(io.BytesIO(data)).convert("RGB"))) > 45  # same libwebp decoder


@pytest.mark.parametrize("transparent", [False, True])
def test_decode_gif_first_frame_matches_pillow(rng, transparent):
    palette_image = pil(pixels(rng, 23, 31, "RGB"), "RGB").quantize(64)
    kwargs = {"transparency": 5} if transparent else {}
    second = pil(pixels(rng, 23, 31, "RGB"), "RGB").quantize(64)
    data = save(palette_image, "GIF", save_all=True, append_images=[second], **kwargs)
    (got,) = decode_all([data])
    expected = Image.open(io.BytesIO(data)).convert("RGBA" if transparent else "RGB")
    ref = hwc(expected)
    if transparent:
        ref = ref.copy()
        ref[ref[:, :, 3] == 0] = 0  # transparent pixels: Ketch leaves them (0, 0, 0, 0)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA"])
@pytest.mark.parametrize("compression", [None, "tiff_lzw", "tiff_adobe_deflate"])
def test_decode_tiff_matches_pillow(rng, mode, compression):
    a = pixels(rng, 19, 27, mode)
    data = save(pil(a, mode), "TIFF", compression=compression)
    (got,) = decode_all([data])
    np.testing.assert_array_equal(got, a)


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA"])
def test_decode_bmp_matches_pillow(rng, mode):
    a = pixels(rng, 13, 21, mode)
    data = save(pil(a, mode), "BMP")
    (got,) = decode_all([data])
    np.testing.assert_array_equal(got, hwc(Image.open(io.BytesIO(data))))
    # Pillow stores RGBA as 32-bit BI_RGB, whose 4th byte is reserved: both read it back as RGB.
    np.testing.assert_array_equal(got, a[:, :, :3] if mode == "RGBA" else a)


def test_decode_cmyk_jpeg_close_to_pillow():
    rgb = Image.fromarray(smooth(40, 56))
    data = save(rgb.convert("CMYK"), "JPEG", quality=95)
    (got,) = decode_all([data])
    reference = hwc(Image.open(io.BytesIO(data)).convert("RGB"))
    assert got.shape == reference.shape
    assert int(np.abs(got.astype(int) - reference.astype(int)).max()) <= 2


def test_decode_jpeg_tiff_close(rng):
    a = smooth(32, 48)
    data = save(Image.fromarray(a), "TIFF", compression="jpeg", quality=95)
    (got,) = decode_all([data])
    assert psnr(got, a) > 30


# -- encode round trips --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["PNG", "WEBP", "TIFF"])
@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA"])
def test_encode_lossless_round_trips_through_pillow(rng, fmt, mode):
    arrays = [pixels(rng, h, w, mode) for h, w in [(1, 1), (13, 7), (32, 48)]]
    blobs = [save(pil(a, mode), "PNG") for a in arrays]
    df = ketch.from_pydict({"b": blobs}).with_column("img", col("b").image.decode(mode=mode))
    out = df.with_column("enc", col("img").image.encode(fmt)).to_pydict()["enc"]
    for data, a in zip(out, arrays, strict=True):
        decoded = Image.open(io.BytesIO(data))
        assert decoded.format == fmt
        if fmt == "WEBP" and mode in ("L", "LA"):  # WebP widens gray to RGB(A)
            decoded = decoded.convert("LA" if mode == "LA" else "L")
        np.testing.assert_array_equal(hwc(decoded), a)
        # ... and back through Ketch's own decoder.
    again = decode_all(out, mode=mode)
    for got, a in zip(again, arrays, strict=True):
        np.testing.assert_array_equal(got, a)


@pytest.mark.parametrize("mode", ["L", "RGB"])
def test_encode_jpeg_psnr(mode):
    a = smooth(64, 96)
    if mode == "L":
        a = hwc(Image.fromarray(a).convert("L"))
    df = ketch.from_pydict({"b": [save(pil(a, mode), "PNG")]}).with_column("img", col("b").image.decode())
    (data,) = df.with_column("enc", col("img").image.encode("jpeg", quality=90)).to_pydict()["enc"]
    decoded = Image.open(io.BytesIO(data))
    assert decoded.format == "JPEG" and decoded.mode == mode
    assert psnr(hwc(decoded), a) > 35


def test_encode_jpeg_of_rgba_fails_at_plan_time(rng):
    blobs = [save(pil(pixels(rng, 4, 4, "RGBA"), "RGBA"), "PNG")]
    df = ketch.from_pydict({"b": blobs}).with_column("img", col("b").image.decode(mode="RGBA"))
    with pytest.raises(KetchTypeError, match="no alpha channel"):
        df.with_column("j", col("img").image.encode("JPEG"))


def test_encode_jpeg_of_mixed_rgba_row_names_the_row(rng):
    blobs = [save(pil(pixels(rng, 4, 4, m), m), "PNG") for m in ["RGB", "RGB", "RGBA"]]
    df = ketch.from_pydict({"b": blobs}).with_column("img", col("b").image.decode())
    with pytest.raises(KetchError, match="row 2.*JPEG"):
        df.with_column("j", col("img").image.encode("JPEG")).collect()


def test_encode_rejects_unknown_format():
    with pytest.raises(ValueError, match="format must be"):
        col("img").image.encode("HEIC")


# -- crop, to_mode, properties -------------------------------------------------------------------


def test_crop_constant_and_per_row_bbox_match_pillow(rng):
    arrays = [pixels(rng, 20, 30, "RGB"), pixels(rng, 11, 9, "RGB")]
    blobs = [save(pil(a, "RGB"), "PNG") for a in arrays]
    df = ketch.from_pydict({"b": blobs, "box": [[2, 3, 10, 5], [0, 0, 50, 50]]})
    df = df.with_column("img", col("b").image.decode())
    out = df.select(
        col("img").image.crop((1, 2, 5, 4)).alias("c1"), col("img").image.crop(col("box")).alias("c2")
    ).to_pydict()
    np.testing.assert_array_equal(out["c1"][0], arrays[0][2:6, 1:6])
    np.testing.assert_array_equal(out["c1"][1], arrays[1][2:6, 1:6])
    np.testing.assert_array_equal(out["c2"][0], hwc(pil(arrays[0], "RGB").crop((2, 3, 12, 8))))
    np.testing.assert_array_equal(out["c2"][1], arrays[1])  # clipped to the image


def test_crop_outside_the_image_names_the_row(rng):
    blobs = [save(pil(pixels(rng, 5, 5, "L"), "L"), "PNG")] * 3
    df = ketch.from_pydict({"b": blobs, "box": [[0, 0, 2, 2], [0, 0, 2, 2], [9, 9, 2, 2]]})
    df = df.with_column("c", col("b").image.decode().image.crop(col("box")))
    with pytest.raises(KetchError, match="row 2.*does not overlap"):
        df.collect()
    with pytest.raises(ValueError, match="bbox"):
        col("x").image.crop((1, 2, 3))


@pytest.mark.parametrize("source", ["L", "LA", "RGB", "RGBA"])
@pytest.mark.parametrize("target", ["L", "LA", "RGB", "RGBA"])
def test_to_mode_matches_pillow_convert(rng, source, target):
    a = pixels(rng, 9, 14, source)
    if source in ("LA", "RGBA"):
        a[:, :, -1] = 255  # Pillow's RGBA→L ignores alpha like Ketch; keep it opaque for LA paths
    blob = save(pil(a, source), "PNG")
    df = ketch.from_pydict({"b": [blob]}).with_column("img", col("b").image.decode())
    (got,) = df.with_column("m", col("img").image.to_mode(target)).to_pydict()["m"]
    np.testing.assert_array_equal(got, hwc(pil(a, source).convert(target)))


def test_to_mode_keeps_fixed_shape(rng):
    blobs = [save(pil(pixels(rng, 8, 8, "RGB"), "RGB"), "PNG") for _ in range(5)]
    df = ketch.from_pydict({"b": blobs}).with_column("img", col("b").image.decode(mode="RGB"))
    df = df.with_column("small", col("img").image.resize(4, 3).image.to_mode("L"))
    assert str(df.schema().field("small").type) == str(ketch.DataType.image("L", 3, 4).to_arrow())
    block = df.to_pydict()["small"]
    assert [np.asarray(b).shape for b in block] == [(3, 4, 1)] * 5


def test_properties_width_height_channels_mode(rng):
    blobs = [save(pil(pixels(rng, h, w, m), m), "PNG") for h, w, m in [(3, 5, "L"), (7, 2, "RGBA")]]
    df = ketch.from_pydict({"b": [*blobs, None]}).with_column("img", col("b").image.decode())
    out = df.select(
        col("img").image.width().alias("w"),
        col("img").image.height().alias("h"),
        col("img").image.channels().alias("c"),
        col("img").image.mode().alias("m"),
    ).to_pydict()
    assert out == {"w": [5, 2, None], "h": [3, 7, None], "c": [1, 4, None], "m": ["L", "RGBA", None]}


# -- bad input, per format -----------------------------------------------------------------------


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    body = kind + payload
    return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body))


def _png_header_only(width: int, height: int) -> bytes:
    """A valid PNG header declaring width x height, with a tiny IDAT: refused before allocating."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(bytes(64))
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", idat)
        + _png_chunk(b"IEND", b"")
    )


def _bad_inputs(rng) -> dict[str, bytes]:
    a = pixels(rng, 16, 16, "RGB")
    webp = save(pil(a, "RGB"), "WEBP", lossless=True)
    gif = save(pil(a, "RGB").quantize(16), "GIF")
    tiff = save(pil(a, "RGB"), "TIFF")
    return {
        "zero_bytes": b"",
        "webp_truncated": webp[: len(webp) // 2],
        "webp_garbage": webp[:12] + bytes(40),
        "gif_truncated": gif[:20],
        "tiff_truncated": tiff[:30],
        "tiff_garbage": b"II*\x00" + bytes(60),
        "huge_header": _png_header_only(30000, 30000),
        "bmp_garbage": b"BM" + bytes(60),
    }


@pytest.mark.parametrize(
    "kind",
    [
        "zero_bytes",
        "webp_truncated",
        "webp_garbage",
        "gif_truncated",
        "tiff_truncated",
        "tiff_garbage",
        "huge_header",
        "bmp_garbage",
    ],
)
def test_bad_input_names_the_row_or_yields_null(rng, kind):
    good = save(pil(pixels(rng, 4, 4, "RGB"), "RGB"), "PNG")
    blobs = [good] * 150
    blobs[137] = _bad_inputs(rng)[kind]
    with pytest.raises(KetchError, match="row 137") as info:
        decode_all(blobs)
    if kind == "huge_header":
        assert "exceeds the limit" in str(info.value)
    images = decode_all(blobs, on_error="null")
    assert [i for i, v in enumerate(images) if v is None] == [137]
