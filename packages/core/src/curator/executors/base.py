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
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from curator.checkpoint import CheckpointStore, PartitionTracker
from curator.errors import CuratorError
from curator.executors.stats import RunStats, peak_rss_mb, process_peak_rss_mb
from curator.rejected import FailedTask, RejectedRecord, RejectedSink
from curator.stages.base import ProcessingStage
from curator.stages.lifecycle import ensure_setup, release_stage
from curator.tasks import EMPTY_TASK, EmptyTask, StagePerf, Task

__all__ = ["BaseExecutor", "RunContext", "RunResult", "OutputCollector", "output_paths",
           "StageCall", "invoke_stage", "invoke_source", "ensure_setup", "release_stage",
           "failed_task_record", "env_flag", "SourceStageError", "PipelineFailedError"]


class SourceStageError(CuratorError):
    """The first stage could not produce any task (missing input path, bad pattern)."""


class PipelineFailedError(CuratorError):
    """Tasks failed for good during a run (``run(..., raise_on_failure=True)``); ``result`` is
    the run's :class:`RunResult` and ``failed`` its failed tasks."""

    def __init__(self, result: RunResult) -> None:
        self.result = result
        self.failed = list(result.failed)
        shown = "\n  ".join(str(f) for f in self.failed[:10])
        more = f"\n  … and {len(self.failed) - 10} more" if len(self.failed) > 10 else ""
        where = (f"they are kept whole in {result.rejected.path}; fix the cause and run "
                 f"`curator replay {result.rejected.path}` (or Pipeline.replay)"
                 if result.rejected.path else "they are kept in result.failed; pass "
                 "rejected_dir= to keep them on disk for replay")
        super().__init__(f"{len(self.failed)} task(s) failed after their retries:\n  "
                         f"{shown}{more}\n{where}")


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
        return PartitionTracker(self.checkpoint, n_stages, count)

    def skip_done(self, tasks: list[Task]) -> tuple[list[Task], int]:
        """Drop source tasks whose partition an earlier run finished."""
        if self.checkpoint is None:
            return tasks, 0
        done = self.checkpoint.done()
        kept = [t for t in tasks if CheckpointStore.key(t.partition or t.task_id) not in done]
        return kept, len(tasks) - len(kept)


def output_paths(task: Task | None) -> list[str]:
    """The files a run output stands for: the paths of a ``FileGroupTask`` (what writers
    return), else none."""
    from curator.tasks import FileGroupTask  # noqa: PLC0415

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
        from curator.tasks import FileGroupTask  # noqa: PLC0415

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

    def report(self, spec: dict[str, Any] | None = None) -> dict[str, Any]:
        """The run report (a JSON-safe dict; schema in ``docs/run-report.md``)."""
        from curator.report import build_report  # noqa: PLC0415

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
        """The summary table and rejected/failed lines; ``cli`` names command-line flags
        (``--rejected-dir``) in hints instead of Python parameters."""
        lines = [self.stats.format_table()]
        total = self.rejected.total
        if total:
            how = ("pass --rejected-dir to write them" if cli else
                   "kept in memory (result.rejected.records); pass rejected_dir= to write them")
            where = f"written to {self.rejected.path}" if self.rejected.path else how
            per = ", ".join(f"{k}: {v}" for k, v in self.rejected.counts.items())
            lines.append(f"rejected {total} records/tasks ({per}), {where}")
        if self.failed:
            lines.append(f"NOT OK: {len(self.failed)} task(s) failed after their retries "
                         f"(kept whole for replay): " + "; ".join(map(str, self.failed[:3])))
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
    except Exception:  # noqa: BLE001 - reported to the executor, which retries or rejects
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
    except Exception:  # noqa: BLE001 - reported to the executor
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
        except Exception:  # noqa: BLE001
            yield _error_call(stage, start, 0)
            return
        if chunk is None:
            return
        call = _finish_call(stage, [task], chunk, start, 0, worker)


def _error_call(stage: ProcessingStage, start: float, items_in: int) -> StageCall:
    """The call of a stage that raised (in an ``except`` block): its traceback."""
    _drain_histograms(stage)  # a retry scores the task again
    _drain_counts(stage)  # … and counts it again
    return StageCall([], stage.drain_rejected(), time.perf_counter() - start, items_in, 0,
                     error=traceback.format_exc(), peak_rss_mb=process_peak_rss_mb())


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
    counters = _drain_counts(stage)
    bad = [o for o in outputs if not isinstance(o, Task)]
    if bad:
        return StageCall([], stage.drain_rejected(), busy, items_in, 0,
                         error=f"{stage.name}.process returned {type(bad[0]).__name__}, expected "
                               f"a Task, a list of Tasks or None")
    source = tasks and isinstance(tasks[0], EmptyTask)
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
        out.stage_perf.append(StagePerf(stage.name, per_task, items_in, n, worker))
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


class BaseExecutor(ABC):
    """Runs a built list of stages. Subclasses implement :meth:`execute`.

    ``config`` holds executor-specific options (documented by each executor).
    """

    name: ClassVar[str] = "executor"

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.config = dict(config or {})

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
        if context.summary:
            print(result.summary(), file=sys.stderr, flush=True)
        return result
