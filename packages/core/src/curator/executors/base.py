"""The executor skeleton every executor runs, and the bookkeeping they share.

:meth:`BaseExecutor.execute` is the one skeleton: it makes the run's context, statistics,
tracker (partitions seeded after ``ctx.skip_done`` dropped those an earlier run finished) and
progress; runs ``setup_on_node`` (:meth:`BaseExecutor.setup_on_nodes`: once here, once per node
on Ray); runs the source stage on the driver, window by window
(:func:`curator.executors.retry.source_windows`); and returns ``finish(...)``: the
:class:`RunResult` (``ok``, ``failed``). An engine implements :meth:`BaseExecutor.session` (a
cluster connection, or nothing) and :meth:`BaseExecutor.run_groups`: run these stage groups
over these windows, each batch under the shared retry policy
(:func:`curator.executors.retry.run_with_retries`, :class:`~curator.executors.retry.DeadWorkerPolicy`),
handing every :class:`~curator.run.outcome.Outcome` to ``run.book`` on the driver, which writes
rejected records and failed tasks (whole) to the sink, updates the statistics and tells the
tracker (a partition is done only when everything descending from it succeeded).

Three outcomes are never confused: records **rejected** by design (the run is still ok), tasks
that **failed** after their retries (kept whole in the sink; the run is not ok) and the rest.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import traceback
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from curator.errors import CuratorError, PipelineFailedError
from curator.executors.config import ExecutorConfig
from curator.params import init_signature, typed_new
from curator.run.context import RunContext
from curator.run.outcome import Outcome, StageCall, book
from curator.run.progress import ProgressReporter
from curator.run.result import OutputCollector, RunResult
from curator.run.stats import (
    INPUT_BYTES_COUNTER,
    SOURCE_BYTES_KEY,
    RunStats,
    peak_rss_mb,
    process_peak_rss_mb,
)
from curator.run.tracker import PartitionTracker
from curator.stages.base import ProcessingStage
from curator.stages.lifecycle import ensure_setup, release_stage
from curator.stages.node_info import LOCAL_NODE, NodeInfo, WorkerMetadata
from curator.tasks import EMPTY_TASK, EmptyTask, FileGroupTask, StagePerf, Task

if TYPE_CHECKING:
    from curator.executors.fusion import StageGroup

__all__ = ["BaseExecutor", "Run", "invoke_stage", "invoke_source", "ensure_setup", "release_stage",
           "SourceStageError", "PipelineFailedError"]



class SourceStageError(CuratorError):
    """The first stage could not produce any task (missing input path, bad pattern)."""


def _name_unnamed(outputs: list[Task], inputs: list[Task], source: bool) -> None:
    """Give outputs built without an id (NeMo Curator's way: ``DocumentBatch(data=df,
    dataset_name=...)``) a deterministic one: a source's output its content id
    (:meth:`~curator.tasks.Task.get_deterministic_id`, else a hash of its data); otherwise the
    id of the task it came from (with ``_i`` when one task gave several), by position when a
    batch gave one output per input, else its content id."""
    unnamed = [i for i, o in enumerate(outputs) if not o.task_id]
    if not unnamed:
        return
    for i in unnamed:
        out = outputs[i]
        if source or not inputs:
            out.task_id = out.get_deterministic_id() or out._content_id()
        elif len(inputs) == 1 and len(outputs) > 1:
            out._set_task_id(inputs[0].task_id, i)
        elif len(inputs) in (1, len(outputs)):
            out.task_id = inputs[0 if len(inputs) == 1 else i].task_id
        else:
            out.task_id = out._content_id()


def _partition_of(out: Task, inputs: list[Task]) -> str | None:
    parts = {t.partition for t in inputs}
    if len(parts) == 1:
        return next(iter(parts))
    for t in inputs:
        if out.task_id == t.task_id or out.task_id.startswith(f"{t.task_id}_"):
            return t.partition
    return inputs[0].partition if inputs else None


def _drain_histograms(stage: ProcessingStage) -> dict[str, Any] | None:
    """The score sketches the stage published since the last call (``drain_histograms``, see
    :class:`curator.run.stats.ScoreSketch`), if it publishes any."""
    drain = getattr(stage, "drain_histograms", None)
    return (drain() or None) if drain is not None else None


def _drain_counts(stage: ProcessingStage) -> dict[str, dict[str, int]] | None:
    """The counters the stage published since the last call (``publish_counts``)."""
    drain = getattr(stage, "drain_counts", None)
    return (drain() or None) if drain is not None else None


def invoke_stage(stage: ProcessingStage, tasks: list[Task], worker: str = "") -> StageCall:
    """Run ``stage.process_batch(tasks)`` with timing, rejected-record collection and
    partition/perf bookkeeping. Sets the stage up first (:func:`ensure_setup`) unless it
    already is in this process. Never raises: an exception (also one from ``setup()``) comes
    back as ``StageCall.error``."""
    start = time.perf_counter()
    items_in = sum(t.num_items for t in tasks)
    try:
        ensure_setup(stage, WorkerMetadata(worker_id=worker))
        outputs = stage.process_batch(tasks)
    except Exception:
        return _error_call(stage, start, items_in)
    return _finish_call(stage, tasks, outputs, start, items_in, worker)


def invoke_source(stage: ProcessingStage, task: Task, worker: str = "") -> Iterator[StageCall]:
    """:func:`invoke_stage` for a source stage's :meth:`~ProcessingStage.process_stream`: one
    call per chunk of outputs, made as the caller asks for the next (at least one call), and
    one more without outputs when the stream, after its last chunk, booked rejections or
    counters (a bad line at the end of a manifest). Never raises: a failure is the last call,
    with its ``error``."""
    start = time.perf_counter()
    try:
        ensure_setup(stage, WorkerMetadata(worker_id=worker))
        chunks = stage.process_stream(task)
        chunk = next(chunks, None)
    except Exception:
        yield _error_call(stage, start, task.num_items)
        return
    call = _finish_call(stage, [task], chunk or [], start, task.num_items, worker)
    while True:
        yield call
        if call.error is not None or chunk is None:
            return
        start = time.perf_counter()
        try:
            chunk = next(chunks, None)
        except Exception:
            yield _error_call(stage, start, 0)
            return
        if chunk is None:  # what the stream booked after its last chunk is drained too
            tail = _finish_call(stage, [task], [], start, 0, worker)
            if tail.rejected or tail.counters or tail.histograms:
                yield tail
            return
        call = _finish_call(stage, [task], chunk, start, 0, worker)


def _error_call(stage: ProcessingStage, start: float, items_in: int) -> StageCall:
    """The call of a stage that raised (in an ``except`` block): its traceback."""
    _drain_histograms(stage)  # a retry scores the task again
    _drain_counts(stage)  # … and counts it again
    getattr(stage, "_consume_custom_metrics", dict)()  # … and measures it again
    return StageCall([], stage.drain_rejected(), time.perf_counter() - start, items_in, 0,
                     error=traceback.format_exc(), peak_rss_mb=process_peak_rss_mb())


def _with_bytes_read(counters: dict[str, dict[str, int]] | None,
                     tasks: list[Task]) -> dict[str, dict[str, int]] | None:
    """``counters`` plus the input bytes of the source partitions ``tasks`` consumed: the run's
    overall progress (see :data:`~curator.run.stats.INPUT_BYTES_COUNTER`)."""
    read = sum(t.metadata.get(SOURCE_BYTES_KEY, 0) for t in tasks if isinstance(t, FileGroupTask))
    if not read:
        return counters
    return {**(counters or {}), INPUT_BYTES_COUNTER: {"read": read}}


def _finish_call(stage: ProcessingStage, tasks: list[Task], outputs: Any, start: float,
                 items_in: int, worker: str) -> StageCall:
    """The call of a stage that returned ``outputs`` for ``tasks``: checked, and each output
    given its partition and the stage's perf record."""
    if outputs is None:
        outputs = []
    elif isinstance(outputs, Task):
        outputs = [outputs]
    busy = time.perf_counter() - start
    histograms = _drain_histograms(stage)
    counters = _with_bytes_read(_drain_counts(stage), tasks)
    bad = [o for o in outputs if not isinstance(o, Task)]
    if bad:
        return StageCall([], stage.drain_rejected(), busy, items_in, 0,
                         error=f"{stage.name}.process returned {type(bad[0]).__name__}, expected "
                               f"a Task, a list of Tasks or None")
    source = tasks and isinstance(tasks[0], EmptyTask)
    _name_unnamed(outputs, tasks, bool(source))
    metrics = stage._consume_custom_metrics() if hasattr(stage, "_consume_custom_metrics") else {}
    items_out = 0
    per_task = busy / max(len(outputs), 1)
    for out in outputs:
        if source:
            out.metadata.setdefault("partition", out.task_id)
        elif "partition" not in out.metadata:
            part = _partition_of(out, tasks)
            if part is not None:
                out.metadata["partition"] = part
        n = out.num_items
        items_out += n
        out.stage_perf.append(StagePerf(stage.name, per_task, items_in, n, worker,
                                        custom_metrics=metrics))
    return StageCall(outputs, stage.drain_rejected(), busy, items_in, items_out,
                     histograms=histograms, counters=counters,
                     peak_rss_mb=process_peak_rss_mb())


def _outside_curator() -> int:
    """The ``stacklevel`` that points a warning of the caller at the first frame outside
    ``curator`` (the user's line, not a constructor several classes deep)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(root):
        frame, level = frame.f_back, level + 1
    return level


class Run:
    """One run as an engine sees it: the stages, the run's context (``ctx.max_retries``),
    statistics, tracker and outputs, the number of initial tasks, the session's ``resources``,
    the dead-worker policy, and :meth:`book`, the one path by which outcomes reach the run's
    record (thread-safe)."""

    def __init__(self, stages: list[ProcessingStage], ctx: RunContext, stats: RunStats,
                 tracker: PartitionTracker, outputs: OutputCollector, n_initial: int = 1,
                 resources: dict[str, float] | None = None) -> None:
        from curator.executors.retry import DeadWorkerPolicy

        self.stages, self.ctx, self.stats, self.tracker = stages, ctx, stats, tracker
        self.outputs, self.n_initial = outputs, n_initial
        self.resources = resources or {}
        self.names = [s.name for s in stages]
        self.deaths = DeadWorkerPolicy(ctx.max_retries)
        self._lock = threading.Lock()

    def book(self, outcome: Outcome) -> None:
        """Book ``outcome`` (:func:`curator.run.outcome.book`: the sink, statistics and tracker
        lock what they share); the run's outputs it carries go to ``outputs``."""
        outputs = book(outcome, self.names, self.ctx, self.stats, self.tracker)
        if outputs:
            with self._lock:
                self.outputs.add(outputs)


class BaseExecutor(ABC):
    """Runs a built list of stages: :meth:`execute`, the skeleton. An engine implements
    :meth:`run_groups` (and, with a cluster, :meth:`session` and :meth:`setup_on_nodes`).

    ``config`` holds executor-specific options, typed by the executor's ``config_class``
    (:mod:`curator.executors.config`): ``self.cfg`` is that dataclass (defaults filled in,
    values converted as a spec's are: ``LocalExecutor(num_workers="4")`` gets 4), ``self.config``
    the converted keys as given; an unknown key is ignored with a warning naming it.
    """

    name: ClassVar[str] = "executor"
    config_class: ClassVar[type[ExecutorConfig]] = ExecutorConfig

    __new__, __signature__ = typed_new, init_signature  # types checked as in specs

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        label = type(self).__name__
        self.config = self.config_class.convert(label, {**(config or {}), **kwargs})
        self.warn_unknown_keys(self.config_class.keys())
        self.cfg = self.config_class.from_dict(label, self.config)

    def warn_unknown_keys(self, known: set[str] | frozenset[str]) -> None:
        """Warn, naming them, about config keys outside ``known``: they are ignored, as on
        NeMo Curator (an error would break configs shared between executors)."""
        unknown = sorted(set(self.config) - set(known))
        if unknown:
            warnings.warn(f"{type(self).__name__}: unknown config keys {unknown} are ignored; "
                          f"known: {sorted(known)}", UserWarning, stacklevel=_outside_curator())

    counts_partitions: ClassVar[bool] = False
    """Whether the run's tracker counts partitions without a checkpoint too (an engine that
    re-runs unfinished partitions after a lost worker needs to know them)."""

    # -- the skeleton: every executor runs this ------------------------------------------------
    def execute(self, stages: list[ProcessingStage], initial_tasks: list[Task] | None = None,
                *, context: RunContext | None = None) -> RunResult:
        """Run ``stages`` over ``initial_tasks`` (default: the empty root task) and return the
        last stage's outputs: the one skeleton of every executor.

        It owns the run's context (``max_retries``), statistics, tracker, progress and result;
        runs ``setup_on_node`` through :meth:`setup_on_nodes`; runs the source stage (the one
        given the empty root task) here on the driver, window by window
        (:func:`~curator.executors.retry.source_windows`); and hands the other stages, as stage
        groups, to the engine inside its :meth:`session`: :meth:`run_groups`.
        """
        from curator.executors.retry import source_windows

        ctx = context or RunContext()
        if self.cfg.max_retries is not None:
            ctx.max_retries = int(self.cfg.max_retries)
        initial = self.initial(initial_tasks)
        stats = RunStats.for_stages([s.name for s in stages], executor=self.name)
        first = 1 if isinstance(initial[0], EmptyTask) else 0
        groups = self.groups(stages[first:], first)
        with self.session(stages) as resources:
            run = Run(stages, ctx, stats, ctx.tracker(len(stages), count=self.counts_partitions),
                      OutputCollector(self.cfg.collect_outputs), len(initial), resources)
            self.setup_on_nodes(stages[first:], stages[0] if first else None)
            windows = source_windows(run, initial, self.source_window())
            start = time.perf_counter()
            try:
                with (ProgressReporter(stats, ctx.progress_interval) if ctx.progress
                      else contextlib.nullcontext()):
                    if groups:
                        self.run_groups(run, groups, windows)
                    else:  # a lone source: ``run.book`` kept its outputs
                        for _ in windows:
                            pass
            finally:
                stats.wall_s = time.perf_counter() - start
        return self.finish(ctx, stats, run.outputs)

    # -- what an engine implements -------------------------------------------------------------
    @abstractmethod
    def run_groups(self, run: Run, groups: list[StageGroup],
                   windows: Iterator[list[Task]]) -> None:
        """Run ``groups`` (consecutive stages fused by :meth:`groups`; a lone stage is a group
        of one) over the tasks of every window as it comes (the source's partitions, or the
        initial tasks), booking every outcome with ``run.book`` (where the outputs of the
        pipeline's last stage are kept). The engine's one method; an error stops the run."""

    def session(self, stages: list[ProcessingStage]) -> contextlib.AbstractContextManager[
            dict[str, float]]:
        """The engine's resources for the run (a cluster connection), held while it runs;
        yields what ``run.resources`` holds (nothing here: the engine runs in this process)."""
        return contextlib.nullcontext({})

    def setup_on_nodes(self, stages: list[ProcessingStage],
                       source: ProcessingStage | None) -> None:
        """Run ``setup_on_node`` once on every node that runs ``stages``, and the source's (it
        runs here) on this node, before any worker starts; here: one node, once each."""
        for stage in [source, *stages] if source is not None else stages:
            stage.setup_on_node(NodeInfo(node_id=LOCAL_NODE), WorkerMetadata())

    def groups(self, stages: list[ProcessingStage], first: int = 0) -> list[StageGroup]:
        """The units of scheduling of ``stages`` (pipeline indices from ``first``): runs of
        consecutive stages with equal resources fused (``fuse_stages``), else one each."""
        from curator.executors.fusion import group_stages

        return group_stages(stages, first, fuse=bool(getattr(self.cfg, "fuse_stages", True)))

    def source_window(self) -> int:
        """The most partitions taken from the source before they run (here: every chunk runs
        as soon as it is listed)."""
        return 1

    @staticmethod
    def initial(initial_tasks: list[Task] | None) -> list[Task]:
        return list(initial_tasks) if initial_tasks else [EMPTY_TASK]

    @staticmethod
    def finish(context: RunContext, stats: RunStats,
               outputs: list[Task] | OutputCollector) -> RunResult:
        """Wrap outputs (a list, or an :class:`OutputCollector`), fill in rejected counts and
        print the summary if asked."""
        for s in stats.stages:
            s.rejected = context.sink.counts.get(s.name, 0) - s.failed_tasks
        stats.peak_rss_mb = peak_rss_mb()
        if isinstance(outputs, OutputCollector):
            result = RunResult(outputs.tasks, stats, context.sink, num_outputs=outputs.count,
                               output_paths=outputs.paths)
        else:
            result = RunResult(outputs, stats, context.sink)
        if context.checkpoint is not None:
            tracker = context._tracker
            result.resumed = (len(context.skipped_partitions),
                              len(tracker.seen) if tracker is not None else 0)
        if context.summary:
            print(result.summary(), file=sys.stderr, flush=True)
        return result
