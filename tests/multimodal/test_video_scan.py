"""``ketch.read_video_frames`` as a streaming scan (``ScanVideo``): one scan task per video, frames
decoded batch by batch, a pushed limit that stops the decoders, projection without RGB conversion,
explain, and bad files among good ones. Counts come from ``explain_analyze``'s scan stats
(``frames_decoded``: frames the decoders produced), never from timings."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401
import pytest
import video_media as media

import ketch
from ketch import col
from ketch.errors import KetchError
from ketch.expressions.expression import Expression

FPS = media.FPS
LONG_SECONDS = 60


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    return media.make_videos(tmp_path_factory.mktemp("scan_videos"))


@pytest.fixture(scope="module")
def long_video(tmp_path_factory) -> Path:
    """60 s at 25 fps, 64x48, H.264 with a keyframe every 2 s: 1,500 frames."""
    path = tmp_path_factory.mktemp("long") / "long.mp4"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-nostdin", "-f", "lavfi", "-i",
         f"testsrc2=size=64x48:rate={FPS}:duration={LONG_SECONDS}", "-c:v", "libx264", "-preset", "ultrafast",
         "-pix_fmt", "yuv420p", "-g", str(2 * FPS), str(path)],
        check=True,
    )  # fmt: skip
    return path


def _stats(df: ketch.DataFrame):
    return df.explain_analyze(file=io.StringIO())


def _explain(df: ketch.DataFrame) -> str:
    out = io.StringIO()
    df.explain(show_all=True, file=out)
    return out.getvalue()


def _dir(tmp_path: Path, videos, *names: str) -> Path:
    for name in names:
        (tmp_path / videos[name].name).write_bytes(videos[name].read_bytes())
    return tmp_path


def test_limit_decodes_about_the_limit(long_video):
    df = ketch.read_video_frames(str(long_video), 224, 224).limit(10)
    assert "Limit pushdown = 10" in _explain(df)
    stats = _stats(df)
    assert stats.scan["rows_read"] == 10
    # The decoders were asked for 10 frames, not the file's 1,500 (a few more would be codec delay).
    assert 10 <= stats.scan["frames_decoded"] <= 20
    rows = df.to_pydict()
    assert rows["frame_index"] == list(range(10))
    assert [d.shape for d in rows["data"]] == [(224, 224, 3)] * 10


def test_limit_over_many_files_stops_the_later_videos(videos, tmp_path):
    root = _dir(tmp_path, videos, "h264", "mjpeg", "vp9", "mkv")
    df = ketch.read_video_frames(str(root), 48, 64).limit(5)
    stats = _stats(df)
    assert stats.scan["rows_read"] <= 10 and stats.scan["frames_decoded"] <= 15  # of 125 frames
    assert len(df.to_pydict()["path"]) == 5


def test_a_long_video_streams_in_bounded_batches(long_video):
    """1,500 frames of 224x224 RGB (225 MB decoded) under a 32 MB budget: the scan emits many
    morsels and never holds more than a few of them."""
    with ketch.execution_config_ctx(memory_budget_bytes=32 << 20):
        df = ketch.read_video_frames(str(long_video), 224, 224).select(
            "frame_index", col("data").image.resize(8, 8).alias("thumb")
        )
        stats = _stats(df)
    assert stats.scan["frames_decoded"] == stats.scan["rows_read"] == LONG_SECONDS * FPS
    scan = next(op for op in stats.operators() if op["name"] == "ScanVideo")
    assert scan["morsels"] >= 10 and scan["rows_out"] == LONG_SECONDS * FPS
    assert scan["peak_memory_bytes"] <= 32 << 20
    assert df.to_pydict()["frame_index"] == list(range(LONG_SECONDS * FPS))


def test_results_match_the_video_frames_kernel(videos, tmp_path):
    root = _dir(tmp_path, videos, "h264", "mjpeg")
    kw = dict(start_time=0.5, end_time=1.5, sample_interval_seconds=0.2)
    scanned = ketch.read_video_frames(str(root), 48, 64, **kw).to_pydict()
    for name in ("h264", "mjpeg"):
        path = str(root / videos[name].name)
        kernel = (
            ketch.from_pydict({"v": [videos[name].read_bytes()]})
            .select(
                Expression._call(
                    "video_frames", col("v"), width=64, height=48, frame_index="counter", **kw
                ).alias("f")
            )
            .to_pydict()["f"][0]
        )
        mine = [i for i, p in enumerate(scanned["path"]) if p == path]
        assert [scanned["frame_time"][i] for i in mine] == [f["frame_time"] for f in kernel]
        assert [scanned["frame_index"][i] for i in mine] == [f["frame_index"] for f in kernel]
        for i, frame in zip(mine, kernel, strict=True):
            expected = frame["data"]  # images inside a list come out as (H, W, 3) arrays too
            assert expected.shape == (48, 64, 3)
            assert np.array_equal(scanned["data"][i], expected)


def test_one_task_per_video_and_explain(videos, tmp_path):
    root = _dir(tmp_path, videos, "h264", "mjpeg", "vp9")
    df = ketch.read_video_frames(str(root), 48, 64, is_key_frame=True)
    text = _explain(df)
    assert "ScanVideo" in text
    assert "Frames = key frames only (the others are not decoded)" in text
    assert "Image size = 48 x 64 RGB (resized by the decoder's scaler)" in text
    assert "Scan tasks = 3 (3 tasks from 3 files" in text and "one task per video" in text
    assert df.num_partitions() == 3
    stats = _stats(df)
    assert stats.scan["scan_tasks"] == 3 and stats.scan["files_read"] == 3
    assert sum(stats.scan[k] for k in ("bytes_read",)) == sum(p.stat().st_size for p in root.iterdir())


def test_metadata_only_projection_skips_the_rgb_conversion(long_video):
    df = ketch.read_video_frames(str(long_video), 224, 224).select("frame_index", "is_key_frame")
    assert "(data not read: no RGB conversion)" in _explain(df)
    rows = df.to_pydict()
    assert rows["frame_index"] == list(range(LONG_SECONDS * FPS))
    assert sum(rows["is_key_frame"]) == LONG_SECONDS // 2
    assert ketch.read_video_frames(str(long_video), 224, 224).count_rows() == LONG_SECONDS * FPS


def test_filter_on_frame_fields_is_pushed_into_the_scan(long_video):
    df = ketch.read_video_frames(str(long_video), 32, 32).where(col("frame_index") % 500 == 0)
    optimized = _explain(df).split("== Optimized Logical Plan ==")[1]
    assert "Filter pushdown = (modulo(col(frame_index), lit(500)) == lit(0))" in optimized
    assert df.to_pydict()["frame_index"] == [0, 500, 1000]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("jpeg_as_mp4", "not a video container"),
        ("empty", ""),
        ("audio", "no video stream"),
    ],
)
def test_a_bad_file_among_good_ones_names_the_file(videos, tmp_path, bad, reason):
    root = _dir(tmp_path, videos, "h264", bad, "mjpeg")
    bad_path = root / videos[bad].name
    with pytest.raises(KetchError, match=rf"read_video_frames: file '{bad_path}': .*{reason}"):
        ketch.read_video_frames(str(root), 48, 64).to_pydict()


def test_truncated_file_gives_the_frames_before_the_cut(videos, tmp_path):
    data = videos["mjpeg"].read_bytes()
    (tmp_path / "cut.avi").write_bytes(data[: len(data) // 2])
    rows = ketch.read_video_frames(str(tmp_path / "cut.avi"), 48, 64).to_pydict()
    assert 0 < len(rows["frame_index"]) < FPS
    assert rows["frame_index"] == list(range(len(rows["frame_index"])))


def test_bad_options():
    with pytest.raises(ValueError, match="image_height and image_width"):
        ketch.read_video_frames("x.mp4", 0, 64)
    with pytest.raises(ValueError, match="end_time"):
        ketch.read_video_frames("x.mp4", 48, 64, start_time=2.0, end_time=1.0)


def test_s3_and_http_videos(videos, moto_s3, tmp_path):
    """Objects are read through Ketch's object readers (S3 with io_config, HTTP by libcurl), once
    each, and give the frames of the local files."""
    import functools
    import http.server
    import threading

    config, client = moto_s3
    client.create_bucket(Bucket="videos")
    for name in ("h264", "mjpeg"):
        client.put_object(Bucket="videos", Key=f"clips/{videos[name].name}", Body=videos[name].read_bytes())
    local = _dir(tmp_path, videos, "h264", "mjpeg")
    expected = ketch.read_video_frames(str(local), 24, 32).to_arrow()
    df = ketch.read_video_frames("s3://videos/clips/", 24, 32, io_config=config)
    assert "Scan tasks = 2 (" in _explain(df)
    remote = df.to_arrow()
    assert remote.drop_columns("path").equals(expected.drop_columns("path"))
    assert sorted(set(remote.column("path").to_pylist())) == [
        f"s3://videos/clips/{videos[n].name}" for n in ("h264", "mjpeg")
    ]
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(local))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{videos['h264'].name}"
        over_http = ketch.read_video_frames(url, 24, 32).to_arrow()
    finally:
        server.shutdown()
    h264 = expected.filter(pa.compute.equal(expected.column("path"), str(local / videos["h264"].name)))
    assert over_http.drop_columns("path").equals(h264.drop_columns("path"))


def test_damaged_packets_are_dropped_and_counted_in_explain_analyze(videos, tmp_path):
    blob = media.corrupt_mjpeg_avi(videos["mjpeg"].read_bytes(), [10, 11, 12])
    path = tmp_path / "damaged.avi"
    path.write_bytes(blob)
    df = ketch.read_video_frames(str(path), 32, 32)
    out = io.StringIO()
    stats = df.explain_analyze(file=out)
    assert stats.scan["packets_dropped"] == 3
    assert "3 damaged packets dropped" in out.getvalue()
    indexes = df.to_pydict()["frame_index"]
    assert indexes[:10] == list(range(10)) and len(indexes) == stats.scan["frames_decoded"]


def _whole_and_parts(path: Path, **kwargs) -> tuple[pa.Table, pa.Table, str]:
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=384 << 20):  # parts of >= 24 MiB: one task
        whole = ketch.read_video_frames(str(path), 24, 32, **kwargs).to_arrow()
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=16):
        df = ketch.read_video_frames(str(path), 24, 32, **kwargs)
        text = _explain(df)
        return whole, df.to_arrow(), text


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"is_key_frame": False}, {"sample_interval_seconds": 0.7}, {"end_time": 7.3}],
    ids=["all", "non-key", "sampled", "end-time"],
)
@pytest.mark.parametrize("name", ["h264", "h264_bframes", "vp9", "mkv", "mjpeg"])
def test_one_long_video_split_into_parts_gives_the_whole_files_frames(videos, long_video, name, kwargs):
    """Fewer videos than worker slots: the scan cuts one video's frames into parts of equal counts
    (one task each, decoded side by side); the parts in order equal one decoder over the file:
    frame indexes continue, sample targets continue, pixels the same."""
    path = long_video if name == "h264" else videos[name]
    whole, parts, text = _whole_and_parts(path, **kwargs)
    assert "split into parts of equal frame counts" in text
    assert whole.num_rows > 0 or (name == "mjpeg" and kwargs == {"is_key_frame": False})  # all keyframes
    assert parts.equals(whole), (whole["frame_index"].to_pylist()[:5], parts["frame_index"].to_pylist()[:5])


def test_a_video_is_not_split_under_a_limit_a_start_time_or_keyframes_only(long_video) -> None:
    """Splitting pays only when every frame is decoded from the start: a pushed limit wants a few
    frames, a start_time counts indexes from its seek, keyframes only decode little."""
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=16):
        for df in (
            ketch.read_video_frames(str(long_video), 24, 32).limit(5),
            ketch.read_video_frames(str(long_video), 24, 32, start_time=3.0),
            ketch.read_video_frames(str(long_video), 24, 32, is_key_frame=True),
        ):
            assert "split into parts" not in _explain(df)
        assert "split into parts" in _explain(ketch.read_video_frames(str(long_video), 24, 32))
