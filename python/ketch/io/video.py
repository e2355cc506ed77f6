"""``ketch.read_video_frames``: Daft's video-frames source (``daft.read_video_frames``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame
    from ketch.io.config import IOConfig

# Daft's columns, in Daft's order (after "path", which leads).
_FRAME_FIELDS = (
    "frame_index",
    "frame_time",
    "frame_time_base",
    "frame_pts",
    "frame_dts",
    "frame_duration",
    "is_key_frame",
)


def read_video_frames(
    path: str | list[str],
    image_height: int,
    image_width: int,
    is_key_frame: bool | None = None,
    io_config: IOConfig | None = None,
    sample_interval_seconds: float | None = None,
) -> DataFrame:
    """A DataFrame of the frames of one or more videos (a file, a directory, a glob such as
    ``clips/*.mp4``, ``s3://...`` with ``io_config``, or a list of those), one row per frame, with
    Daft's columns in Daft's order:

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
    2 * interval, ... seconds.

    Decoding is native (FFmpeg's libavformat / libavcodec / libswscale), one video per row of the
    file listing, on the compute pool; files are read on the I/O pool.

    Note: this version decodes each video's selected frames as one unit of work (then explodes
    them into rows), so the frames of one video are in memory together and a video whose frames
    exceed the query's memory budget fails with an error naming it; ``limit(n)`` still decodes
    whole videos. Errors (bad, truncated or frame-less files) name the file's row."""
    from ketch.expressions.expression import Expression, col
    from ketch.io.config import io_options
    from ketch.io.files import from_files

    if (
        not isinstance(image_height, int)
        or not isinstance(image_width, int)
        or image_height <= 0
        or image_width <= 0
    ):
        raise ValueError(
            f"image_height and image_width must be positive ints, got {image_height!r}, {image_width!r}"
        )
    if sample_interval_seconds is not None and sample_interval_seconds <= 0:
        raise ValueError("sample_interval_seconds must be positive if provided")
    options = io_options(io_config)
    options.update(width=image_width, height=image_height, frame_index="counter", fixed_shape=True)
    if is_key_frame is not None:
        options["is_key_frame"] = bool(is_key_frame)
    if sample_interval_seconds is not None:
        options["sample_interval_seconds"] = float(sample_interval_seconds)
    frames = Expression._call("video_frames", col("file"), **options)
    df = from_files(path, io_config).select(col("file").file.path().alias("path"), frames.alias("_frame"))
    frame = col("_frame")
    df = df.explode("_frame").select(
        "path", *[frame.struct.get(name).alias(name) for name in (*_FRAME_FIELDS, "data")]
    )
    # A video with no selected frame explodes to one null row: drop it (frame_index is never null).
    return df.where(col("frame_index").not_null())
