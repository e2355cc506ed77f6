"""Process-tree helpers for tests of worker processes (UDF workers, their zygote)."""

from __future__ import annotations

import os


def descendants(pid: int) -> list[int]:
    """Live (not zombie) descendants of ``pid``, from /proc: children, their children, ..."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found += children
        frontier += children
    return found
