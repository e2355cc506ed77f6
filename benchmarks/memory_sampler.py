"""Memory of a whole process tree, sampled from /proc (Linux): what the benchmark harness reports.

``ru_maxrss`` is the wrong measure for a benchmark case: on Linux it survives fork+exec (a case
started by a large harness reports at least the harness's RSS) and it ignores the case's child
processes (process-mode UDF workers, Daft's UDF workers, Ray's raylet and workers). Instead a
:class:`TreeSampler` thread, in the harness, every ``interval_s`` (20 ms) sums over the case process
and all its descendants:

- ``pss``: proportional set size (``Pss`` of ``/proc/PID/smaps_rollup``): a page shared by n
  processes counts 1/n in each, so the shared memory a UDF worker exchanges Arrow batches through,
  and the copy-on-write pages of forked workers, are counted once. This is the reported figure.
- ``rss``: the plain sum of ``Rss`` (shared pages counted in every process that maps them): an
  upper bound, kept for comparison.

Descendants are found by walking the ppid field of ``/proc/*/stat`` (this kernel has no
``/proc/PID/task/TID/children``); a process once seen in the tree stays counted while it lives,
even if it is re-parented (daemonised Ray processes), identified by (pid, start time) so a
recycled pid is not mistaken for it. Where ``smaps_rollup`` is missing (kernels before 4.14) both
figures fall back to ``VmRSS`` of ``/proc/PID/status``. A peak shorter than the interval can be
missed; a sample costs a few ms of one core (in the harness, not in the measured process).

For the root process alone the kernel keeps an exact peak: ``reset_peak()`` also resets its
``VmHWM`` (writing 5 to ``/proc/PID/clear_refs``) and ``root_hwm()`` reads it back: the largest Rss
the case process itself reached since the reset, however briefly (children not included).
"""

from __future__ import annotations

import dataclasses
import os
import threading

METHOD = (
    "peak over the timed run of the sum of Pss (/proc/PID/smaps_rollup; shared pages counted once) "
    "of the case process and all its descendants, sampled every {interval_ms:.0f} ms by the harness; "
    "baseline: the same sum after setup(), just before the timed run; peak_rss_sum_mb: the same with "
    "Rss (shared pages counted per process); root_hwm_mb: the case process's own kernel peak Rss "
    "(VmHWM, reset after setup()): exact, children excluded"
)


@dataclasses.dataclass(frozen=True)
class Usage:
    """One sample of a process tree: bytes of Pss and of Rss summed, and how many processes."""

    pss: int = 0
    rss: int = 0
    processes: int = 0

    @property
    def pss_mb(self) -> float:
        return self.pss / 2**20

    @property
    def rss_mb(self) -> float:
        return self.rss / 2**20


def _read(path: str) -> bytes:
    """A small /proc file in one read (unbuffered: a tenth of open()'s cost, this runs 50x a second)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def _stat(pid: int) -> tuple[int, int] | None:
    """(ppid, start time in clock ticks) of a live process, or None when it is gone."""
    try:
        data = _read(f"/proc/{pid}/stat")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself hold spaces or parentheses.
    fields = data[data.rfind(b")") + 2 :].split(None, 20)
    return int(fields[1]), int(fields[19])


def _memory(pid: int) -> tuple[int, int] | None:
    """(Pss, Rss) in bytes of a live process, or None when it is gone (or a zombie)."""
    try:
        text = _read(f"/proc/{pid}/smaps_rollup")
        keys = (b"Pss:", b"Rss:")
    except FileNotFoundError:
        try:
            text = _read(f"/proc/{pid}/status")
        except OSError:
            return None
        keys = (b"VmRSS:", b"VmRSS:")
    except OSError:
        return None
    values = {}
    for line in text.splitlines():
        for key in keys:
            if line.startswith(key):
                values[key] = int(line.split()[1]) * 1024  # kB
    if not values:
        return None  # a zombie: no memory left
    return values.get(keys[0], 0), values.get(keys[1], 0)


class TreeSampler:
    """Samples the memory of process ``pid`` and its descendants on a thread of its own.

    ``start()`` begins sampling; ``reset_peak()`` takes a sample now and makes it the peak (returns
    it: the baseline); ``stop()`` ends the thread and returns the peak :class:`Usage` (the largest
    Pss sum seen since the last reset; its ``rss`` is the largest Rss sum, possibly of another
    sample). ``samples`` counts samples taken."""

    def __init__(self, pid: int, interval_s: float = 0.02) -> None:
        self.pid = pid
        self.interval_s = interval_s
        self.samples = 0
        self._known: dict[int, int] = {}  # pid -> start time, every process seen in the tree
        self._peak = Usage()
        self._lock = threading.Condition()
        self._measuring = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def method(self) -> str:
        return METHOD.format(interval_ms=self.interval_s * 1000)

    def _tree(self) -> list[int]:
        """Live pids of the tree: the root, its descendants now, and earlier members still alive."""
        stats: dict[int, tuple[int, int]] = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                stat = _stat(int(name))
                if stat is not None:
                    stats[int(name)] = stat
        if self.pid in stats:
            self._known.setdefault(self.pid, stats[self.pid][1])
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in stats.items():
            children.setdefault(ppid, []).append(pid)
        stack = [pid for pid in self._known if pid in stats and stats[pid][1] == self._known[pid]]
        members: set[int] = set()
        while stack:
            pid = stack.pop()
            if pid in members:
                continue
            members.add(pid)
            self._known.setdefault(pid, stats[pid][1])
            stack.extend(children.get(pid, ()))
        for pid in [p for p in self._known if p not in members]:
            del self._known[pid]  # gone (or its pid reused by an unrelated process)
        return sorted(members)

    def measure(self) -> Usage:
        """One sample of the tree now (does not touch the peak)."""
        pss = rss = count = 0
        with self._measuring:  # the thread and reset_peak() both walk (and update) the tree
            for pid in self._tree():
                memory = _memory(pid)
                if memory is not None:
                    pss += memory[0]
                    rss += memory[1]
                    count += 1
        return Usage(pss, rss, count)

    def sample(self) -> Usage:
        """Takes a sample now and folds it into the peak."""
        usage = self.measure()
        with self._lock:
            self._peak = Usage(
                max(self._peak.pss, usage.pss),
                max(self._peak.rss, usage.rss),
                max(self._peak.processes, usage.processes),
            )
            self.samples += 1
            self._lock.notify_all()
        return usage

    def reset_peak(self) -> Usage:
        """Takes a sample now and restarts the peak from it (and the root's VmHWM from its Rss now);
        returns that sample (the baseline)."""
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass  # gone, or a kernel before 4.0: root_hwm() then covers the process's whole life
        usage = self.measure()
        with self._lock:
            self._peak = usage
            self.samples += 1
            self._lock.notify_all()
        return usage

    def root_hwm(self) -> int | None:
        """Bytes of the root process's peak Rss (VmHWM) since ``reset_peak()``; None once it is gone."""
        try:
            text = _read(f"/proc/{self.pid}/status")
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) * 1024
        return None

    def wait_for_samples(self, count: int, timeout_s: float = 60.0) -> bool:
        """Blocks until ``samples`` reaches ``count``; False if ``timeout_s`` passed first."""
        with self._lock:
            return self._lock.wait_for(lambda: self.samples >= count, timeout_s)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval_s)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="tree-memory-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> Usage:
        """Stops the thread (again: a no-op); returns the peak since the last reset (Usage() if
        nothing was seen)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            return self._peak
