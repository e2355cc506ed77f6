"""Daft's video functions (``daft.functions.video``), as native kernels over FFmpeg's libavformat,
libavcodec and libswscale (Debian's FFmpeg 5.1): no PyAV, no Python per frame.

Each takes a column of encoded video bytes (binary) or a File column (``ketch.from_files``,
``col("path").url.to_file()``; files are read on the I/O pool, ``io_config`` for ``s3://``), and
each is also a method of the ``.video`` namespace: ``video_frames(col("f"))`` is
``col("f").video.frames()``. Times are seconds (float); timestamps (pts, dts, duration) are in
the stream's time base. Containers and codecs: whatever Debian's FFmpeg reads (MP4/H.264,
WebM/VP8/VP9, MKV, AVI/MJPEG, MOV, ...).

Errors name the function, the row and the cause (``KetchError`` subclasses, ``ValueError`` for bad
input): an empty file, bytes no container reads ("not a media container"), a single image such as a
JPEG renamed ``.mp4`` ("not a video container"), "no video stream", a header claiming more pixels
than the image limit (refused before anything is decoded), or one row's decoded frames over the
query's memory budget. ``on_error="null"`` gives a null for such a row instead, other rows intact.
Damaged packets in the middle of a file are dropped and decoding goes on (the frames before and
after come out once the codec resyncs)."""

from __future__ import annotations

from typing import Any

from ketch.expressions.expression import Expression, _expr

__all__ = ["get_video_frame_by_idx", "video_frames", "video_keyframes", "video_metadata"]


def _call(function: str, args: list[Any], io_config: Any, on_error: str, **options: Any) -> Expression:
    from ketch.io.config import io_options

    if on_error not in ("raise", "null"):
        raise ValueError(f"on_error must be 'raise' or 'null', got {on_error!r}")
    opts = io_options(io_config)
    opts.update({k: v for k, v in options.items() if v is not None})
    opts["on_error"] = on_error
    return Expression._call(function, *[_expr(a) for a in args], **opts)


def _seconds(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, got {value!r}")
    return float(value)


def video_metadata(file: Any, *, io_config: Any = None, on_error: str = "raise") -> Expression:
    """Metadata of each video from its container headers (no frame is decoded), Daft's
    ``VideoFile.metadata()`` fields: struct ``{width: int64, height: int64, fps: float64,
    duration: float64 (seconds), frame_count: int64, time_base: float64 (seconds per tick)}``.

    fps is the stream's average rate, else FFmpeg's guessed rate; duration the container's, else the
    stream's; frame_count the header's count, else ``round(duration * fps)``. A field the file does
    not state is null; a file with no video stream gives all fields null (as Daft)."""
    return _call("video_metadata", [file], io_config, on_error)


def video_frames(
    file: Any,
    start_time: float = 0,
    end_time: float | None = None,
    width: int | None = None,
    height: int | None = None,
    is_key_frame: bool | None = None,
    sample_interval_seconds: float | None = None,
    *,
    io_config: Any = None,
    on_error: str = "raise",
) -> Expression:
    """The decoded frames of each video as a list of structs (explode it for one row per frame):
    ``{frame_index: int64, frame_time: float64 (seconds), frame_time_base: string ("1/12800"),
    frame_pts: int64, frame_dts: int64, frame_duration: int64 (time-base units),
    is_key_frame: bool, data: Image[RGB]}`` — Daft's ``VideoFile.frames()`` fields and rules.

    - ``start_time`` / ``end_time`` (seconds, end inclusive): the decoder seeks to the keyframe at or
      before ``start_time`` (nothing before it is decoded) and stops after ``end_time``.
    - ``width`` and ``height`` (pixels, both or neither): frames are resized by FFmpeg's scaler
      (bilinear) while converted to RGB, in one pass.
    - ``is_key_frame``: True keeps keyframes only (the decoder skips the others), False only the
      others, None all.
    - ``sample_interval_seconds`` (> 0): the first frame at or after each of ``start_time``,
      ``start_time + interval``, ...
    - ``frame_index``: ``round((pts - stream start) * time_base * fps)``.

    One row's frames live in memory together: a row whose frames exceed the query's memory budget
    fails (or is null with ``on_error="null"``); ``ketch.read_video_frames`` is the streaming source."""
    if (width is None) != (height is None):
        raise ValueError("Both width and height must be specified together for resizing.")
    interval = _seconds("sample_interval_seconds", sample_interval_seconds)
    if interval is not None and interval <= 0:
        raise ValueError("sample_interval_seconds must be positive if provided")
    return _call(
        "video_frames",
        [file],
        io_config,
        on_error,
        start_time=_seconds("start_time", start_time),
        end_time=_seconds("end_time", end_time),
        width=width,
        height=height,
        is_key_frame=is_key_frame,
        sample_interval_seconds=interval,
    )


def video_keyframes(
    file: Any,
    start_time: float = 0,
    end_time: float | None = None,
    *,
    io_config: Any = None,
    on_error: str = "raise",
) -> Expression:
    """The keyframes of each video between ``start_time`` and ``end_time`` (seconds, end inclusive)
    as a list of Image[RGB] at the video's own size (Daft's ``video_keyframes``). Only keyframes are
    decoded (the decoder discards the other frames unread)."""
    return _call(
        "video_keyframes",
        [file],
        io_config,
        on_error,
        start_time=_seconds("start_time", start_time),
        end_time=_seconds("end_time", end_time),
    )


def get_video_frame_by_idx(
    file: Any, idx: Any, *, io_config: Any = None, on_error: str = "raise"
) -> Expression:
    """The frame of zero-based presentation index ``idx`` (an int or an integer column) of each video
    as an Image[RGB]: the decoder seeks to the keyframe before it and decodes forward to it. The
    index of a frame is ``round((pts - stream start) * time_base * fps)``; for a variable frame rate
    the first frame at or after ``idx``. Errors: ``IndexError``-like KetchError when ``idx`` is past
    the end, ValueError for a negative ``idx``; bad files as the other video functions."""
    if isinstance(idx, int) and not isinstance(idx, bool) and idx < 0:
        raise ValueError(f"idx must be >= 0, got {idx}")
    return _call("get_video_frame_by_idx", [file, idx], io_config, on_error)
