"""``Expression.video``: the video kernels as methods (``col("f").video.frames(...)``); each is the
free function of ``ketch.functions.video`` (one implementation behind both spellings)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


class VideoNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def metadata(self, *, io_config: Any = None, on_error: str = "raise") -> Expression:
        """See :func:`ketch.functions.video_metadata`."""
        from ketch.functions.video import video_metadata

        return video_metadata(self._expr, io_config=io_config, on_error=on_error)

    def frames(
        self,
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
        """See :func:`ketch.functions.video_frames`."""
        from ketch.functions.video import video_frames

        return video_frames(
            self._expr,
            start_time,
            end_time,
            width,
            height,
            is_key_frame,
            sample_interval_seconds,
            io_config=io_config,
            on_error=on_error,
        )

    def keyframes(
        self,
        start_time: float = 0,
        end_time: float | None = None,
        *,
        io_config: Any = None,
        on_error: str = "raise",
    ) -> Expression:
        """See :func:`ketch.functions.video_keyframes`."""
        from ketch.functions.video import video_keyframes

        return video_keyframes(self._expr, start_time, end_time, io_config=io_config, on_error=on_error)

    def frame_by_idx(self, idx: Any, *, io_config: Any = None, on_error: str = "raise") -> Expression:
        """See :func:`ketch.functions.get_video_frame_by_idx`."""
        from ketch.functions.video import get_video_frame_by_idx

        return get_video_frame_by_idx(self._expr, idx, io_config=io_config, on_error=on_error)
