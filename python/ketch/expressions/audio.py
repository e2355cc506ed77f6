"""``Expression.audio``: the audio kernels of :mod:`ketch.functions.audio` as methods."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


class AudioNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def decode(
        self,
        sample_rate: int | None = None,
        mono: bool = False,
        dtype: str = "float32",
        on_error: str = "raise",
        io_config: Any = None,
    ) -> Expression:
        """See :func:`ketch.functions.decode_audio` (encoded bytes or File → Tensor of samples)."""
        from ketch.functions.audio import decode_audio

        return decode_audio(
            self._expr,
            sample_rate=sample_rate,
            mono=mono,
            dtype=dtype,
            on_error=on_error,
            io_config=io_config,
        )

    def metadata(self, on_error: str = "raise", io_config: Any = None) -> Expression:
        """See :func:`ketch.functions.audio_metadata`."""
        from ketch.functions.audio import audio_metadata

        return audio_metadata(self._expr, on_error=on_error, io_config=io_config)

    def resample(
        self,
        sample_rate: int,
        mono: bool = False,
        dtype: str = "float64",
        on_error: str = "raise",
        io_config: Any = None,
    ) -> Expression:
        """See :func:`ketch.functions.resample`."""
        from ketch.functions.audio import resample

        return resample(
            self._expr, sample_rate, mono=mono, dtype=dtype, on_error=on_error, io_config=io_config
        )
