"""Peak resident memory of this process while a block runs, sampled every 5 ms from
/proc/self/status (the memory tests' children import it from this folder)."""

from __future__ import annotations

import threading
import time


def rss_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) >> 10
    return 0


class PeakRss:
    """``with PeakRss() as probe: ...`` then ``probe.grew_mb``: the peak above the start."""

    def __enter__(self) -> PeakRss:
        self.base = rss_mb()
        self.peak = self.base
        self._done = False
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._done:
            self.peak = max(self.peak, rss_mb())
            time.sleep(0.005)

    def __exit__(self, *exc: object) -> None:
        self._done = True
        self._thread.join()
        self.peak = max(self.peak, rss_mb())

    @property
    def grew_mb(self) -> int:
        return self.peak - self.base
