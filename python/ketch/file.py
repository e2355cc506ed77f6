"""``ketch.File``: one value of a File column as a Python object (Daft's ``daft.File``), the type a
UDF receives for a File argument and may return for a File column."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.io.config import IOConfig


def _local_path(url: str) -> str | None:
    """The filesystem path of a local reference (plain path or file:// URL), else None."""
    if url.startswith("file://"):
        return url[len("file://") :]
    if "://" in url:
        return None
    return url


class File:
    """A lazy reference to an object: a local path, ``file://``, ``http(s)://`` or ``s3://`` URL,
    and its size in bytes when known. Nothing is read until ``open``, ``size`` or ``mime_type``
    asks for it.

    Values of a File column (``ketch.from_files``, ``col(...).url.to_file()``) reach UDFs as
    ``File`` objects; a UDF whose return annotation (or ``return_dtype``) is ``ketch.File`` /
    ``DataType.file()`` may return ``File`` objects or path strings.

    Example:
        >>> @ketch.func
        ... def first_line(f: ketch.File) -> str:
        ...     with f.open() as fh:
        ...         return fh.readline().decode()
    """

    __slots__ = ("_io_config", "_path", "_size")

    def __init__(self, url: str, io_config: IOConfig | None = None, size: int | None = None) -> None:
        if not isinstance(url, str) or not url:
            raise ValueError(f"File needs a non-empty path or URL, got {url!r}")
        if size is not None and (not isinstance(size, int) or size < 0):
            raise ValueError(f"File size must be a non-negative int in bytes or None, got {size!r}")
        self._path = url
        self._io_config = io_config
        self._size = size

    @property
    def path(self) -> str:
        """The full path or URL, as the column holds it."""
        return self._path

    @property
    def name(self) -> str:
        """The file name: the last component of the path or URL."""
        return self._path.rstrip("/").rsplit("/", 1)[-1]

    def _column(self, function: str) -> Any:
        """One value of a File kernel (file_read, file_size, file_guess_mime_type) for this file:
        the engine's readers, so S3 and HTTP work with the file's io_config."""
        import pyarrow as pa

        from ketch.expressions import col
        from ketch.io.files import file_array
        from ketch.io.memory import from_arrow

        column = col("f").file
        kernels = {
            "file_read": column.read,
            "file_size": column.size,
            "file_guess_mime_type": column.guess_mime_type,
        }
        expr = kernels[function](self._io_config)
        df = from_arrow(pa.table({"f": file_array([self._path], [self._size])}))
        return df.select(expr.alias("v")).to_pydict()["v"][0]

    def open(self) -> IO[bytes]:
        """A read-only binary file object over the contents (a context manager; seekable). Local
        files are opened directly; remote ones are read whole first.

        Raises: ``FileNotFoundError`` / ``OSError`` (local), ``KetchIOError`` (remote) naming the path."""
        local = _local_path(self._path)
        if local is not None:
            return open(local, "rb")  # noqa: SIM115 (the caller closes it)
        return io.BytesIO(self._column("file_read"))

    def read(self) -> bytes:
        """The whole contents as bytes."""
        with self.open() as f:
            return f.read()

    def size(self) -> int:
        """Size in bytes: the one recorded with the reference, else a stat (local) or HEAD."""
        if self._size is not None:
            return self._size
        local = _local_path(self._path)
        if local is not None:
            return os.stat(local).st_size
        return int(self._column("file_size"))

    def exists(self) -> bool:
        """Whether the object exists (a stat, or a HEAD for remote URLs)."""
        local = _local_path(self._path)
        if local is not None:
            return os.path.isfile(local)
        try:
            self._column("file_size")
        except (OSError, ValueError):
            return False
        return True

    def mime_type(self) -> str:
        """MIME type from the first bytes (as ``.file.guess_mime_type()``), e.g. ``image/png``;
        ``application/octet-stream`` when unknown."""
        return self._column("file_guess_mime_type") or "application/octet-stream"

    def to_tempfile(self) -> tempfile._TemporaryFileWrapper[bytes]:
        """A named temporary file holding a copy of the contents, positioned at 0 (deleted when
        closed)."""
        out = tempfile.NamedTemporaryFile(prefix="ketch_")  # noqa: SIM115 (returned to the caller)
        with self.open() as f:
            shutil.copyfileobj(f, out)
        out.seek(0)
        return out

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, File) and other._path == self._path

    def __hash__(self) -> int:
        return hash(self._path)

    def __str__(self) -> str:
        return self._path

    def __repr__(self) -> str:
        return f"File({self._path!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (File, (self._path, self._io_config, self._size))


def files_from_arrow(array: Any) -> list[File | None]:
    """The File objects of a ketch.file Arrow array (None for null rows): ``AudioFile`` /
    ``VideoFile`` for File[Audio] / File[Video] columns."""
    from ketch import _core

    kind = {"audio": AudioFile, "video": VideoFile}.get(_core.file_media(array.type), File)
    storage = array.storage
    paths = storage.field("path").to_pylist()
    sizes = storage.field("size").to_pylist()
    valid = storage.is_valid().to_pylist()
    return [
        kind(p, size=s) if ok and p is not None else None
        for p, s, ok in zip(paths, sizes, valid, strict=True)
    ]


class _MediaFile(File):
    """A File whose media kernels run on this one object (the engine's native kernels, so the
    values equal the column functions')."""

    __slots__ = ()

    def _one(self, expr_of: Any) -> Any:
        import pyarrow as pa

        from ketch.expressions import col
        from ketch.io.files import file_array
        from ketch.io.memory import from_arrow

        df = from_arrow(pa.table({"f": file_array([self._path], [self._size])}))
        return df.select(expr_of(col("f")).alias("v")).to_pydict()["v"][0]

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._path, self._io_config, self._size))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._path!r})"


class AudioFile(_MediaFile):
    """Daft's ``daft.AudioFile``: a File known to hold audio (values of a File[Audio] column, made
    by ``ketch.functions.audio_file``). Decoding is FFmpeg's (libavformat / libavcodec), in the
    engine, not soundfile.

    Example:
        >>> f = ketch.AudioFile("speech.flac")
        >>> f.metadata()["sample_rate"], f.resample(16000).shape
    """

    __slots__ = ()

    def metadata(self) -> dict[str, Any]:
        """``{"sample_rate": int, "channels": int, "frames": float, "format": str, "subtype": str}``
        with libsndfile's format and subtype names ("WAV", "PCM_16", ...), as Daft's."""
        from ketch.functions.audio import audio_metadata

        return self._one(lambda c: audio_metadata(c, io_config=self._io_config))

    def to_numpy(self) -> Any:
        """All samples at the file's own rate: float64 numpy array of shape (frames,) for one
        channel, (frames, channels) otherwise (soundfile's ``sf.read`` layout)."""
        from ketch.functions.audio import decode_audio

        return self._one(lambda c: decode_audio(c, dtype="float64", io_config=self._io_config))

    def resample(self, sample_rate: int) -> Any:
        """The samples resampled to ``sample_rate`` Hz (libsoxr, HQ): float64 numpy array, shapes as
        :meth:`to_numpy`."""
        from ketch.functions.audio import resample

        return self._one(lambda c: resample(c, sample_rate, io_config=self._io_config))


class VideoFile(_MediaFile):
    """Daft's ``daft.VideoFile``: a File known to hold video (values of a File[Video] column, made
    by ``ketch.functions.video_file``)."""

    __slots__ = ()

    def metadata(self) -> dict[str, Any]:
        """``{"width", "height", "fps", "frame_count", "time_base"}`` of the first video stream."""
        from ketch.functions.video import video_metadata

        return self._one(lambda c: video_metadata(c, io_config=self._io_config))

    def keyframes(self, start_time: float = 0, end_time: float | None = None) -> list[Any]:
        """The keyframes between ``start_time`` and ``end_time`` (seconds) as RGB numpy arrays
        (H, W, 3) uint8 (Daft yields PIL images)."""
        from ketch.functions.video import video_keyframes

        return self._one(lambda c: video_keyframes(c, start_time, end_time, io_config=self._io_config)) or []

    def frames(
        self,
        start_time: float = 0,
        end_time: float | None = None,
        width: int | None = None,
        height: int | None = None,
        is_key_frame: bool | None = None,
        sample_interval_seconds: float | None = None,
    ) -> list[dict[str, Any]]:
        """The decoded frames with Daft's per-frame fields (``frame_index``, ``frame_time``,
        ``frame_time_base``, ``frame_pts``, ``frame_dts``, ``frame_duration``, ``is_key_frame``,
        ``data``: an RGB numpy array), see :func:`ketch.functions.video_frames`. A list, not Daft's
        lazy iterator: use ``ketch.read_video_frames`` to stream a long video."""
        from ketch.functions.video import video_frames

        return (
            self._one(
                lambda c: video_frames(
                    c,
                    start_time,
                    end_time,
                    width,
                    height,
                    is_key_frame,
                    sample_interval_seconds,
                    io_config=self._io_config,
                )
            )
            or []
        )


def files_to_arrow(values: list[Any]) -> Any:
    """A ketch.file Arrow array from File objects, path strings (or os.PathLike) and None."""
    from ketch.io.files import file_array

    paths: list[str | None] = []
    sizes: list[int | None] = []
    for v in values:
        if v is None:
            paths.append(None)
            sizes.append(None)
        elif isinstance(v, File):
            paths.append(v.path)
            sizes.append(v._size)
        elif isinstance(v, str | os.PathLike):
            paths.append(os.fspath(v))
            sizes.append(None)
        else:
            raise TypeError(f"a File column takes ketch.File, str paths or None, got {type(v).__name__}")
    return file_array(paths, sizes)
