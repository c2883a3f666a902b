"""Live progress of a run: an overall bar (input bytes read, ETA) and one bar per stage."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from typing import TextIO

from curator.run.stats import INPUT_BYTES_COUNTER, RunStats

__all__ = ["ProgressReporter", "StageProgress", "OverallProgress"]


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "ETA ?"
    s = int(seconds + 0.5)
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"ETA {h}:{m:02d}:{sec:02d}" if h else (f"ETA {m}:{sec:02d}" if m else f"ETA {sec}s")


def _bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} TB"  # pragma: no cover


def _fit(name: str, room: int) -> str:
    """``name`` whole when it fits in ``room`` characters, else its start and end around '…'."""
    if len(name) <= room:
        return name
    head = max(room - 1, 2) // 2
    return f"{name[:head]}…{name[len(name) - (max(room - 1, 2) - head):]}"


@dataclass
class StageProgress:
    """What the progress display shows for one stage: tasks done, of a total only once that
    total is final (the source has listed everything and every upstream stage has finished:
    never "tasks produced so far"), items, throughput since the stage started and, with a
    final total, the estimated time left."""

    name: str
    done: int
    total: int | None
    items: int
    rate: float
    eta_s: float | None

    def count(self) -> str:
        return f"{self.done}/{'?' if self.total is None else self.total} tasks"

    def line(self, elapsed: float, width: int = 119) -> str:
        """One plain log line, at most ``width`` characters (a long name shortened in the
        middle, the figures kept)."""
        pct = f" {100 * self.done / self.total:3.0f}%" if self.total else ""
        eta = f", {_eta(self.eta_s)}" if self.total is not None else ""
        tail = f": {self.count()}{pct}, {self.items:,} items, {self.rate:,.0f} items/s{eta}"
        head = f"[curator {elapsed:5.0f}s] "
        return (head + _fit(self.name, width - len(head) - len(tail)) + tail)[:width]


@dataclass
class OverallProgress:
    """The whole run's progress: input bytes read by the stage after the source, of the bytes
    the source listed (final once ``listing_done``), and the time left at the rate read so
    far."""

    read: int
    listed: int
    listing_done: bool
    rate: float
    eta_s: float | None

    @property
    def fraction(self) -> float | None:
        return min(self.read / self.listed, 1.0) if self.listing_done and self.listed else None

    def count(self) -> str:
        of = _bytes(self.listed) + ("" if self.listing_done else " listed so far")
        return f"{_bytes(self.read)} of {of}"

    def line(self, elapsed: float, width: int = 119) -> str:
        pct = f" {100 * self.fraction:3.0f}%" if self.fraction is not None else ""
        return (f"[curator {elapsed:5.0f}s] overall: input read {self.count()}{pct}, "
                f"{_bytes(self.rate)}/s, {_eta(self.eta_s)}")[:width]


class ProgressReporter:
    """Live progress of a run, shared by every executor: on a terminal an overall bar (input
    bytes read, with the run's ETA) and one bar per stage (rich) with tasks done / final total,
    items and throughput; otherwise short plain lines (< 120 characters) every ``interval``
    seconds for the stages that moved.

    Parameters:
        stats: the run's statistics, which the executor updates as outcomes come in.
        interval: seconds between plain lines (bars refresh twice a second).
        stream: where to write (default stderr); bars only when it is a terminal.
        extra: optional callable whose text is added as one more plain line each tick.
        console: a ``rich.console.Console`` to draw bars on (tests: ``record=True``,
            ``force_terminal=True``); overrides ``stream``.
    """

    def __init__(self, stats: RunStats, interval: float = 5.0, stream: TextIO | None = None,
                 extra: callable | None = None, console: object | None = None) -> None:
        self.stats = stats
        self.interval = interval
        self.stream = stream or sys.stderr
        self.extra = extra
        self.console = console
        terminal = getattr(console, "is_terminal", None)
        if terminal is None:
            isatty = getattr(self.stream, "isatty", None)
            terminal = bool(isatty and isatty())
        self.bars = terminal
        self._first: dict[int, float] = {}
        self._first_read: float | None = None
        self._prev = stats.started_at
        self._last: list[tuple[int, int]] = []
        self._progress = None
        self._overall_task: int | None = None
        self._tasks: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="curator-progress", daemon=True)

    def __enter__(self) -> ProgressReporter:
        if self.bars:
            self._start_bars()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        if self._progress is not None:
            self.refresh()
            self._progress.stop()

    def overall(self, now: float | None = None) -> OverallProgress | None:
        """The run's progress by input bytes, or ``None`` when the source lists no sizes (a
        source that is not a file partitioner)."""

        now = time.time() if now is None else now
        stages = self.stats.stages
        if not stages:
            return None
        listed = stages[0].counters.get(INPUT_BYTES_COUNTER, {})
        if not listed.get("listed"):
            return None
        read = sum(s.counters.get(INPUT_BYTES_COUNTER, {}).get("read", 0) for s in stages[1:])
        if read and self._first_read is None:
            self._first_read = self._prev
        took = now - (self._first_read or now)
        rate = read / took if took > 0 else 0.0
        done = bool(listed.get("listing_done"))
        eta = None
        if done and read >= listed["listed"]:
            eta = 0.0
        elif done and rate > 0:
            eta = (listed["listed"] - read) / rate
        return OverallProgress(read, listed["listed"], done, rate, eta)

    def figures(self, now: float | None = None) -> list[StageProgress]:
        """The current figures of every stage."""

        now = time.time() if now is None else now
        out = []
        stages = self.stats.stages
        finished = False  # whether the stage before this one has finished (its count is final)
        for i, s in enumerate(stages):
            if i == 0:
                listing = s.counters.get(INPUT_BYTES_COUNTER, {})
                total = s.tasks_in if s.tasks_out or s.failed_tasks else None
                # a file partitioner says when its listing is complete; another source is done
                # with its first outcome (its process() returns everything at once)
                finished = bool(listing.get("listing_done")) if listing else total is not None
            else:
                up = stages[i - 1]
                total = up.tasks_out if finished else None
                finished = finished and s.tasks_in >= up.tasks_out
            done = s.tasks_in
            if done and i not in self._first:  # it started between the last look and now
                self._first[i] = self._prev
            took = now - self._first.get(i, now)
            items = s.items_out if i == 0 else s.items_in
            rate = items / took if took > 0 else 0.0
            eta = None
            if total is not None and done >= total:
                eta = 0.0
            elif total is not None and done and took > 0:
                eta = (total - done) * took / done
            out.append(StageProgress(s.name, done, total, items, rate, eta))
        self._prev = now
        return out

    def lines(self) -> list[str]:
        """The plain lines of this tick: the overall line, then the stages whose counts moved
        since the last tick (or the first unfinished stage, as a heartbeat)."""
        now = time.time()
        elapsed = now - self.stats.started_at
        overall = self.overall(now)
        figs = self.figures(now)
        state = [(f.done, f.items) for f in figs]
        moved = [f for f, st, old in zip(figs, state, self._last or [None] * len(figs),
                                         strict=False) if st != old]
        self._last = state
        if not moved:
            moved = [next((f for f in figs if f.total is None or f.done < f.total), figs[-1])]
        lines = ([overall.line(elapsed)] if overall else []) + [f.line(elapsed) for f in moved]
        if self.extra:
            lines.append(f"[curator {elapsed:5.0f}s] {self.extra()}"[:119])
        return lines

    def _start_bars(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn

        console = self.console or Console(file=self.stream)
        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"),
            TextColumn("{task.fields[rate]}"), TextColumn("{task.fields[eta]}"),
            console=console, refresh_per_second=2, redirect_stdout=False,
            redirect_stderr=False)
        # the overall bar first, shown once the source has listed input sizes
        self._overall_task = self._progress.add_task("overall (input read)", total=None,
                                                     count="", rate="", eta="", visible=False)
        self._tasks = [self._progress.add_task(s.name, total=None, count="", rate="", eta="")
                       for s in self.stats.stages]
        self._progress.start()

    def refresh(self) -> None:
        """Update the bars from the statistics (bars mode) and redraw them."""
        if self._progress is None:
            return
        overall = self.overall()
        if overall is not None:
            self._progress.update(self._overall_task, visible=True, completed=overall.read,
                                  total=overall.listed if overall.listing_done else None,
                                  count=overall.count(), rate=f"{_bytes(overall.rate)}/s",
                                  eta=_eta(overall.eta_s))
        for task, f in zip(self._tasks, self.figures(), strict=True):
            self._progress.update(task, completed=f.done, total=f.total, count=f.count(),
                                  rate=f"{f.items:,} items {f.rate:,.0f}/s",
                                  eta=_eta(f.eta_s) if f.total is not None else "")
        self._progress.refresh()

    def _loop(self) -> None:
        wait = min(self.interval, 0.5) if self.bars else self.interval
        while not self._stop.wait(wait):
            if self.bars:
                self.refresh()
            else:
                print("\n".join(self.lines()), file=self.stream, flush=True)
