"""Per-stage statistics, live progress and the end-of-run summary table."""

from __future__ import annotations

import math
import re
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import TextIO

__all__ = ["StageStats", "RunStats", "ProgressReporter", "StageProgress", "OverallProgress",
           "RayStageMetrics", "ScoreSketch", "MAX_REASONS", "reason_cause", "peak_rss_mb", "process_peak_rss_mb", "DEDUP_GROUP_SIZES"]

DEDUP_GROUP_SIZES = "dedup_group_sizes"
"""The counter a deduplication stage publishes: duplicate-group size -> number of groups of that
size (groups of two or more members); the HTML report draws it as a bar plot."""

MAX_REASONS = 50
"""Distinct rejection reasons counted per stage (reasons are short fixed strings by convention)."""


_PLACE = r"(?:\S*[/\\]\S*|\S+:\d+|[\w.-]+\.[A-Za-z][\w]{1,5})"  # dir/f, f:12, f.tar
_WHERE = re.compile(rf"\s+(?:at|in|of|from)\s+{_PLACE}"  # " at dir/file.jsonl:12"
                    rf"|\s*\({_PLACE}\)"  # " (dir/file:12)"
                    r"|(?:\s+(?:at|on|in))?:?\s+(?:line|offset|byte)\s+\d+")  # " at line 12"


def reason_cause(reason: str) -> str:
    """A rejection reason without the place it happened (``"malformed JSON at
    …/stories_000.jsonl:1252"`` -> ``"malformed JSON"``): what the counts group by, so one
    cause is one count however many files and lines it hit. The record keeps the full reason."""
    cause = _WHERE.sub("", reason).strip(" :,;")
    return cause or reason


def _maxrss_mb(who: int) -> float:
    import resource

    scale = 1 / 1024 if sys.platform != "darwin" else 1 / 1024**2  # KiB on Linux, bytes on macOS
    return resource.getrusage(who).ru_maxrss * scale


def peak_rss_mb() -> float:
    """Peak resident set size, in MiB, of this process and its waited-for children."""
    import resource

    return max(_maxrss_mb(resource.RUSAGE_SELF), _maxrss_mb(resource.RUSAGE_CHILDREN))


def process_peak_rss_mb() -> float:
    """Peak resident set size, in MiB, of this process alone: what a worker reports with each
    call result. On Linux the high-water mark of its own memory (``VmHWM``): ``ru_maxrss`` of a
    worker started by fork + exec also counts the parent's memory at the fork. Elsewhere
    ``ru_maxrss``; 0.0 where neither exists."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return 0.0
    return _maxrss_mb(resource.RUSAGE_SELF)


class ScoreSketch:
    """A mergeable histogram of scores for the run reports: exact counts in log-spaced buckets
    (each 2% wide), so batches scored in different workers add up exactly, whatever the range.

    A stage publishes sketches by defining ``drain_histograms() -> {score name: ScoreSketch}``
    (called after each successful batch, like ``drain_rejected``); ``thresholds`` are marked
    on the plot.
    """

    GAMMA = 1.02

    def __init__(self, thresholds: list[float] | tuple[float, ...] = ()) -> None:
        self.pos: dict[int, int] = {}
        self.neg: dict[int, int] = {}
        self.zero = 0
        self.nan = 0
        self.min = math.inf
        self.max = -math.inf
        self.thresholds = sorted({float(t) for t in thresholds})

    @property
    def count(self) -> int:
        """Finite scores added."""
        return self.zero + sum(self.pos.values()) + sum(self.neg.values())

    def add(self, values: object) -> ScoreSketch:
        """Add scores (any sequence or array of numbers; NaN and infinities are counted apart)."""
        import numpy as np

        v = np.asarray(values, dtype=np.float64).ravel()
        finite = np.isfinite(v)
        self.nan += int((~finite).sum())
        v = v[finite]
        if not len(v):
            return self
        self.min, self.max = min(self.min, float(v.min())), max(self.max, float(v.max()))
        self.zero += int((v == 0).sum())
        for side, part in ((self.pos, v[v > 0]), (self.neg, -v[v < 0])):
            keys, counts = np.unique(np.floor(np.log(part) / math.log(self.GAMMA)),
                                     return_counts=True)
            for k, c in zip(keys.astype(int).tolist(), counts.tolist(), strict=True):
                side[k] = side.get(k, 0) + c
        return self

    def merge(self, other: ScoreSketch) -> ScoreSketch:
        """Add ``other``'s counts to this sketch."""
        for mine, theirs in ((self.pos, other.pos), (self.neg, other.neg)):
            for k, c in theirs.items():
                mine[k] = mine.get(k, 0) + c
        self.zero += other.zero
        self.nan += other.nan
        self.min, self.max = min(self.min, other.min), max(self.max, other.max)
        self.thresholds = sorted(set(self.thresholds) | set(other.thresholds))
        return self

    def histogram(self, bins: int = 30) -> tuple[list[int], list[float]]:
        """``(counts, edges)`` over ``bins`` equal bins from the smallest to the largest score
        (each bucket counted at its centre, so a bin edge is off by at most 1%)."""
        import numpy as np

        if not self.count:
            return [], []
        mid = math.sqrt(self.GAMMA)
        values = [0.0] + [self.GAMMA ** k * mid for k in self.pos] + \
            [-(self.GAMMA ** k * mid) for k in self.neg]
        weights = [self.zero, *self.pos.values(), *self.neg.values()]
        lo, hi = self.min, self.max if self.max > self.min else self.min + 1.0
        counts, edges = np.histogram(np.clip(values, lo, hi), bins=bins, range=(lo, hi),
                                     weights=weights)
        return [int(c) for c in counts], [float(e) for e in edges]


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
    workers_added: int = 0
    """Workers started during the run beyond the first (an autoscaling pool grew)."""
    workers_retired: int = 0
    """Workers let go during the run while work went on (an autoscaling pool shrank)."""
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    timeline: dict[int, float] = field(default_factory=dict, repr=False)
    """Items in per second of the run (second since the start -> items, each call's items spread
    over the seconds it was busy), for the reports."""
    histograms: dict[str, ScoreSketch] = field(default_factory=dict, repr=False)
    """Score histograms the stage published (``drain_histograms``), by score name."""
    counters: dict[str, dict[str, int]] = field(default_factory=dict)
    """Counters the stage published (``publish_counts``), summed over workers: name -> key -> n."""
    peak_rss_mb: float = 0.0
    """The largest peak resident memory (MiB) of a worker process that ran the stage (thread
    workers report the driver's; a process shared by fused stages reports to each of them)."""

    @property
    def throughput(self) -> float:
        """Items in per second of worker busy time."""
        return self.items_in / self.busy_s if self.busy_s > 0 else 0.0

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("timeline", "histograms")}
        d["throughput_items_per_s"] = round(self.throughput, 2)
        return d


def _spread(timeline: dict[int, float], items: int, end: float, busy_s: float) -> None:
    """Add ``items`` to the per-second ``timeline`` spread evenly over the call that processed
    them (``busy_s`` seconds ending at ``end``, run-relative), so the reports plot a rate, not
    the moments tasks finished."""
    start = max(end - busy_s, 0.0)
    if end - start < 1e-3:
        timeline[int(end)] = timeline.get(int(end), 0) + items
        return
    sec = int(start)
    while sec < end:
        overlap = min(end, sec + 1) - max(start, sec)
        timeline[sec] = timeline.get(sec, 0) + items * overlap / (end - start)
        sec += 1


@dataclass
class RunStats:
    """Statistics of a whole run: one :class:`StageStats` per stage, plus wall time."""

    stages: list[StageStats] = field(default_factory=list)
    started_at: float = field(default_factory=time.time)
    wall_s: float = 0.0
    executor: str = ""
    peak_rss_mb: float = 0.0
    """Peak resident memory of the driver and its finished child processes (set at the end)."""
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
            if items_in:
                _spread(s.timeline, items_in, time.time() - self.started_at, busy_s)

    def count_reasons(self, index: int, records: list) -> None:
        """Count ``records`` (:class:`~curator.rejected.RejectedRecord`) per cause (the reason
        without its file and line, :func:`reason_cause`); after :data:`MAX_REASONS` distinct
        causes of a stage the rest count as ``"(other)"``."""
        if not records:
            return
        with self._lock:
            seen = self.stages[index].rejected_by_reason
            for rec in records:
                cause = reason_cause(rec.reason)
                key = cause if cause in seen or len(seen) < MAX_REASONS else "(other)"
                seen[key] = seen.get(key, 0) + 1

    def merge_histograms(self, index: int, sketches: dict[str, ScoreSketch] | None) -> None:
        """Add the score sketches one batch of stage ``index`` published."""
        if not sketches:
            return
        with self._lock:
            mine = self.stages[index].histograms
            for name, sketch in sketches.items():
                if name in mine:
                    mine[name].merge(sketch)
                else:
                    mine[name] = sketch

    def merge_counters(self, index: int, counters: dict[str, dict[str, int]] | None) -> None:
        """Add the counters one batch of stage ``index`` published."""
        if not counters:
            return
        with self._lock:
            mine = self.stages[index].counters
            for name, counts in counters.items():
                into = mine.setdefault(name, {})
                for key, n in counts.items():
                    into[key] = into.get(key, 0) + n

    def note_peak_rss(self, index: int, mb: float) -> None:
        """Keep the largest worker peak memory ``mb`` seen for stage ``index``."""
        if mb:
            with self._lock:
                s = self.stages[index]
                s.peak_rss_mb = max(s.peak_rss_mb, mb)

    def bump(self, index: int, attr: str, n: int = 1) -> None:
        with self._lock:
            setattr(self.stages[index], attr, getattr(self.stages[index], attr) + n)

    @property
    def total_rejected(self) -> int:
        return sum(s.rejected + s.failed_tasks for s in self.stages)

    def to_dict(self) -> dict:
        return {"executor": self.executor, "wall_s": round(self.wall_s, 3),
                "peak_rss_mb": round(self.peak_rss_mb, 1),
                "stages": [s.to_dict() for s in self.stages]}

    def format_table(self) -> str:
        """A fixed-width table of the per-stage figures."""
        head = ["stage", "workers", "tasks in", "tasks out", "items in", "items out", "busy s",
                "items/s", "rejected", "failed", "retries", "peak MiB"]
        rows = [[s.name, s.workers, s.tasks_in, s.tasks_out, s.items_in, s.items_out,
                 f"{s.busy_s:.2f}", f"{s.throughput:,.0f}", s.rejected, s.failed_tasks,
                 s.retries, f"{s.peak_rss_mb:,.0f}"] for s in self.stages]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
        fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
        lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
        lines += [fmt.format(*map(str, r)) for r in rows]
        lines += [line for s in self.stages for line in _counter_lines(s)]
        lines.append(f"wall time {self.wall_s:.2f}s on {self.executor or 'executor'}")
        return "\n".join(lines)


def _counter_lines(stage: StageStats, width: int = 119, most: int = 8) -> list[str]:
    """One short line per counter of ``stage`` for the summary: its ``most`` largest keys."""
    out = []
    from curator.stages.file_partitioning import INPUT_BYTES_COUNTER

    for name, counts in stage.counters.items():
        if name == INPUT_BYTES_COUNTER:  # progress bookkeeping, not a finding of the stage
            continue
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        text = ", ".join(f"{k}={v:,}" for k, v in top[:most])
        more = f", … {len(top) - most} more" if len(top) > most else ""
        out.append(f"  {stage.name} {name}: {text}{more}"[:width])
    return out


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
        from curator.stages.file_partitioning import INPUT_BYTES_COUNTER

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
        from curator.stages.file_partitioning import INPUT_BYTES_COUNTER

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


class RayStageMetrics:
    """Exports the run's per-stage figures through Ray's metrics API (``ray.util.metrics``) from
    the driver, so they show on the Ray dashboard and its Prometheus endpoint: counters
    ``curator_stage_{tasks_in,tasks_out,items_in,items_out,rejected,failed_tasks,retries}``
    and the gauge ``curator_stage_busy_seconds``, tagged ``pipeline``, ``stage``, ``executor``.
    Updated every ``interval`` seconds while the run lasts and once at its end; a no-op when Ray
    is not initialised.
    """

    FIELDS = ("tasks_in", "tasks_out", "items_in", "items_out", "rejected", "failed_tasks",
              "retries")

    def __init__(self, stats: RunStats, pipeline: str = "", interval: float = 2.0) -> None:
        self.stats = stats
        self.pipeline = pipeline
        self.interval = interval
        self._sent: dict[tuple[int, str], int] = {}
        self._counters: dict[str, object] = {}
        self._busy: object | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="curator-ray-metrics",
                                        daemon=True)

    def __enter__(self) -> RayStageMetrics:
        import ray

        if not ray.is_initialized():
            return self
        from ray.util.metrics import Counter, Gauge

        tags = ("pipeline", "stage", "executor")
        self._counters = {f: Counter(f"curator_stage_{f}", description=f"Curator: {f} per stage",
                                     tag_keys=tags) for f in self.FIELDS}
        self._busy = Gauge("curator_stage_busy_seconds", tag_keys=tags,
                           description="Curator: worker seconds spent in the stage")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.flush()

    def _value(self, s: StageStats, field_name: str) -> int:
        if field_name == "rejected":  # ``rejected`` itself is filled in at the end of the run
            return sum(s.rejected_by_reason.values())
        return getattr(s, field_name)

    def flush(self) -> None:
        """Send what changed since the last flush."""
        if not self._counters:
            return
        for i, s in enumerate(self.stats.stages):
            tags = {"pipeline": self.pipeline, "stage": s.name, "executor": self.stats.executor}
            for f, counter in self._counters.items():
                now = self._value(s, f)
                delta = now - self._sent.get((i, f), 0)
                if delta > 0:
                    counter.inc(delta, tags=tags)
                    self._sent[(i, f)] = now
            self._busy.set(s.busy_s, tags=tags)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.flush()
