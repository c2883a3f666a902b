"""The retry policy and driver-side bookkeeping every executor shares."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from curator.executors.base import RunContext, StageCall, failed_task_record
from curator.executors.stats import RunStats
from curator.rejected import RejectedRecord
from curator.tasks import Task

__all__ = ["BatchOutcome", "run_with_retries", "apply_outcome"]


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
            empty = StageCall([], result.rejected, result.busy_s, result.items_in, 0)
            return [BatchOutcome(batch, empty, retries, failed=rec)]
        retries += 1


def apply_outcome(ctx: RunContext, stats: RunStats, index: int, stage_name: str,
                  tasks_in: int, call: StageCall, retries: int = 0,
                  failed: RejectedRecord | None = None, failed_task_id: str = "",
                  restarts: int = 0, skipped: int = 0) -> None:
    """Driver-side bookkeeping of one outcome: rejected sink and statistics."""
    by_task: dict[str, list[RejectedRecord]] = defaultdict(list)
    for rec in call.rejected:
        by_task[rec.task_id].append(rec)
    for tid, recs in by_task.items():
        ctx.sink.add(stage_name, tid, recs)
    if failed is not None:
        stats.bump(index, "failed_tasks")
        ctx.sink.add(stage_name, failed_task_id, [failed])
    if retries:
        stats.bump(index, "retries", retries)
    if restarts:
        stats.bump(index, "worker_restarts", restarts)
    if skipped:
        stats.bump(index, "skipped", skipped)
    stats.record(index, tasks_in=tasks_in, tasks_out=len(call.outputs), items_in=call.items_in,
                 items_out=call.items_out, busy_s=call.busy_s)
