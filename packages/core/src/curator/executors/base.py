"""The executor interface and the bookkeeping every executor shares.

An executor's whole contract with the run's bookkeeping (sink, statistics, checkpoint) is:

* ``tracker = ctx.tracker(len(stages))`` — the run's :class:`~curator.checkpoint.PartitionTracker`;
  ``tracker.seed(task.partition, task.task_id)`` for each task handed to the first stage it runs
  (after ``ctx.skip_done`` dropped the partitions an earlier run finished);
* for every batch after its retries (:func:`curator.executors.retry.run_with_retries`), build an
  :class:`~curator.executors.retry.OutcomeReport` (``outcome_report(index, outcome, ...)``) and
  hand it to :func:`curator.executors.retry.apply_report` on the driver: it writes rejected
  records and failed tasks (whole) to the sink, updates the statistics and tells the tracker,
  which marks a partition done only when everything descending from it succeeded;
* return ``self.finish(ctx, stats, outputs)``: the :class:`RunResult` (``ok``, ``failed``).

Three outcomes are never confused: records **rejected** by design (the run is still ok), tasks
that **failed** after their retries (kept whole in the sink; the run is not ok) and the rest.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from curator.checkpoint import CheckpointStore, PartitionTracker
from curator.errors import CuratorError, PipelineFailedError
from curator.executors.stats import RunStats, peak_rss_mb, process_peak_rss_mb
from curator.params import init_signature, typed_new
from curator.rejected import FailedTask, RejectedRecord, RejectedSink
from curator.stages.base import ProcessingStage
from curator.stages.file_partitioning import INPUT_BYTES_COUNTER, SOURCE_BYTES_KEY
from curator.stages.lifecycle import ensure_setup, release_stage
from curator.tasks import EMPTY_TASK, EmptyTask, FileGroupTask, StagePerf, Task

__all__ = ["BaseExecutor", "RunContext", "RunResult", "OutputCollector", "output_paths",
           "StageCall", "invoke_stage", "invoke_source", "ensure_setup", "release_stage",
           "failed_task_record", "env_flag", "SourceStageError", "PipelineFailedError",
           "CONFIG_TYPES"]


_WORKERS = int | dict[str, int] | None  # one count, or {stage name: count}
CONFIG_TYPES: dict[str, Any] = {
    "num_workers": _WORKERS, "max_workers": _WORKERS, "min_workers": _WORKERS,
    "max_retries": int, "queue_size": int | None, "queue_bytes": int | None,
    "cpus": int | float | None, "collect_outputs": bool, "autoscale": bool, "streaming": bool,
    "ignore_head_node": bool,
    "address": str | None, "num_cpus": int | float | None, "num_gpus": int | float | None,
    "object_store_memory": int | None, "ray_timeout_s": float, "setup_timeout_s": float,
    "scale_interval_s": float, "gpu_memory_gb_per_gpu": float | None,
    "source_window": int | None, "batches_in_flight": int, "max_worker_restarts": int,
    "tasks_per_block": int | None, "execution_mode": str, "logging_interval": float,
    "autoscale_interval_s": float, "cpu_allocation_percentage": float,
    "log_worker_allocation_layout": bool}
"""Types of executors' config options: converted and checked when an executor is constructed,
as a spec's values are (``LocalExecutor(num_workers="4")`` gets 4; ``"many"`` is an error
naming the executor, the option, the expected type and the value)."""


class SourceStageError(CuratorError):
    """The first stage could not produce any task (missing input path, bad pattern)."""


def env_flag(name: str) -> bool | None:
    raw = os.environ.get(name)
    return None if raw is None else raw.strip().lower() in ("1", "true", "yes", "on")


@dataclass
class RunContext:
    """What a run needs beyond its stages: sinks, checkpoint, retry policy, statistics.

    Parameters:
        pipeline_name: shown in progress and the summary.
        rejected_dir: where rejected records and failed tasks are written (JSONL); ``None``
            keeps them in memory on the result and warns in the summary.
        checkpoint_dir: enables resumable runs (finished source partitions are skipped).
        max_retries: how many times a failing task is retried before it is rejected.
        progress: print live progress (default: when stderr is a terminal, or CURATOR_PROGRESS=1).
        summary: print the summary table at the end (default: on, CURATOR_SUMMARY=0 turns off).
    """

    pipeline_name: str = "pipeline"
    rejected_dir: str | None = None
    checkpoint_dir: str | None = None
    max_retries: int = 1
    progress: bool | None = None
    progress_interval: float = 5.0
    summary: bool | None = None
    sink: RejectedSink = field(init=False)
    checkpoint: CheckpointStore | None = field(init=False)
    #: partitions an earlier run finished, dropped by :meth:`skip_done` (the summary's "resumed")
    skipped_partitions: set[str] = field(init=False, default_factory=set)
    _tracker: PartitionTracker | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self.sink = RejectedSink(self.rejected_dir)
        self.checkpoint = CheckpointStore(self.checkpoint_dir) if self.checkpoint_dir else None
        if self.progress is None:
            flag = env_flag("CURATOR_PROGRESS")
            self.progress = flag if flag is not None else sys.stderr.isatty()
        if self.summary is None:
            flag = env_flag("CURATOR_SUMMARY")
            self.summary = True if flag is None else flag

    def tracker(self, n_stages: int, count: bool = False) -> PartitionTracker:
        """The run's partition tracker (it marks partitions done in the checkpoint, if any;
        ``count``: it counts them even without one)."""
        self._tracker = PartitionTracker(self.checkpoint, n_stages, count)
        return self._tracker

    def skip_done(self, tasks: list[Task]) -> tuple[list[Task], int]:
        """Drop source tasks whose partition an earlier run finished."""
        if self.checkpoint is None:
            return tasks, 0
        for size in {t.metadata.get("block_size") for t in tasks}:
            self.checkpoint.check_block_size(size)
        done = self.checkpoint.done()
        kept = []
        for t in tasks:
            key = CheckpointStore.key(t.partition or t.task_id)
            if key in done:
                self.skipped_partitions.add(key)
            else:
                kept.append(t)
        return kept, len(tasks) - len(kept)


def output_paths(task: Task | None) -> list[str]:
    """The files a run output stands for: the paths of a ``FileGroupTask`` (what writers
    return), else none."""
    from curator.tasks import FileGroupTask

    return [str(p) for p in task.data] if isinstance(task, FileGroupTask) else []


def _paths_of(tasks: list[Task]) -> list[str]:
    return [p for t in tasks for p in output_paths(t)]


class OutputCollector:
    """The run's outputs as the driver sees them: counted, their :func:`output_paths` gathered,
    and the tasks themselves kept only with ``collect`` (executors' ``collect_outputs``).
    ``None`` stands for an output that was counted where it was made and not sent back."""

    def __init__(self, collect: bool = True) -> None:
        self.collect = collect
        self.tasks: list[Task] = []
        self.count = 0
        self.paths: list[str] = []

    @staticmethod
    def stub(task: Task | None) -> Task | None:
        """What a worker sends back for an output that is not collected: a path-only
        ``FileGroupTask`` when it stands for files, else ``None`` (just counted)."""
        from curator.tasks import FileGroupTask

        paths = output_paths(task)
        return (FileGroupTask(task_id=task.task_id, dataset_name=task.dataset_name, data=paths)
                if paths and task is not None else None)

    def add(self, tasks: list[Task | None]) -> None:
        """Count ``tasks`` (run outputs or their :meth:`stub`), keep them if collecting."""
        for task in tasks:
            self.count += 1
            self.paths.extend(output_paths(task))
            if self.collect and task is not None:
                self.tasks.append(task)


class RunResult(list):
    """The output tasks of a run (a list), with the run's ``stats`` and ``rejected`` sink.

    ``num_outputs`` and ``output_paths`` (the files the outputs stand for, see
    :func:`output_paths`) are always filled in; the list itself is empty when the executor ran
    with ``collect_outputs=False`` (large runs: the driver does not hold every output task).

    ``ok`` is false when any task failed after its retries; ``failed`` lists those tasks
    (:class:`~curator.rejected.FailedTask`). Records rejected by design (filtered, malformed
    input) are counted in ``rejected`` and leave the run ok. :meth:`raise_on_failure` raises
    :class:`PipelineFailedError` naming the failed tasks.
    """

    stats: RunStats
    rejected: RejectedSink

    def __init__(self, tasks: list[Task], stats: RunStats, rejected: RejectedSink, *,
                 num_outputs: int | None = None, output_paths: list[str] | None = None) -> None:
        super().__init__(tasks)
        self.stats = stats
        self.rejected = rejected
        self.num_outputs = len(tasks) if num_outputs is None else num_outputs
        self.output_paths = _paths_of(tasks) if output_paths is None else output_paths
        self.spec: dict[str, Any] | None = None  # what ran; Pipeline.run fills it in
        #: ``(partitions an earlier run finished, partitions this run redid)`` when resuming
        self.resumed: tuple[int, int] | None = None

    def report(self, spec: dict[str, Any] | None = None) -> dict[str, Any]:
        """The run report (a JSON-safe dict; schema in ``docs/run-report.md``)."""
        from curator.report import build_report

        return build_report(self, spec)

    @property
    def failed(self) -> list[FailedTask]:
        """Tasks that failed after their retries (kept whole in the rejected sink)."""
        return list(self.rejected.failed)

    @property
    def ok(self) -> bool:
        """Whether no task failed (records rejected by design do not count)."""
        return not self.rejected.failed

    def raise_on_failure(self) -> RunResult:
        """Raise :class:`PipelineFailedError` when a task failed; returns the result otherwise."""
        if not self.ok:
            raise PipelineFailedError(self)
        return self

    def summary(self, cli: bool = False) -> str:
        """The summary table, then one line each for records rejected by design, tasks that
        failed (the run is not ok) and a resumed run's partitions; ``cli`` names command-line
        flags (``--rejected-dir``) in hints instead of Python parameters."""
        lines = [self.stats.format_table()]
        failed = self.failed
        per_stage = dict(self.rejected.counts)
        for f in failed:  # the sink counts a failed task once in its stage: not a record
            per_stage[f.stage] = per_stage.get(f.stage, 0) - 1
        per_stage = {k: v for k, v in per_stage.items() if v > 0}
        records = sum(per_stage.values())
        if records:
            how = ("pass --rejected-dir to write them" if cli else
                   "kept in memory (result.rejected.records); pass rejected_dir= to write them")
            where = f"written to {self.rejected.path}" if self.rejected.path else how
            per = ", ".join(f"{k}: {v}" for k, v in per_stage.items())
            lines.append(f"rejected {records} record(s) ({per}), {where}")
        if failed:
            where = (f"kept whole in {self.rejected.path} for replay" if self.rejected.path
                     else "kept whole in memory (result.failed) for replay")
            lines.append(f"NOT OK: failed {len(failed)} task(s) after their retries, {where}: "
                         + "; ".join(map(str, failed[:3])))
        if self.resumed is not None and self.resumed[0]:
            lines.append(f"resumed: {self.resumed[0]} partitions already done, "
                         f"{self.resumed[1]} redone")
        return "\n".join(lines)


@dataclass
class StageCall:
    """The result of running a stage on a batch of tasks in some worker."""

    outputs: list[Task]
    rejected: list[RejectedRecord]
    busy_s: float
    items_in: int
    items_out: int
    error: str | None = None
    histograms: dict[str, Any] | None = None  # score sketches the stage published (reports)
    counters: dict[str, dict[str, int]] | None = None  # ``publish_counts`` of the stage (reports)
    peak_rss_mb: float = 0.0  # peak resident memory of the worker process that ran the call


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
    :class:`curator.executors.stats.ScoreSketch`), if it publishes any."""
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
        ensure_setup(stage, {"worker": worker})
        outputs = stage.process_batch(tasks)
    except Exception:
        return _error_call(stage, start, items_in)
    return _finish_call(stage, tasks, outputs, start, items_in, worker)


def invoke_source(stage: ProcessingStage, task: Task, worker: str = "") -> Iterator[StageCall]:
    """:func:`invoke_stage` for a source stage's :meth:`~ProcessingStage.process_stream`: one
    call per chunk of outputs, made as the caller asks for the next (at least one call). Never
    raises: a failure is the last call, with its ``error``."""
    start = time.perf_counter()
    try:
        ensure_setup(stage, {"worker": worker})
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
        if chunk is None:
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
    overall progress (see :data:`~curator.stages.file_partitioning.INPUT_BYTES_COUNTER`)."""
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


def failed_task_record(stage: ProcessingStage | str, task: Task, error: str) -> RejectedRecord:
    """The rejected-tasks entry for a task that kept failing: its identity, source and traceback
    (the sink keeps the task itself beside it, see :meth:`RejectedSink.add_failed`)."""
    name = stage if isinstance(stage, str) else stage.name
    return RejectedRecord(
        stage=name, reason="task failed after retries", task_id=task.task_id,
        source=",".join(map(str, task.metadata.get("source_files", [])[:5])),
        error=error, kind="task",
        record={"task_type": f"{type(task).__module__}.{type(task).__qualname__}",
                "num_items": task.num_items, "partition": task.partition})


def _outside_curator() -> int:
    """The ``stacklevel`` that points a warning of the caller at the first frame outside
    ``curator`` (the user's line, not a constructor several classes deep)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(root):
        frame, level = frame.f_back, level + 1
    return level


class BaseExecutor(ABC):
    """Runs a built list of stages. Subclasses implement :meth:`execute`.

    ``config`` holds executor-specific options (documented by each executor).
    """

    name: ClassVar[str] = "executor"

    __new__, __signature__ = typed_new, init_signature  # types checked as in specs

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        from curator.params import check_values

        self.config = check_values(type(self).__name__, dict(config or {}), CONFIG_TYPES)

    def warn_unknown_keys(self, known: set[str] | frozenset[str]) -> None:
        """Warn, naming them, about config keys outside ``known``: they are ignored, as on
        NeMo Curator (an error would break configs shared between executors)."""
        unknown = sorted(set(self.config) - set(known))
        if unknown:
            warnings.warn(f"{type(self).__name__}: unknown config keys {unknown} are ignored; "
                          f"known: {sorted(known)}", UserWarning, stacklevel=_outside_curator())

    @abstractmethod
    def execute(self, stages: list[ProcessingStage], initial_tasks: list[Task] | None = None,
                *, context: RunContext | None = None) -> RunResult:
        """Run ``stages`` over ``initial_tasks`` (default: the empty root task) and return the
        last stage's outputs."""

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
