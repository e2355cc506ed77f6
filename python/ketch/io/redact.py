"""Masking credentials in text shown to people: error messages, log records, reprs, progress bars.

The only redaction routine of the Python code; its C++ twin is ``ketch::io::Redact``
(cpp/ketch/io/redact.h), which follows the same rules."""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterable

MASK = "***"

# "scheme://" and what follows up to whitespace, a quote or a bracket that ends a URL in prose.
_URL = re.compile(r"(?<![A-Za-z0-9+.\-])([A-Za-z0-9+.\-]+)://([^\s'\"`<>\\]*)")
_EXACT = frozenset({"sig", "key", "auth", "pass", "pwd", "code", "sas"})
_CONTAINS = (
    "token",
    "secret",
    "password",
    "passwd",
    "signature",
    "credential",
    "apikey",
    "accesskey",
    "keyid",
    "privatekey",
    "authorization",
)


def is_secret_name(name: str) -> bool:
    """True for names of options, fields and query parameters that carry credentials
    (case-insensitive, ``-`` and ``_`` ignored): ``token``, ``X-Amz-Signature``, ``s3_access_key``,
    ``key_id``, ``sig``, ``password``, ..."""
    key = name.replace("-", "").replace("_", "").replace(" ", "").lower()
    return key in _EXACT or any(part in key for part in _CONTAINS)


def _redact_url(match: re.Match[str]) -> str:
    scheme, rest = match.group(1), match.group(2)
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        authority = MASK + authority[authority.rindex("@") :]
    path, query, fragment = tail, "", ""
    if "#" in path:
        path, fragment = path[: path.index("#")], path[path.index("#") :]
    if "?" in path:
        path, query = path[: path.index("?")], path[path.index("?") :]
    if query:
        pieces = re.split(r"([&;])", query[1:])
        for i in range(0, len(pieces), 2):
            name, eq, _ = pieces[i].partition("=")
            if eq and is_secret_name(name):
                pieces[i] = f"{name}={MASK}"
        query = "?" + "".join(pieces)
    return f"{scheme}://{authority}{path}{query}{fragment}"


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every credential replaced by ``***``: the user-info of each URL in it
    (``http://user:pw@host/`` → ``http://***@host/``), the values of credential-like query
    parameters (``token=``, ``X-Amz-Signature=``, ``X-Amz-Credential=``, ``sig=``, ...; see
    :func:`is_secret_name`) and each string of ``secrets`` (e.g. S3 keys) wherever it appears
    (those shorter than 4 characters are ignored)."""
    out = _URL.sub(_redact_url, text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            out = out.replace(secret, MASK)
    return out


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message and traceback text (``exc_text``, which
    standard formatters print instead of re-formatting ``exc_info``). Attach it to each Ketch
    logger: ``logging.getLogger("ketch.x").addFilter(RedactingFilter())``."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
            record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
