"""Daft's audio functions (``audio_file``, ``audio_metadata``, ``resample``) and Ketch's
``decode_audio``, over native FFmpeg kernels (libavformat / libavcodec demux and decode,
libswresample with libsoxr resamples): the planner sees them as ordinary function calls that run
on the compute pool, File objects are read on the I/O pool first. Each is also an ``.audio``
namespace method (``col("f").audio.metadata()``), one implementation behind both."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ketch.expressions.expression import Expression, _expr

if TYPE_CHECKING:
    from ketch.io.config import IOConfig

__all__ = ["audio_file", "audio_metadata", "decode_audio", "resample", "video_file"]


def _media_file(filepath: Any, media: str, io_config: IOConfig | None) -> Expression:
    if io_config is not None:
        raise ValueError(
            f"{media}_file: a File column carries no io_config in Ketch; pass io_config to the function "
            f"that reads the file (e.g. audio_metadata(f, io_config=...))"
        )
    return Expression._call("file_from_path", _expr(filepath), media=media)


def audio_file(filepath: Expression | str, io_config: IOConfig | None = None) -> Expression:
    """File[Audio] references (Daft's ``daft.functions.audio_file``) to the paths / URLs of a
    string column (local, ``file://``, ``http(s)://``, ``s3://``), or a File column marked as
    audio; nothing is read. Values reach Python as :class:`ketch.AudioFile`. A binary column is a
    TypeError at plan time: the audio functions take encoded bytes as they are."""
    return _media_file(filepath, "audio", io_config)


def video_file(filepath: Expression | str, io_config: IOConfig | None = None) -> Expression:
    """File[Video] references (Daft's ``daft.functions.video_file``), as :func:`audio_file`;
    values reach Python as :class:`ketch.VideoFile`."""
    return _media_file(filepath, "video", io_config)


def _options(on_error: str, io_config: IOConfig | None) -> dict[str, Any]:
    from ketch.io.config import io_options

    if on_error not in ("raise", "null"):
        raise ValueError(f"on_error must be 'raise' or 'null', got {on_error!r}")
    return {"on_error": on_error, **io_options(io_config)}


def audio_metadata(
    file_expr: Expression, *, on_error: str = "raise", io_config: IOConfig | None = None
) -> Expression:
    """Struct ``{sample_rate: int64 (Hz), channels: int64, frames: float64 (sample frames per
    channel), format: string, subtype: string}`` of each audio object (a File / File[Audio] column
    or encoded bytes), with libsndfile's names as Daft's soundfile-based ``audio_metadata`` gives:
    format "WAV" / "FLAC" / "OGG" / "MP3" / "AIFF", subtype "PCM_16" / "PCM_24" / "FLOAT" /
    "VORBIS" / "OPUS" / "MPEG_LAYER_III"; others get FFmpeg's names upper-cased. ``frames`` comes
    from the header for PCM containers and from a decode pass for MP3 and Ogg (whose headers only
    estimate it).

    Errors: a row that is not audio (empty, truncated header, an image, no audio stream) raises
    ``ValueError`` naming the source row and the cause; ``on_error="null"`` gives null instead."""
    return Expression._call("audio_metadata", _expr(file_expr), **_options(on_error, io_config))


def decode_audio(
    file_expr: Expression,
    *,
    sample_rate: int | None = None,
    mono: bool = False,
    dtype: str = "float32",
    on_error: str = "raise",
    io_config: IOConfig | None = None,
) -> Expression:
    """Decoded samples of each audio object (File column or encoded bytes; WAV, FLAC, MP3,
    Ogg/Vorbis, Opus, AAC, ... whatever FFmpeg reads) as a Tensor of ``dtype`` ("float32" or
    "float64"): shape (frames,) for one channel or ``mono=True`` (the mean of the channels),
    (frames, channels) otherwise; values in [-1, 1] (integer PCM / 2^(bits-1), as soundfile).
    ``sample_rate`` (Hz) resamples with libsoxr at 20-bit precision (librosa's default
    ``soxr_hq``); None keeps each file's rate.

    Errors: ``ValueError`` naming the source row for bytes that are not audio, a truncated PCM file
    (fewer frames than its header states), a damaged packet, or a row whose samples would exceed the
    query's memory budget (refused from the header); ``on_error="null"`` gives null instead."""
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    if sample_rate is not None and (
        not isinstance(sample_rate, int) or isinstance(sample_rate, bool) or sample_rate <= 0
    ):
        raise ValueError(f"sample_rate must be a positive int (Hz) or None, got {sample_rate!r}")
    return Expression._call(
        "audio_decode",
        _expr(file_expr),
        sample_rate=sample_rate,
        mono=bool(mono),
        dtype=dtype,
        **_options(on_error, io_config),
    )


def resample(
    file_expr: Expression,
    sample_rate: int,
    *,
    mono: bool = False,
    dtype: str = "float64",
    on_error: str = "raise",
    io_config: IOConfig | None = None,
) -> Expression:
    """Daft's ``resample(file, sample_rate)``: each audio object decoded and resampled to
    ``sample_rate`` Hz, a Tensor[float64] of shape (frames,) or (frames, channels) (soundfile's
    layout, as Daft's). ``mono`` and ``dtype`` ("float32" halves the memory) are Ketch's
    additions; see :func:`decode_audio` for the resampler and the errors."""
    if sample_rate is None:
        raise ValueError("resample needs a sample_rate in Hz")
    return decode_audio(
        file_expr, sample_rate=sample_rate, mono=mono, dtype=dtype, on_error=on_error, io_config=io_config
    )
