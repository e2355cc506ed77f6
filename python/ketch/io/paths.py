"""Expanding local paths, directories and globs into files, safely: symbolic links to directories
are not followed (a link loop would otherwise repeat files or never end), every file appears once,
and an existing file whose name contains glob characters is taken literally."""

from __future__ import annotations

import os
import re

from ketch.errors import KetchFileNotFoundError, KetchIOError, KetchNotImplementedError

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


def _unreadable(caller: str, directory: str, exc: OSError) -> KetchIOError:
    """The error for a directory that cannot be listed: its files would silently be missing."""
    reason = exc.strerror or str(exc)
    return KetchIOError(f"{caller}: cannot list directory '{directory}': {reason}")


def _scandir(directory: str, caller: str) -> list[os.DirEntry[str]]:
    """The entries of a directory; [] when it does not exist (or is a file). ``KetchIOError``
    names a directory that exists but cannot be listed (e.g. "Permission denied")."""
    try:
        with os.scandir(directory) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise _unreadable(caller, directory, exc) from None


def _walk_files(root: str, caller: str) -> list[str]:
    """Every regular file under ``root`` (hidden ones too), without following directory links.
    ``KetchIOError`` names a directory below ``root`` that cannot be listed."""
    files = []
    stack = [root]
    while stack:
        directory = stack.pop()
        for entry in _scandir(directory, caller):
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file():
                    files.append(entry.path)
            except OSError as exc:
                raise _unreadable(caller, directory, exc) from None
    return files


def _exists(path: str, caller: str) -> bool:
    """Whether ``path`` exists (links not followed); ``KetchIOError`` when its directory cannot be
    searched, so a denied path is not taken for a missing one."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise KetchIOError(f"{caller}: cannot access '{path}': {exc.strerror or exc}") from None
    return True


def _glob(pattern: str, caller: str) -> list[str]:
    """Files matching a glob without ``**``, one path segment at a time (as ``glob.glob``: ``*``
    and ``?`` do not match a leading dot), but every directory the pattern must look into is
    listed or refused: ``glob.glob`` skips a directory it cannot read without a word."""
    parts = pattern.split("/")
    first = next(i for i, part in enumerate(parts) if any(c in GLOB_CHARS for c in part))
    base = "/".join(parts[:first])
    current = [base or ("/" if pattern.startswith("/") else ".")]
    for part in parts[first:]:
        if not part:
            continue
        found: list[str] = []
        if any(c in GLOB_CHARS for c in part):
            regex = _glob_regex(part)
            for directory in current:
                for entry in _scandir(directory, caller):
                    if regex.match(entry.name) and (part.startswith(".") or not entry.name.startswith(".")):
                        found.append(os.path.join(directory, entry.name))
        else:
            found = [os.path.join(d, part) for d in current if _exists(os.path.join(d, part), caller)]
        current = found
    return [p for p in current if os.path.isfile(p)]


def expand_paths(
    path: str | os.PathLike[str] | list, suffix: str | tuple[str, ...], caller: str = "read_parquet"
) -> list[str]:
    """Files named by a path, a directory (its ``*suffix`` files, recursively), a glob, or a list
    of those, sorted within each entry and without duplicates. Errors name the entry as the
    user wrote it: ``KetchFileNotFoundError`` for an entry that matched nothing; ``KetchIOError``
    for a directory that had to be listed but could not be, or a path whose directory cannot be
    searched (with the OS's reason, e.g. "Permission denied"); ``ValueError`` for an empty list."""
    entries = path if isinstance(path, list) else [path]
    if not entries:
        raise ValueError(f"{caller} needs at least one path, got an empty list")
    files: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        entry = given = os.fspath(entry)
        if "://" in entry:
            scheme, rest = entry.split("://", 1)
            if scheme != "file":
                raise KetchNotImplementedError(f"'{scheme}://' paths are not supported here: {entry}")
            entry = rest[len("localhost") :] if rest.startswith("localhost/") else rest
        if os.path.isfile(entry):
            matched = [entry]
        elif os.path.isdir(entry):
            matched = sorted(p for p in _walk_files(entry, caller) if p.endswith(suffix))
        elif any(c in GLOB_CHARS for c in entry):
            if "**" in entry:
                cut = min(entry.index(c) for c in GLOB_CHARS if c in entry)
                root = os.path.dirname(entry[:cut]) or "."
                regex = _glob_regex(os.path.normpath(entry))
                matched = sorted(p for p in _walk_files(root, caller) if regex.match(os.path.normpath(p)))
            else:
                matched = sorted(_glob(entry, caller))
        elif _exists(entry, caller):
            raise KetchFileNotFoundError(f"{caller}: '{given}' is not a regular file or directory")
        else:
            raise KetchFileNotFoundError(f"{caller}: no such file or directory: '{given}'")
        if not matched:
            raise KetchFileNotFoundError(f"{caller}: '{given}' matched no files")
        for p in matched:
            absolute = os.path.abspath(p)
            if absolute not in seen:
                seen.add(absolute)
                files.append(absolute)
    return files
