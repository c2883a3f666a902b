"""Per-stage statistics and the end-of-run summary table."""

from __future__ import annotations

import math
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

__all__ = ["StageStats", "RunStats", "ReportField", "report_fields", "timeline_points",
           "ScoreSketch", "MAX_REASONS", "MAX_TIMELINE_POINTS", "MAX_TIMELINE_SLOTS", "Timeline",
           "reason_cause", "peak_rss_mb", "process_peak_rss_mb", "DEDUP_GROUP_SIZES",
           "SOURCE_BYTES_KEY", "INPUT_BYTES_COUNTER"]

#: metadata of every partition: its bytes of input (a block's share of its file), which the
#: executors count as read when a stage consumes the partition (the run's overall progress)
SOURCE_BYTES_KEY = "source_bytes"
#: the counter the partitioner publishes (``listed`` bytes, ``listing_done`` once at the end) and
#: the executors add to (``read`` bytes): the run's overall progress and its ETA come from it
INPUT_BYTES_COUNTER = "input_bytes"

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


_HWM: dict[str, Any] = {"pid": None, "fd": None, "at": 0.0, "mb": 0.0}
_HWM_EVERY_S = 0.005  # a stage call is booked with a high-water mark at most this old


def process_peak_rss_mb() -> float:
    """Peak resident set size, in MiB, of this process alone: what a worker reports with each
    call result. On Linux the high-water mark of its own memory (``VmHWM``): ``ru_maxrss`` of a
    worker started by fork + exec also counts the parent's memory at the fork. Elsewhere
    ``ru_maxrss``; 0.0 where neither exists. Called once per stage call, so the status file
    stays open and is read at most every few milliseconds."""
    now = time.monotonic()
    cache = _HWM
    if cache["pid"] == os.getpid() and now - cache["at"] < _HWM_EVERY_S:
        return cache["mb"]
    try:
        if cache["pid"] != os.getpid():  # first call here, or a forked child
            cache["fd"] = os.open("/proc/self/status", os.O_RDONLY)
            cache["pid"], cache["mb"] = os.getpid(), 0.0
        status = os.pread(cache["fd"], 8192, 0)
        at = status.index(b"VmHWM:")
        cache["mb"] = max(cache["mb"], int(status[at + 6:status.index(b"kB", at)]) / 1024)
        cache["at"] = now
        return cache["mb"]
    except (OSError, ValueError):
        cache["pid"] = None
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
            if not len(part):
                continue
            # bucket keys span a few hundred values (2% buckets): counted without a sort
            keys = np.floor(np.log(part) / math.log(self.GAMMA)).astype(np.int64)
            low = int(keys.min())
            counts = np.bincount(keys - low)
            hit = np.flatnonzero(counts)
            for k, c in zip((hit + low).tolist(), counts[hit].tolist(), strict=True):
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


_COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}
_AMOUNT: dict[str, Any] = {"type": "number", "minimum": 0}


def _figure(doc: str, default: Any = 0, *, schema: dict[str, Any] = _COUNT,
            digits: int | None = None, factory: Callable[[], Any] | None = None,
            optional: bool = False, to_json: Callable[[Any], Any] | None = None,
            report: bool = True, show: bool = True) -> Any:
    """A :class:`StageStats` field with what the run report says of it: ``doc`` (its meaning in
    ``docs/run-report.md``), ``schema`` (JSON Schema of its report value), ``digits`` (floats
    rounded), ``optional`` (added without a schema version bump, so not required), ``to_json``
    (its report value when not the plain value). ``report=False``: kept out of ``stages[]``, and
    ``doc`` says where it goes instead. ``show``: in the dataclass ``repr``."""
    meta = {"doc": doc, "schema": schema, "digits": digits, "optional": optional,
            "to_json": to_json, "report": report}
    if factory is not None:
        return field(default_factory=factory, metadata=meta, repr=show)
    return field(default=default, metadata=meta, repr=show)  # MISSING: a required argument


MAX_TIMELINE_POINTS = 120
#: slots a stage's timeline keeps at most: past that its slots double in width, so a long run's
#: statistics stay the same size (a run under ~17 minutes keeps one slot per second)
MAX_TIMELINE_SLOTS = 1024


class Timeline(dict):
    """Items per second of the run as ``{slot start second: items}``, each slot ``step``
    seconds wide (1 until the run outgrows :data:`MAX_TIMELINE_SLOTS`, then doubled as often
    as needed)."""

    step: int = 1

    def add(self, second: int, items: float) -> None:
        """Add ``items`` to the slot holding ``second``."""
        key = second - second % self.step
        self[key] = self.get(key, 0) + items
        if len(self) > MAX_TIMELINE_SLOTS:
            self.step *= 2
            merged: dict[int, float] = {}
            for k, v in self.items():
                merged[k - k % self.step] = merged.get(k - k % self.step, 0) + v
            self.clear()
            self.update(merged)


def timeline_points(per_second: dict[int, float],
                    points: int = MAX_TIMELINE_POINTS) -> list[list[float]]:
    """``[[start_s, items_per_s], ...]``: items in per second, in at most ``points`` equal
    buckets from the run's start (empty seconds included as 0); a :class:`Timeline`'s buckets
    are whole slots."""
    if not per_second:
        return []
    step = getattr(per_second, "step", 1)
    span = int(max(per_second)) + step
    width = step * max(1, -(-span // (points * step)))
    sums: dict[int, float] = {}
    for sec, n in per_second.items():
        sums[sec // width] = sums.get(sec // width, 0) + n
    return [[b * width, round(sums.get(b, 0) / width, 3)] for b in range(-(-span // width))]


_REASONS_SCHEMA = {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}}
_COUNTERS_SCHEMA = {"type": "object", "additionalProperties": {
    "type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}}
_TIMELINE_SCHEMA = {"type": "array", "items": {
    "type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}],
    "minItems": 2, "maxItems": 2}}


@dataclass
class StageStats:
    """What one stage did during a run.

    Each field carries its run-report entry (meaning, JSON type; :func:`report_fields`): the
    report's ``stages[]`` entries, their JSON Schema and the table in ``docs/run-report.md`` are
    generated from these fields, and a test holds them together. A new figure is one field here.
    """

    name: str = _figure("the stage's name (duplicates renamed `_1`, `_2` as in the summary)",
                        MISSING, schema={"type": "string"})
    workers: int = _figure("workers (threads, processes or actors) the stage ran on")
    tasks_in: int = _figure("tasks received")
    tasks_out: int = _figure("tasks produced")
    items_in: int = _figure("items (records, rows, files) received")
    items_out: int = _figure("items (records, rows, files) produced")
    busy_s: float = _figure("seconds workers spent inside the stage, summed over workers", 0.0,
                            schema=_AMOUNT, digits=4)
    retries: int = _figure("retried attempts")
    failed_tasks: int = _figure("tasks that failed in this stage after their retries")
    rejected: int = _figure(
        "records the stage rejected by design (malformed; filtered ones when the filter has "
        "`split=True`), failed tasks not included")
    skipped: int = _figure("source partitions skipped because a checkpoint marked them done")
    worker_restarts: int = _figure("worker processes restarted after a crash")
    workers_added: int = _figure(
        "workers started during the run beyond the first ones (an autoscaling actor pool grew)",
        optional=True)
    workers_retired: int = _figure(
        "workers let go during the run while work went on (an autoscaling actor pool shrank)",
        optional=True)
    rejected_by_reason: dict[str, int] = _figure(
        f"`{{reason: count}}`; after {MAX_REASONS} distinct reasons per stage the rest are "
        f"counted as `\"(other)\"`", factory=dict, schema=_REASONS_SCHEMA, to_json=dict)
    timeline: dict[int, float] = _figure(
        f"`[[start_s, items_per_s], ...]`: items the stage received per second of the run, in "
        f"at most {MAX_TIMELINE_POINTS} equal buckets from the start (the HTML report plots it)",
        factory=Timeline, schema=_TIMELINE_SCHEMA, to_json=timeline_points, show=False)
    """Items in per second of the run (second since the start -> items, each call's items spread
    over the seconds it was busy), for the reports."""
    histograms: dict[str, ScoreSketch] = _figure(
        "the report's top-level `histograms` list, re-binned", factory=dict, report=False,
        show=False)
    """Score histograms the stage published (``drain_histograms``), by score name."""
    counters: dict[str, dict[str, int]] = _figure(
        "`{counter name: {key: count}}`: what the stage published with `publish_counts`, summed "
        "over workers (below); `{}` when none", factory=dict, schema=_COUNTERS_SCHEMA,
        to_json=lambda c: {name: dict(counts) for name, counts in c.items()})
    """Counters the stage published (``publish_counts``), summed over workers: name -> key -> n."""
    peak_rss_mb: float = _figure(
        "the largest peak resident memory (MiB) of a worker process that ran the stage, over "
        "all its workers: local worker processes, Ray Data and actor-pool workers, and the "
        "driver for thread workers and the source stage. Each call result carries its "
        "process's high-water mark (`VmHWM` on Linux; `ru_maxrss` elsewhere), so stages fused "
        "into one worker, or threads of one process, report the same process peak", 0.0,
        schema=_AMOUNT, digits=1)
    """The largest peak resident memory (MiB) of a worker process that ran the stage (thread
    workers report the driver's; a process shared by fused stages reports to each of them)."""

    @property
    def throughput(self) -> float:
        """Items in per second of worker busy time."""
        return self.items_in / self.busy_s if self.busy_s > 0 else 0.0

    def report_entry(self) -> dict[str, Any]:
        """This stage's ``stages[]`` entry of the run report: one value per
        :func:`report_fields` entry."""
        return {f.name: f.value(self) for f in report_fields()}

    to_dict = report_entry


@dataclass(frozen=True)
class ReportField:
    """One field of a ``stages[]`` entry of the run report (generated from :class:`StageStats`)."""

    name: str
    doc: str
    schema: dict[str, Any]
    optional: bool = False
    value: Callable[[StageStats], Any] = field(default=lambda s: None, compare=False)


def _field_value(name: str, digits: int | None,
                 to_json: Callable[[Any], Any] | None) -> Callable[[StageStats], Any]:
    def value(stage: StageStats) -> Any:
        v = getattr(stage, name)
        v = to_json(v) if to_json is not None else v
        return round(v, digits) if digits is not None else v
    return value


_THROUGHPUT = ReportField(
    "throughput_items_per_s", "`items_in / busy_s` (per worker-second, not wall time)", _AMOUNT,
    value=lambda s: round(s.throughput, 2))


def report_fields() -> tuple[ReportField, ...]:
    """The ``stages[]`` fields of the run report, in order: every :class:`StageStats` field
    that goes into the report (from its metadata), then the derived throughput."""
    out = [ReportField(f.name, f.metadata["doc"], f.metadata["schema"], f.metadata["optional"],
                       _field_value(f.name, f.metadata["digits"], f.metadata["to_json"]))
           for f in fields(StageStats) if f.metadata.get("report", False)]
    return (*out, _THROUGHPUT)


def _spread(timeline: dict[int, float], items: int, end: float, busy_s: float) -> None:
    """Add ``items`` to the per-second ``timeline`` spread evenly over the call that processed
    them (``busy_s`` seconds ending at ``end``, run-relative), so the reports plot a rate, not
    the moments tasks finished."""
    add = timeline.add if isinstance(timeline, Timeline) else (
        lambda sec, n: timeline.__setitem__(sec, timeline.get(sec, 0) + n))
    start = max(end - busy_s, 0.0)
    if end - start < 1e-3:
        add(int(end), items)
        return
    sec = int(start)
    while sec < end:
        overlap = min(end, sec + 1) - max(start, sec)
        add(sec, items * overlap / (end - start))
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
        """Count ``records`` (:class:`~curator.run.sink.RejectedRecord`) per cause (the reason
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
    for name, counts in stage.counters.items():
        if name == INPUT_BYTES_COUNTER:  # progress bookkeeping, not a finding of the stage
            continue
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        text = ", ".join(f"{k}={v:,}" for k, v in top[:most])
        more = f", … {len(top) - most} more" if len(top) > most else ""
        out.append(f"  {stage.name} {name}: {text}{more}"[:width])
    return out
