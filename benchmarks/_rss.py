"""Peak memory of a benchmark: the summed RSS of a process tree, sampled in a thread."""

from __future__ import annotations

import threading
from collections.abc import Callable

import psutil

__all__ = ["PeakRSS"]


class PeakRSS:
    """Samples the summed RSS of this process (``include_self``) and all its children every
    ``interval`` seconds while the ``with`` block runs; ``peak`` holds the maximum in bytes.
    ``processes``: a function giving the process ids to sum instead (e.g. a pool's)."""

    def __init__(self, include_self: bool = True, interval: float = 0.05,
                 processes: Callable[[], list[int]] | None = None) -> None:
        self.include_self = include_self
        self.interval = interval
        self.processes = processes
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def sample(self) -> int:
        me = psutil.Process()
        if self.processes is not None:
            procs = []
            for pid in self.processes():
                try:
                    procs.append(psutil.Process(pid))
                except psutil.Error:
                    pass
        elif self.include_self:
            procs = [me, *me.children(recursive=True)]
        else:
            procs = me.children(recursive=True)
        total = 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, self.sample())

    def __enter__(self) -> PeakRSS:
        self.peak = self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.sample())
