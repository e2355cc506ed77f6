"""Expanding local paths, directories and globs into files, safely: symbolic links to directories
are not followed (a link loop would otherwise repeat files or never end), every file appears once,
and an existing file whose name contains glob characters is taken literally."""

from __future__ import annotations

import glob
import os
import re

from ketch.errors import KetchFileNotFoundError, KetchNotImplementedError

GLOB_CHARS = set("*?[")


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a glob: ``**/`` matches any number of directories, ``*`` and ``?`` stay within
    one path segment, ``[...]`` is a character class."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _walk_files(root: str) -> list[str]:
    """Every regular file under ``root`` (hidden ones too), without following directory links."""
    files = []
    for dirpath, _, filenames in os.walk(root, followlinks=False):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.isfile(path):
                files.append(path)
    return files


def expand_paths(
    path: str | os.PathLike[str] | list, suffix: str | tuple[str, ...], caller: str = "read_parquet"
) -> list[str]:
    """Files named by a path, a directory (its ``*suffix`` files, recursively), a glob, or a list
    of those, sorted within each entry and without duplicates. ``KetchFileNotFoundError`` names an
    entry that matched nothing; ``ValueError`` for an empty list."""
    entries = path if isinstance(path, list) else [path]
    if not entries:
        raise ValueError(f"{caller} needs at least one path, got an empty list")
    files: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        entry = os.fspath(entry)
        if "://" in entry:
            scheme, rest = entry.split("://", 1)
            if scheme != "file":
                raise KetchNotImplementedError(f"'{scheme}://' paths are not supported here: {entry}")
            entry = rest[len("localhost") :] if rest.startswith("localhost/") else rest
        if os.path.isfile(entry):
            matched = [entry]
        elif os.path.isdir(entry):
            matched = sorted(p for p in _walk_files(entry) if p.endswith(suffix))
        elif any(c in GLOB_CHARS for c in entry):
            if "**" in entry:
                cut = min(entry.index(c) for c in GLOB_CHARS if c in entry)
                root = os.path.dirname(entry[:cut]) or "."
                regex = _glob_regex(os.path.normpath(entry))
                matched = sorted(p for p in _walk_files(root) if regex.match(os.path.normpath(p)))
            else:
                matched = sorted(p for p in glob.glob(entry) if os.path.isfile(p))
        elif os.path.exists(entry):
            raise KetchFileNotFoundError(f"'{entry}' is not a regular file or directory")
        else:
            raise KetchFileNotFoundError(f"no such file or directory: '{entry}'")
        if not matched:
            raise KetchFileNotFoundError(f"'{entry}' matched no files")
        for p in matched:
            absolute = os.path.abspath(p)
            if absolute not in seen:
                seen.add(absolute)
                files.append(absolute)
    return files
