"""The retry policy and driver-side bookkeeping every executor shares."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from curator.checkpoint import PartitionTracker
from curator.executors.base import (
    RunContext,
    SourceStageError,
    StageCall,
    failed_task_record,
    invoke_source,
)
from curator.executors.stats import RunStats
from curator.rejected import RejectedRecord
from curator.stages.base import ProcessingStage
from curator.tasks import Task

__all__ = ["BatchOutcome", "OutcomeReport", "run_with_retries", "source_outcomes",
           "apply_outcome", "outcome_report", "apply_report", "worker_death_report"]


@dataclass
class BatchOutcome:
    """One batch (or one task of a split batch) after its retries."""

    inputs: list[Task]
    call: StageCall
    retries: int = 0
    failed: RejectedRecord | None = None
    restarts: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


def run_with_retries(stage_name: str, call: Callable[[list[Task]], StageCall],
                     batch: list[Task], max_retries: int) -> list[BatchOutcome]:
    """Run ``call(batch)``; on error split the batch and retry each task ``max_retries`` times,
    then turn a task that still fails into a failed-task record (same policy as the local
    executor)."""
    failures = 0
    retries = 0
    while True:
        result = call(batch)
        if result.error is None:
            return [BatchOutcome(batch, result, retries)]
        if len(batch) > 1:
            out = [o for t in batch for o in run_with_retries(stage_name, call, [t], max_retries)]
            if out:
                out[0].retries += retries
            return out
        failures += 1
        if failures > max_retries:
            rec = failed_task_record(stage_name, batch[0], result.error)
            empty = StageCall([], result.rejected, result.busy_s, result.items_in, 0,
                              peak_rss_mb=result.peak_rss_mb)
            return [BatchOutcome(batch, empty, retries, failed=rec)]
        retries += 1


def source_outcomes(stage: ProcessingStage, task: Task, max_retries: int,
                    worker: str = "driver") -> Iterator[BatchOutcome]:
    """The source stage's outcomes chunk by chunk (:func:`invoke_source`), each handed on
    before the next chunk is listed. A failure before the first chunk is retried like any
    batch; once chunks are handed on they cannot be taken back, so a later failure, or one
    that outlasts the retries, raises :class:`SourceStageError` (the partitions that finish
    are checkpointed: a resume lists again and skips them). The first outcome consumes
    ``task``; the others consume nothing."""
    for attempt in range(max_retries + 1):
        handed_on = 0
        for call in invoke_source(stage, task, worker):
            if call.error is None:
                yield BatchOutcome([] if handed_on else [task], call,
                                   0 if handed_on else attempt)
                handed_on += 1
                continue
            if handed_on or attempt == max_retries:
                after = (f" after handing on {handed_on} chunk(s) of partitions (those run; a "
                         f"resume lists again and skips the ones that finished)"
                         if handed_on else ", so the pipeline has no input")
                raise SourceStageError(f"source stage {stage.name!r} failed{after}:\n"
                                       f"{call.error}")
            break
        else:
            return


@dataclass
class OutcomeReport:
    """What the driver needs to know about one outcome of stage ``index`` (statistics, the
    rejected sink, the checkpoint): built where the stage ran, booked by :func:`apply_report`.

    ``consumed`` / ``produced`` are ``(partition, task_id)`` pairs; ``failed`` is the failed-task
    entry and ``failed_task`` the task itself (kept whole in the sink) when the task failed for
    good. ``call.outputs`` holds the output tasks only when they are the run's outputs.
    """

    index: int
    tasks_in: int
    call: StageCall
    consumed: list[tuple[str | None, str]]
    produced: list[tuple[str | None, str]]
    retries: int = 0
    restarts: int = 0
    failed: RejectedRecord | None = None
    failed_task: Task | None = None
    skipped: int = 0


def outcome_report(index: int, o: BatchOutcome, keep_outputs: bool) -> OutcomeReport:
    """The driver's view of one outcome of stage ``index``; the output tasks themselves only
    with ``keep_outputs``, otherwise just their (partition, task id)."""
    call = o.call if keep_outputs else replace(o.call, outputs=[None] * len(o.call.outputs))
    return OutcomeReport(
        index=index, tasks_in=len(o.inputs), call=call, retries=o.retries, restarts=o.restarts,
        failed=o.failed, failed_task=o.inputs[0] if o.failed is not None else None,
        consumed=[(t.partition, t.task_id) for t in o.inputs],
        produced=[(t.partition, t.task_id) for t in o.call.outputs])


def worker_death_report(index: int, stage: ProcessingStage | str, task: Task, deaths: int,
                        error: str) -> OutcomeReport:
    """The dead-worker policy's last word, the same on every executor: a batch whose worker
    process died is split and each task retried alone; a task that has killed its worker
    ``deaths`` times (beyond the limit) is kept whole in the rejected sink by the group's first
    stage (pipeline ``index``), and the run goes on, not ok."""
    failed = BatchOutcome([task], StageCall([], [], 0.0, task.num_items, 0), retries=deaths - 1,
                          restarts=deaths, failed=failed_task_record(stage, task, error))
    return outcome_report(index, failed, keep_outputs=False)


def apply_report(rep: OutcomeReport, stage_names: list[str], ctx: RunContext, stats: RunStats,
                 tracker: PartitionTracker) -> list[Task]:
    """Driver-side bookkeeping of one report (sink, statistics, then the tracker, so a
    partition is marked done only after its rejected records and failed tasks are on disk);
    returns the run outputs it carries (those of the last stage)."""
    i = rep.index
    apply_outcome(ctx, stats, i, stage_names[i], rep.tasks_in, rep.call, retries=rep.retries,
                  failed=rep.failed, failed_task=rep.failed_task, restarts=rep.restarts,
                  skipped=rep.skipped)
    tracker.report(i, rep.consumed, rep.produced, failed=rep.failed is not None)
    return rep.call.outputs if i + 1 == len(stage_names) else []


def apply_outcome(ctx: RunContext, stats: RunStats, index: int, stage_name: str,
                  tasks_in: int, call: StageCall, retries: int = 0,
                  failed: RejectedRecord | None = None, failed_task: Task | None = None,
                  restarts: int = 0, skipped: int = 0) -> None:
    """Driver-side bookkeeping of one outcome: rejected sink (a failed task whole) and
    statistics."""
    by_task: dict[str, list[RejectedRecord]] = defaultdict(list)
    for rec in call.rejected:
        by_task[rec.task_id].append(rec)
    for tid, recs in by_task.items():
        ctx.sink.add(stage_name, tid, recs)
    if failed is not None:
        stats.bump(index, "failed_tasks")
        ctx.sink.add_failed(failed, failed_task)
    if retries:
        stats.bump(index, "retries", retries)
    if restarts:
        stats.bump(index, "worker_restarts", restarts)
    if skipped:
        stats.bump(index, "skipped", skipped)
    stats.count_reasons(index, call.rejected)
    stats.merge_histograms(index, call.histograms)
    stats.merge_counters(index, call.counters)
    stats.note_peak_rss(index, call.peak_rss_mb)
    stats.record(index, tasks_in=tasks_in, tasks_out=len(call.outputs), items_in=call.items_in,
                 items_out=call.items_out, busy_s=call.busy_s)
