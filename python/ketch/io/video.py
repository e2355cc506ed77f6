"""``ketch.read_video_frames``: Daft's video-frames source (``daft.read_video_frames``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame
    from ketch.io.config import IOConfig


def read_video_frames(
    path: str | list[str],
    image_height: int,
    image_width: int,
    is_key_frame: bool | None = None,
    io_config: IOConfig | None = None,
    sample_interval_seconds: float | None = None,
    start_time: float | None = None,
    end_time: float | None = None,
) -> DataFrame:
    """A DataFrame of the frames of one or more videos (a file, a directory, a glob such as
    ``clips/*.mp4``, ``s3://...`` with ``io_config``, ``http(s)://`` URLs, or a list of those), one
    row per frame, with Daft's columns in Daft's order:

    * ``path`` (string): the video the frame came from.
    * ``frame_index`` (int64): the frame's position among the frames decoded from the video's start
      (as Daft counts: with ``is_key_frame=True`` only keyframes are decoded, so they count 0, 1, 2...).
    * ``frame_time`` (float64): seconds (pts * time base).
    * ``frame_time_base`` (string): the time base as a fraction, "1/12800".
    * ``frame_pts``, ``frame_dts``, ``frame_duration`` (int64): in time-base units.
    * ``is_key_frame`` (bool).
    * ``data`` (Image[RGB; image_height x image_width]): the frame resized by FFmpeg's scaler
      (bilinear) while converted to RGB.

    ``is_key_frame``: True keeps keyframes only (the others are not decoded), False only the
    others. ``sample_interval_seconds`` (> 0): the first frame at or after each of 0, interval,
    2 * interval, ... seconds. ``start_time`` / ``end_time`` (seconds, Ketch's own): the decoder
    seeks to the keyframe before ``start_time`` (nothing before it is decoded) and stops after
    ``end_time`` (inclusive).

    A streaming scan (``explain`` shows ``ScanVideo``): one scan task per video, so many videos
    spread over the workers (and over the Ray cluster); with fewer videos than two per worker, the
    largest are cut into parts of equal frame counts (at least ``scan_tasks_min_size_bytes / 16`` of
    the file each; not under a limit, a ``start_time`` or ``is_key_frame=True``), each part its own
    task, whose frames in order equal one decoder's over the file; each video is decoded natively
    (FFmpeg's libavformat / libavcodec / libswscale) frame by frame on the compute pool and comes
    out in batches of about one morsel's bytes, charged to the memory budget, so a long video never
    sits decoded in memory. ``limit(n)`` stops the decoders after about ``n`` frames; selecting no
    ``data`` column skips the RGB conversion. A file that is not a readable video (truncated, not a
    container, no video stream) fails the query with an error naming the file (as Daft's PyAV source
    raises), after the frames of the files before it."""
    from ketch import _core
    from ketch.dataframe import DataFrame
    from ketch.io.config import IOConfig
    from ketch.io.files import _list

    if (
        isinstance(image_height, bool)
        or isinstance(image_width, bool)
        or not isinstance(image_height, int)
        or not isinstance(image_width, int)
        or image_height <= 0
        or image_width <= 0
    ):
        raise ValueError(
            f"image_height and image_width must be positive ints, got {image_height!r}, {image_width!r}"
        )
    if sample_interval_seconds is not None and sample_interval_seconds <= 0:
        raise ValueError("sample_interval_seconds must be positive if provided")
    if start_time is not None and start_time < 0:
        raise ValueError(f"start_time must be >= 0 seconds, got {start_time!r}")
    if end_time is not None and end_time < (start_time or 0):
        raise ValueError(f"end_time ({end_time!r}) is before start_time ({start_time or 0!r})")
    if io_config is not None and not isinstance(io_config, IOConfig):
        raise TypeError(f"io_config must be a ketch.io.IOConfig, got {type(io_config).__name__}")
    entries = path if isinstance(path, list) else [path]
    files: list[str] = []
    sizes: list[int] = []
    for entry in entries:
        entry = os.fspath(entry)
        if entry.startswith(("http://", "https://")):
            files.append(entry)  # read by the scan (libcurl); not listed
            sizes.append(-1)
        else:
            listed, listed_sizes = _list(entry, io_config)
            files += listed
            sizes += listed_sizes
    options = {"image_height": str(image_height), "image_width": str(image_width)}
    if is_key_frame is not None:
        options["is_key_frame"] = "true" if is_key_frame else "false"
    for key, value in (
        ("sample_interval_seconds", sample_interval_seconds),
        ("start_time", start_time),
        ("end_time", end_time),
    ):
        if value is not None:
            options[key] = repr(float(value))
    s3 = (io_config or IOConfig()).s3.to_options()
    return DataFrame(_core.PyPlan.scan("video", files, sizes, options, None, None, None, s3))
