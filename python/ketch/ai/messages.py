"""Prompt messages as the OpenAI-compatible APIs take them: one user turn whose content is a list
of parts, one per message column (Daft's ``prompt`` sends the same shape).

- ``str``: a text part, or an image / video URL part when it is an ``http(s)`` URL ending in an
  image / video file extension;
- ``bytes``: an image part (``data:`` URI) when the first bytes are an image's, else a file part;
- a ``numpy`` array (a decoded image, HxW or HxWxC uint8): an image part holding it as PNG;
- a :class:`ketch.File`: its text wrapped in ``<file_text_plain>...</file_text_plain>`` tags when
  its MIME type is ``text/*``, else its bytes as for ``bytes``.

Raises TypeError for any other value and OSError when a file cannot be read."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".heic", ".ico")
VIDEO_EXTENSIONS = (".mp4", ".mpeg", ".mpg", ".mov", ".avi", ".webm", ".mkv", ".m4v", ".ogv", ".ts")
# Leading bytes of the image formats OpenAI-compatible servers take, and of PDF (a file part).
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
    (b"%PDF-", "application/pdf"),
)


def sniff_mime_type(data: bytes) -> str:
    """The MIME type the first bytes show (PNG, JPEG, GIF, WebP, BMP, PDF), else
    ``application/octet-stream``."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    return "application/octet-stream"


def _data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _path_of(url: str) -> str:
    return url.lower().split("?")[0].split("#")[0]


class ContentParts:
    """Builds the content parts of one row's user turn; ``chat``: Chat Completions part types
    (``text``, ``image_url``, ``file``), else the Responses API's (``input_text``...)."""

    def __init__(self, chat: bool) -> None:
        self.chat = chat

    def turn(self, messages: list[Any]) -> dict[str, Any]:
        return {"role": "user", "content": [self.part(m) for m in messages]}

    def part(self, message: Any) -> dict[str, Any]:
        from ketch.file import File

        if isinstance(message, str):
            return self._text_or_url(message)
        if isinstance(message, bytes | bytearray | memoryview):
            return self._bytes(bytes(message))
        if isinstance(message, np.ndarray):
            return self._image(_png(message))
        if isinstance(message, File):
            mime = message.mime_type()
            with message.open() as f:
                data = f.read()
            if mime.split(";")[0].strip().lower().startswith("text/") or _is_text(data, mime):
                tag = "file_" + (mime if mime.startswith("text/") else "text/plain").replace("/", "_")
                return self._text(f"<{tag}>{data.decode('utf-8', errors='replace')}</{tag}>")
            return self._bytes(data)
        raise TypeError(
            "prompt messages are strings, bytes, images (numpy arrays) or files; "
            f"got {type(message).__name__}"
        )

    def _text(self, text: str) -> dict[str, Any]:
        return {"type": "text" if self.chat else "input_text", "text": text}

    def _text_or_url(self, text: str) -> dict[str, Any]:
        if text.lower().startswith(("http://", "https://")):
            path = _path_of(text)
            if path.endswith(IMAGE_EXTENSIONS):
                return self._image(text)
            if path.endswith(VIDEO_EXTENSIONS):
                if self.chat:
                    return {"type": "video_url", "video_url": {"url": text}}
                return {"type": "input_video", "video_url": text}
        return self._text(text)

    def _bytes(self, data: bytes) -> dict[str, Any]:
        mime = sniff_mime_type(data)
        if mime.startswith("image/"):
            return self._image(_data_uri(data, mime))
        uri = _data_uri(data, mime)
        if self.chat:
            return {"type": "file", "file": {"filename": "file", "file_data": uri}}
        return {"type": "input_file", "filename": "file", "file_data": uri}

    def _image(self, url_or_png: str | bytes) -> dict[str, Any]:
        url = url_or_png if isinstance(url_or_png, str) else _data_uri(url_or_png, "image/png")
        if self.chat:
            return {"type": "image_url", "image_url": {"url": url}}
        return {"type": "input_image", "image_url": url}


def _is_text(data: bytes, mime: str) -> bool:
    """An unknown type whose bytes decode as UTF-8 is text (a .txt file has no magic bytes)."""
    if mime != "application/octet-stream":
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _png(image: np.ndarray) -> bytes:
    """A decoded image (HxW, HxWx1, HxWx3 or HxWx4, uint8) as PNG bytes (Pillow's encoder)."""
    from PIL import Image

    array = np.asarray(image)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.dtype != np.uint8 or array.ndim not in (2, 3):
        raise TypeError(f"prompt: an image message must be HxW[xC] uint8, got {array.dtype} {array.shape}")
    out = io.BytesIO()
    Image.fromarray(array).save(out, format="PNG")
    return out.getvalue()
