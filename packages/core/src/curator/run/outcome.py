"""The record of a run's work, three names: a :class:`StageCall` (one call of a stage on a
batch, in some worker), an :class:`Outcome` (a batch after its retries, as the driver books it)
and :func:`book` (the driver's one bookkeeping path for every executor)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from curator.run.context import RunContext
from curator.run.sink import RejectedRecord
from curator.run.stats import RunStats
from curator.run.tracker import PartitionTracker
from curator.tasks import Task

if TYPE_CHECKING:
    from curator.stages.base import ProcessingStage

__all__ = ["StageCall", "Outcome", "book", "failed_task_record"]


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


@dataclass
class Outcome:
    """One batch of stage ``index`` after its retries (or one task of a split batch), as the
    driver books it (:func:`book`): statistics, the rejected sink, the checkpoint. Built where
    the stage ran (:meth:`of`).

    ``consumed`` / ``produced`` are ``(partition, task_id)`` pairs; ``failed`` is the failed-task
    entry and ``failed_task`` the task itself (kept whole in the sink) when the task failed for
    good. ``call.outputs`` holds the output tasks until :meth:`lean` drops them (they travel to
    the driver only when they are the run's outputs).
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

    @classmethod
    def of(cls, index: int, inputs: list[Task], call: StageCall, retries: int = 0,
           failed: RejectedRecord | None = None, restarts: int = 0) -> Outcome:
        """The outcome of ``call`` on ``inputs`` (a failed one keeps ``inputs[0]`` whole)."""
        return cls(index=index, tasks_in=len(inputs), call=call, retries=retries,
                   restarts=restarts, failed=failed,
                   failed_task=inputs[0] if failed is not None else None,
                   consumed=[(t.partition, t.task_id) for t in inputs],
                   produced=[(t.partition, t.task_id) for t in call.outputs])

    def lean(self) -> Outcome:
        """This outcome without its output tasks (their partition and id stay in
        ``produced``): what travels to the driver for a stage that is not the last."""
        return replace(self, call=replace(self.call, outputs=[None] * len(self.call.outputs)))


def book(o: Outcome, stage_names: list[str], ctx: RunContext, stats: RunStats,
         tracker: PartitionTracker) -> list[Task]:
    """The driver's bookkeeping of one outcome: the rejected sink (a failed task whole), the
    statistics, then the tracker (so a partition is marked done only after its rejected
    records and failed tasks are on disk). Returns the run outputs it carries (those of the
    pipeline's last stage)."""
    i, call = o.index, o.call
    by_task: dict[str, list[RejectedRecord]] = defaultdict(list)
    for rec in call.rejected:
        by_task[rec.task_id].append(rec)
    for tid, recs in by_task.items():
        ctx.sink.add(stage_names[i], tid, recs)
    if o.failed is not None:
        stats.bump(i, "failed_tasks")
        ctx.sink.add_failed(o.failed, o.failed_task)
    for key, n in (("retries", o.retries), ("worker_restarts", o.restarts),
                   ("skipped", o.skipped)):
        if n:
            stats.bump(i, key, n)
    stats.count_reasons(i, call.rejected)
    stats.merge_histograms(i, call.histograms)
    stats.merge_counters(i, call.counters)
    stats.note_peak_rss(i, call.peak_rss_mb)
    stats.record(i, tasks_in=o.tasks_in, tasks_out=len(call.outputs), items_in=call.items_in,
                 items_out=call.items_out, busy_s=call.busy_s)
    tracker.report(i, o.consumed, o.produced, failed=o.failed is not None)
    return call.outputs if i + 1 == len(stage_names) else []
