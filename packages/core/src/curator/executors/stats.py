"""Per-stage statistics, live progress and the end-of-run summary table."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import TextIO

__all__ = ["StageStats", "RunStats", "ProgressReporter"]


@dataclass
class StageStats:
    """What one stage did during a run."""

    name: str
    workers: int = 0
    tasks_in: int = 0
    tasks_out: int = 0
    items_in: int = 0
    items_out: int = 0
    busy_s: float = 0.0
    retries: int = 0
    failed_tasks: int = 0
    rejected: int = 0
    skipped: int = 0
    worker_restarts: int = 0

    @property
    def throughput(self) -> float:
        """Items in per second of worker busy time."""
        return self.items_in / self.busy_s if self.busy_s > 0 else 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["throughput_items_per_s"] = round(self.throughput, 2)
        return d


@dataclass
class RunStats:
    """Statistics of a whole run: one :class:`StageStats` per stage, plus wall time."""

    stages: list[StageStats] = field(default_factory=list)
    started_at: float = field(default_factory=time.time)
    wall_s: float = 0.0
    executor: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def for_stages(cls, names: list[str], executor: str = "") -> RunStats:
        return cls(stages=[StageStats(n) for n in names], executor=executor)

    def record(self, index: int, *, tasks_in: int = 0, tasks_out: int = 0, items_in: int = 0,
               items_out: int = 0, busy_s: float = 0.0, rejected: int = 0) -> None:
        with self._lock:
            s = self.stages[index]
            s.tasks_in += tasks_in
            s.tasks_out += tasks_out
            s.items_in += items_in
            s.items_out += items_out
            s.busy_s += busy_s
            s.rejected += rejected

    def bump(self, index: int, attr: str, n: int = 1) -> None:
        with self._lock:
            setattr(self.stages[index], attr, getattr(self.stages[index], attr) + n)

    @property
    def total_rejected(self) -> int:
        return sum(s.rejected + s.failed_tasks for s in self.stages)

    def to_dict(self) -> dict:
        return {"executor": self.executor, "wall_s": round(self.wall_s, 3),
                "stages": [s.to_dict() for s in self.stages]}

    def format_table(self) -> str:
        """A fixed-width table of the per-stage figures."""
        head = ["stage", "workers", "tasks in", "tasks out", "items in", "items out", "busy s",
                "items/s", "rejected", "failed", "retries"]
        rows = [[s.name, s.workers, s.tasks_in, s.tasks_out, s.items_in, s.items_out,
                 f"{s.busy_s:.2f}", f"{s.throughput:,.0f}", s.rejected, s.failed_tasks,
                 s.retries] for s in self.stages]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
        fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
        lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
        lines += [fmt.format(*map(str, r)) for r in rows]
        lines.append(f"wall time {self.wall_s:.2f}s on {self.executor or 'executor'}")
        return "\n".join(lines)


class ProgressReporter:
    """Prints a one-line status of every stage every ``interval`` seconds while a run lasts."""

    def __init__(self, stats: RunStats, interval: float = 5.0, stream: TextIO | None = None,
                 extra: callable | None = None) -> None:
        self.stats = stats
        self.interval = interval
        self.stream = stream or sys.stderr
        self.extra = extra
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="curator-progress", daemon=True)

    def __enter__(self) -> ProgressReporter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def line(self) -> str:
        elapsed = time.time() - self.stats.started_at
        parts = [f"{s.name}: {s.tasks_in}→{s.tasks_out} tasks" for s in self.stats.stages]
        extra = f" | {self.extra()}" if self.extra else ""
        return f"[curator {elapsed:6.1f}s] " + " | ".join(parts) + extra

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            print(self.line(), file=self.stream, flush=True)
