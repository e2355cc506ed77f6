"""Native video kernels (FFmpeg): video_metadata, video_frames, video_keyframes,
get_video_frame_by_idx, the ``.video`` namespace and ``ketch.read_video_frames``, checked against
the ffmpeg CLI's own decode, with the bad inputs of issue 26."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
import video_media as media

import ketch
from ketch import col
from ketch.functions import get_video_frame_by_idx, video_frames, video_keyframes, video_metadata

FPS, W, H, GOP = media.FPS, media.WIDTH, media.HEIGHT, media.GOP


@pytest.fixture(scope="session")
def videos(tmp_path_factory):
    return media.make_videos(tmp_path_factory.mktemp("videos"))


def _bytes_df(*blobs: bytes | None) -> ketch.DataFrame:
    return ketch.from_pydict({"v": pa.array(list(blobs), pa.large_binary())})


def _one(expr, blob: bytes):
    return _bytes_df(blob).select(expr.alias("out")).to_pydict()["out"][0]


def _pixels(image) -> np.ndarray:
    """(H, W, 3) pixels of an image value: a numpy array, at the top level and inside a list or
    struct alike."""
    assert isinstance(image, np.ndarray), type(image)
    return image


# -- metadata --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "frames"),
    [("h264", 2 * FPS), ("h264_bframes", FPS), ("vp9", FPS), ("vp8", FPS), ("mkv", FPS), ("mjpeg", FPS)],
)
def test_metadata_of_each_container(videos, name, frames):
    meta = _one(video_metadata(col("v")), videos[name].read_bytes())
    assert (meta["width"], meta["height"]) == (W, H)
    assert meta["fps"] == pytest.approx(FPS)
    assert meta["frame_count"] == frames
    assert meta["duration"] == pytest.approx(frames / FPS, abs=0.05)
    assert 0 < meta["time_base"] <= 1 / FPS


def test_metadata_type_and_no_video_stream(videos):
    df = _bytes_df(videos["audio"].read_bytes(), None)
    out = df.select(col("v").video.metadata().alias("m"))
    assert out.schema()["m"].dtype.to_arrow() == pa.struct(
        [
            ("width", pa.int64()),
            ("height", pa.int64()),
            ("fps", pa.float64()),
            ("duration", pa.float64()),
            ("frame_count", pa.int64()),
            ("time_base", pa.float64()),
        ]
    )
    audio, null = out.to_pydict()["m"]
    assert audio == {k: None for k in audio}  # Daft: no video stream, every field None
    assert null is None


# -- frames ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "frames"), [("h264", 2 * FPS), ("h264_bframes", FPS), ("vp9", FPS), ("vp8", FPS), ("mkv", FPS)]
)
def test_all_frames_with_daft_fields(videos, name, frames):
    out = _one(video_frames(col("v")), videos[name].read_bytes())
    assert len(out) == frames
    assert [f["frame_index"] for f in out] == list(range(frames))
    times = [f["frame_time"] for f in out]
    assert times == pytest.approx([i / FPS for i in range(frames)], abs=1e-6)
    assert all(f["frame_pts"] is not None and f["frame_duration"] is not None for f in out)
    num, den = (int(x) for x in out[0]["frame_time_base"].split("/"))
    assert out[1]["frame_pts"] * num / den == pytest.approx(out[1]["frame_time"])
    assert math.gcd(num, den) == 1
    assert sum(f["is_key_frame"] for f in out) == math.ceil(frames / GOP)
    assert _pixels(out[0]["data"]).shape == (H, W, 3)


def test_frames_match_the_ffmpeg_cli(videos):
    for name in ("mjpeg", "h264"):
        ours = np.stack([_pixels(f["data"]) for f in _one(video_frames(col("v")), videos[name].read_bytes())])
        oracle = media.rgb_frames(videos[name])
        assert ours.shape == oracle.shape
        assert np.abs(ours.astype(int) - oracle.astype(int)).mean() < 3


def test_resize_happens_in_the_scaler(videos):
    out = _one(video_frames(col("v"), width=224, height=200), videos["h264"].read_bytes())
    assert len(out) == 2 * FPS
    ours = np.stack([_pixels(f["data"]) for f in out])
    assert ours.shape == (2 * FPS, 200, 224, 3)
    oracle = media.rgb_frames(videos["h264"], 224, 200)
    assert np.abs(ours.astype(int) - oracle.astype(int)).mean() < 4


def test_time_range_seeks_and_is_inclusive(videos):
    out = _one(video_frames(col("v"), start_time=0.5, end_time=1.0), videos["h264"].read_bytes())
    assert [f["frame_index"] for f in out] == list(range(13, 26))  # 0.52 s .. 1.00 s
    assert out[0]["frame_time"] == pytest.approx(0.52)
    assert out[-1]["frame_time"] == pytest.approx(1.0)
    full = _one(video_frames(col("v")), videos["h264"].read_bytes())
    assert np.array_equal(_pixels(out[0]["data"]), _pixels(full[13]["data"]))


def test_key_frame_selection(videos):
    blob = videos["h264"].read_bytes()
    keys = _one(video_frames(col("v"), is_key_frame=True), blob)
    assert [f["frame_index"] for f in keys] == list(range(0, 2 * FPS, GOP))
    assert all(f["is_key_frame"] for f in keys)
    others = _one(video_frames(col("v"), is_key_frame=False), blob)
    assert len(others) == 2 * FPS - len(keys) and not any(f["is_key_frame"] for f in others)


def test_sample_interval(videos):
    out = _one(video_frames(col("v"), sample_interval_seconds=0.5), videos["h264"].read_bytes())
    assert [f["frame_time"] for f in out] == pytest.approx([0, 0.52, 1.0, 1.52])  # first at or after 0.5 k
    out = _one(
        video_frames(col("v"), start_time=0.3, sample_interval_seconds=0.3), videos["h264"].read_bytes()
    )
    assert [f["frame_index"] for f in out] == [8, 15, 23, 30, 38, 45]  # first frame at or after 0.3 k


def test_keyframes(videos):
    for name, frames in (("h264", 2 * FPS), ("vp9", FPS), ("mjpeg", FPS)):
        keys = _one(video_keyframes(col("v")), videos[name].read_bytes())
        expected = frames if name == "mjpeg" else math.ceil(frames / GOP)
        assert len(keys) == expected, name
        assert _pixels(keys[0]).shape == (H, W, 3)
    keys = _one(col("v").video.keyframes(start_time=0.5, end_time=1.2), videos["h264"].read_bytes())
    assert len(keys) == 2  # frames 20 and 30 (0.8 s, 1.2 s)


def test_frame_by_index_matches_full_decode(videos):
    for name in ("h264", "h264_bframes", "vp9", "mkv", "mjpeg"):
        blob = videos[name].read_bytes()
        full = _one(video_frames(col("v")), blob)
        df = ketch.from_pydict({"v": pa.array([blob] * 3, pa.large_binary()), "i": [0, 17, len(full) - 1]})
        got = df.select(get_video_frame_by_idx(col("v"), col("i")).alias("f")).to_pydict()["f"]
        for image, i in zip(got, [0, 17, len(full) - 1], strict=True):
            assert np.array_equal(_pixels(image), _pixels(full[i]["data"])), (name, i)


def test_frame_by_index_past_the_end(videos):
    df = _bytes_df(videos["mjpeg"].read_bytes())
    with pytest.raises(Exception, match=r"get_video_frame_by_idx failed at row 0: frame index 999"):
        df.select(col("v").video.frame_by_idx(999)).to_pydict()
    out = df.select(col("v").video.frame_by_idx(999, on_error="null").alias("f")).to_pydict()
    assert out == {"f": [None]}


def test_output_type_and_file_columns(videos, tmp_path):
    files = ketch.from_files([str(videos["mjpeg"]), str(videos["vp9"])])
    out = files.select(
        col("file").file.path().alias("path"),
        video_frames(col("file"), end_time=0.2).alias("frames"),
        col("file").video.metadata().alias("meta"),
    )
    frame_type = out.schema()["frames"].dtype.to_arrow()
    assert pa.types.is_large_list(frame_type)
    assert [f.name for f in frame_type.value_type] == [
        "frame_index",
        "frame_time",
        "frame_time_base",
        "frame_pts",
        "frame_dts",
        "frame_duration",
        "is_key_frame",
        "data",
    ]
    assert repr(ketch.DataType(frame_type.value_type.field("data").type)) == "Image[RGB]"
    rows = out.to_pydict()
    assert [len(f) for f in rows["frames"]] == [6, 6]
    assert [m["width"] for m in rows["meta"]] == [W, W]


def test_explode_into_rows(videos):
    df = _bytes_df(videos["mjpeg"].read_bytes(), videos["vp9"].read_bytes())
    rows = df.select(video_frames(col("v"), width=64, height=48, end_time=0.1).alias("f")).explode("f")
    assert len(rows.to_pydict()["f"]) == 6
    same = df.select(col("v").video.frames(width=64, height=48, end_time=0.1).alias("f")).explode("f")
    data = same.select(col("f").struct.get("data").alias("d")).to_pydict()["d"]
    assert [_pixels(d).shape for d in data] == [(48, 64, 3)] * 6


# -- read_video_frames -----------------------------------------------------------------------------


def test_read_video_frames(videos, tmp_path):
    for name in ("h264", "mjpeg"):
        (tmp_path / videos[name].name).write_bytes(videos[name].read_bytes())
    df = ketch.read_video_frames(str(tmp_path / "*"), image_height=48, image_width=64)
    assert df.column_names == [
        "path",
        "frame_index",
        "frame_time",
        "frame_time_base",
        "frame_pts",
        "frame_dts",
        "frame_duration",
        "is_key_frame",
        "data",
    ]
    assert repr(df.schema()["data"].dtype) == "Image[RGB; 48 x 64]"
    rows = df.to_pydict()
    assert len(rows["path"]) == 3 * FPS
    by_path = {}
    for path, index in zip(rows["path"], rows["frame_index"], strict=True):
        by_path.setdefault(path, []).append(index)
    assert sorted(len(v) for v in by_path.values()) == [FPS, 2 * FPS]
    assert all(v == list(range(len(v))) for v in by_path.values())
    keys = ketch.read_video_frames(str(tmp_path / "*.mp4"), 48, 64, is_key_frame=True).to_pydict()
    # Daft's counter counts decoded frames, and with is_key_frame=True only keyframes are decoded.
    assert keys["frame_index"] == [0, 1, 2, 3, 4]
    assert keys["frame_time"] == pytest.approx([0, 0.4, 0.8, 1.2, 1.6])
    assert ketch.read_video_frames(str(tmp_path / "*.mp4"), 48, 64).limit(10).count_rows() == 10


# -- bad input -------------------------------------------------------------------------------------


GOOD: list[bytes] = []


@pytest.fixture(autouse=True)
def _good(videos):
    if not GOOD:
        GOOD.append(videos["mjpeg"].read_bytes())


def _error_and_null(blob: bytes, match: str, fn=video_frames) -> None:
    """A good row, the bad one, a good row: the error names row 1; with on_error="null" row 1 is
    null and the others intact."""
    df = _bytes_df(GOOD[0], blob, GOOD[0])
    with pytest.raises(Exception, match=match):
        df.select(fn(col("v")).alias("out")).to_pydict()
    out = df.select(fn(col("v"), on_error="null").alias("out")).to_pydict()["out"]
    assert out[1] is None
    assert out[0] is not None and out[2] is not None
    if fn is video_frames:
        assert len(out[0]) == len(out[2]) == FPS


def test_truncated_video(videos):
    blob = videos["h264"].read_bytes()  # moov atom at the end: cut it off
    _error_and_null(blob[: len(blob) // 2], r"video_frames failed at row 1: .*(Invalid data|moov)")


def test_truncated_stream_gives_the_frames_before_the_cut(videos):
    blob = videos["mjpeg"].read_bytes()
    cut = media.avi_chunks(blob)[12]
    out = _one(video_frames(col("v")), blob[:cut])
    assert 10 <= len(out) <= 12


def test_jpeg_renamed_mp4(videos):
    _error_and_null(
        videos["jpeg_as_mp4"].read_bytes(), r"video_frames failed at row 1: not a video container"
    )
    _error_and_null(
        videos["jpeg_as_mp4"].read_bytes(), r"video_metadata failed at row 1: not a video", video_metadata
    )


def test_zero_byte_file(videos):
    _error_and_null(b"", r"video_frames failed at row 1: the file is empty")


def test_header_claiming_100000x100000_is_refused_before_decoding(videos):
    avi = media.huge_header_avi(videos["mjpeg"].read_bytes(), 100000, 100000)
    _error_and_null(avi, r"row 1: the video header claims 100000x100000 pixels")
    _error_and_null(avi, r"row 1: the video header claims 100000x100000", video_metadata)
    # 14000 x 14000 passes FFmpeg's own size check but not the image pixel limit.
    _error_and_null(media.huge_y4m(14000, 14000), r"row 1: the video header claims 14000x14000 pixels")


def test_audio_only_file(videos):
    _error_and_null(videos["audio"].read_bytes(), r"video_frames failed at row 1: no video stream")
    _error_and_null(
        videos["audio"].read_bytes(), r"video_keyframes failed at row 1: no video stream", video_keyframes
    )


def test_corrupt_packets_in_the_middle_mjpeg(videos):
    blob = media.corrupt_mjpeg_avi(videos["mjpeg"].read_bytes(), [10, 11, 12])
    out = _one(video_frames(col("v")), blob)
    good = media.rgb_frames(videos["mjpeg"])
    indexes = [f["frame_index"] for f in out]
    assert indexes[:10] == list(range(10)) and indexes[-12:] == list(range(13, 25))
    for f in out:
        assert np.abs(_pixels(f["data"]).astype(int) - good[f["frame_index"]].astype(int)).mean() < 3


def test_corrupt_packets_in_the_middle_h264(videos):
    blob = bytearray(videos["h264"].read_bytes())
    mdat = blob.index(b"mdat") + 4
    middle = mdat + (len(blob) - mdat) // 2
    blob[middle : middle + 3000] = bytes((j * 91 + 7) & 0xFF for j in range(3000))
    out = _one(video_frames(col("v")), bytes(blob))
    assert len(out) >= 2 * FPS - GOP  # the codec resyncs at the next keyframe at the latest
    assert out[0]["frame_index"] == 0 and out[-1]["frame_index"] == 2 * FPS - 1


def test_memory_budget_caps_one_row(videos):
    ketch.set_execution_config(memory_budget_bytes=2 * W * H * 3 * 10)
    df = _bytes_df(videos["h264"].read_bytes())
    with pytest.raises(Exception, match=r"video_frames failed at row 0: .*memory budget"):
        df.select(video_frames(col("v")).alias("out")).to_pydict()
    small = df.select(video_frames(col("v"), width=32, height=24).alias("out")).to_pydict()["out"][0]
    assert len(small) == 2 * FPS


def test_bad_arguments():
    v = col("v")
    with pytest.raises(ValueError, match="width and height"):
        video_frames(v, width=10)
    with pytest.raises(ValueError, match="sample_interval_seconds"):
        video_frames(v, sample_interval_seconds=0)
    with pytest.raises(ValueError, match="on_error"):
        video_metadata(v, on_error="skip")
    with pytest.raises(Exception, match="expects encoded bytes"):
        ketch.from_pydict({"x": [1]}).select(video_metadata(col("x"))).to_pydict()


def test_video_file_objects_and_flat_expression_methods(videos):
    from ketch.functions import video_file

    df = ketch.from_pydict({"p": [str(videos["h264"]), None]}).with_column("f", video_file(col("p")))
    assert str(df.schema()["f"].dtype) == "File[Video]"
    f = df.to_pylist()[0]["f"]
    assert isinstance(f, ketch.VideoFile)
    meta = f.metadata()
    assert meta == df.select(col("f").video_metadata().alias("m")).to_pydict()["m"][0]
    keys = f.keyframes()
    assert len(keys) == -(-meta["frame_count"] // GOP) and keys[0].shape == (meta["height"], meta["width"], 3)
    frames = f.frames(width=32, height=24, end_time=0.5)
    assert [fr["frame_index"] for fr in frames] == list(range(len(frames))) and frames[0]["data"].shape == (
        24,
        32,
        3,
    )
    out = df.select(
        col("f").video_keyframes(end_time=0.0).alias("k"), col("f").video_frames().alias("v")
    ).to_pydict()
    assert out["k"][1] is None and len(out["k"][0]) == 1 and isinstance(out["k"][0][0], np.ndarray)
    assert len(out["v"][0]) == meta["frame_count"] and out["v"][1] is None
