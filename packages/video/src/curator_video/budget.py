"""FrameBudget: a bound on the decoded frames a stage's workers hold at once (one process)."""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any

__all__ = ["FrameBudget", "DEFAULT_FRAME_BUDGET"]

DEFAULT_FRAME_BUDGET = 512 * 2**20
"""Bytes of decoded frames one frame-extraction stage's workers hold together in a process
(about 190 frames of 1280x720 or 21 of 4K); a task that alone needs more runs alone."""


class FrameBudget:
    """Admits a worker (a thread) to decode ``nbytes`` of frames while the frames the other
    workers hold, plus these, fit in ``limit`` bytes; a worker holding nothing else always gets
    in, so a task bigger than the limit runs alone instead of never.

    A worker holds its task's frames until they are freed (:meth:`hold` watches the arrays) or
    until it asks again (its previous task has then left its hands: written, or queued for
    another stage whose queue bounds it), so no wait can outlast the other workers' tasks.
    """

    def __init__(self, limit: int = DEFAULT_FRAME_BUDGET) -> None:
        self.limit = int(limit)
        self._held: dict[int, tuple[int, int]] = {}  # thread id -> (ticket, bytes)
        self._cond = threading.Condition()
        self._tickets = itertools.count()

    @property
    def held(self) -> int:
        """Bytes the workers hold now."""
        with self._cond:
            return sum(n for _, n in self._held.values())

    def acquire(self, nbytes: int) -> int:
        """Wait until ``nbytes`` fit (see the class); returns the ticket :meth:`hold` and
        :meth:`release` take."""
        me = threading.get_ident()
        with self._cond:
            if self._held.pop(me, None) is not None:
                self._cond.notify_all()
            while self._held and sum(n for _, n in self._held.values()) + nbytes > self.limit:
                self._cond.wait(1.0)
            ticket = next(self._tickets)
            self._held[me] = (ticket, int(nbytes))
            return ticket

    def release(self, ticket: int, thread: int | None = None) -> None:
        """Give back what ``ticket`` holds (nothing if the worker already moved on)."""
        thread = threading.get_ident() if thread is None else thread
        with self._cond:
            if self._held.get(thread, (None,))[0] == ticket:
                del self._held[thread]
                self._cond.notify_all()

    def hold(self, ticket: int, arrays: list[Any]) -> None:
        """Release ``ticket`` once every array in ``arrays`` (and every view of them) is
        freed; released now when there are none."""
        owners = {id(o): o for o in (a if a.base is None else a.base for a in arrays)}
        if not owners:
            self.release(ticket)
            return
        thread = threading.get_ident()
        left = [len(owners)]
        lock = threading.Lock()

        def freed() -> None:
            with lock:
                left[0] -= 1
                done = left[0] == 0
            if done:
                self.release(ticket, thread)

        for owner in owners.values():
            weakref.finalize(owner, freed)
