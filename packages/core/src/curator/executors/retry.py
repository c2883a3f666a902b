"""The failure policies every executor shares: a task that raises is retried, then kept whole
(:func:`run_with_retries`); a worker process that dies is retried alone, then kept whole
(:class:`DeadWorkerPolicy`, whose death counter each engine chooses)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from curator.executors.base import SourceStageError, invoke_source
from curator.run.outcome import Outcome, StageCall, failed_task_record
from curator.stages.base import ProcessingStage
from curator.stages.lifecycle import ensure_setup, release_stage
from curator.stages.node_info import WorkerMetadata
from curator.tasks import EmptyTask, Task

if TYPE_CHECKING:
    from curator.executors.base import Run

__all__ = ["run_with_retries", "source_outcomes", "source_windows", "WorkerDied",
           "DeathCounter", "DeathTally", "DeadWorkerPolicy"]

B = TypeVar("B")
Result = tuple[list[Outcome], Any]
"""What a worker returns for a batch of a stage group: its outcomes, and the tasks (or a
reference to them) it passes on."""


def run_with_retries(index: int, stage_name: str, call: Callable[[list[Task]], StageCall],
                     batch: list[Task], max_retries: int) -> list[Outcome]:
    """Run ``call(batch)`` for stage ``index``; on error split the batch and retry each task
    ``max_retries`` times, then keep a task that still fails whole (a failed-task entry)."""
    failures = 0
    retries = 0
    while True:
        result = call(batch)
        if result.error is None:
            return [Outcome.of(index, batch, result, retries)]
        if len(batch) > 1:
            out = [o for t in batch
                   for o in run_with_retries(index, stage_name, call, [t], max_retries)]
            if out:
                out[0].retries += retries
            return out
        failures += 1
        if failures > max_retries:
            rec = failed_task_record(stage_name, batch[0], result.error)
            empty = StageCall([], result.rejected, result.busy_s, result.items_in, 0,
                              peak_rss_mb=result.peak_rss_mb)
            return [Outcome.of(index, batch, empty, retries, failed=rec)]
        retries += 1


def source_outcomes(stage: ProcessingStage, task: Task, max_retries: int,
                    worker: str = "driver") -> Iterator[Outcome]:
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
                yield Outcome.of(0, [] if handed_on else [task], call,
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


def source_windows(run: Run, initial: list[Task], window: int) -> Iterator[list[Task]]:
    """The tasks the engine starts from, window by window (the groups after the source run
    them).

    Given an empty root task, the source stage (the one that lists the work: files, manifest
    lines) runs here on the driver, on every executor, chunk by chunk
    (:meth:`~ProcessingStage.process_stream`): each window of at most ``window`` partitions
    (plus a chunk) is yielded to run before more is listed. A source that fails stops the run
    with :class:`SourceStageError`, and partitions an earlier run finished are dropped, so
    every remaining partition is its own unit of parallel work. Given tasks, those minus the
    finished partitions are the start (one window).
    """
    ctx, stats, tracker = run.ctx, run.stats, run.tracker
    if not isinstance(initial[0], EmptyTask):
        for t in initial:
            t.metadata.setdefault("partition", t.task_id)
        tasks, skipped = ctx.skip_done(initial)
        stats.stages[0].skipped += skipped
        for t in tasks:
            tracker.seed(t.partition, t.task_id)
        yield tasks
        return
    source = run.stages[0]
    ensure_setup(source, WorkerMetadata(worker_id="driver"))
    stats.stages[0].workers = 1
    tasks = []
    windows = 0
    try:
        for o in source_outcomes(source, initial[0], ctx.max_retries):
            o.call.outputs, o.skipped = ctx.skip_done(o.call.outputs)
            o.produced = [(t.partition, t.task_id) for t in o.call.outputs]
            run.book(o)  # before the partitions run: the tracker knows them first
            tasks.extend(o.call.outputs)
            if len(tasks) >= max(1, window):
                windows += 1
                yield tasks
                tasks = []
    finally:
        release_stage(source)
    if tasks or not windows:
        yield tasks


class WorkerDied(RuntimeError):
    """A worker process exited while it held a batch (what an engine raises, or hands to
    :meth:`DeadWorkerPolicy.run`, when it detects the death)."""


class DeathCounter(Protocol):
    """Where :class:`DeadWorkerPolicy` counts a task's worker deaths: in memory where the
    counting process outlives the worker, in Ray's key-value store where it may not."""

    def add(self, key: str) -> int:
        """Count one more for ``key``; return the count."""

    def clear(self, key: str) -> None:
        """Forget ``key``."""


class DeathTally:
    """A :class:`DeathCounter` in this process's memory."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, key: str) -> int:
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.counts[key]

    def clear(self, key: str) -> None:
        self.counts.pop(key, None)


def death_key(index: int, task: Task) -> str:
    """The counter key of ``task`` entering the stage group that starts at ``index``."""
    return f"t{index}:{task.partition}:{task.task_id}"


class DeadWorkerPolicy:
    """What happens when a worker process dies, the same on every executor: the batch it held
    is split and each task retried alone; a task that has killed its worker more than
    ``max_retries`` times is kept whole in the rejected sink by its group's first stage (the
    run goes on, not ok). Engines only detect the death; every death is a worker restart, and
    a lone task run again after one is a retry (both counted on the group's first stage).

    Engines that see the death where they called (local workers, actor pool) use :meth:`run`;
    engines that learn of it later (Ray Data's retried block, Xenna's stopped pipeline) count
    with :meth:`died` and keep the task with :meth:`kept_whole`.
    """

    def __init__(self, max_retries: int, counter: DeathCounter | None = None) -> None:
        self.max_retries = max_retries
        self.counter: DeathCounter = counter if counter is not None else DeathTally()

    def died(self, index: int, task: Task) -> int:
        """Count one more death of ``task`` (run alone in the group starting at ``index``);
        returns its deaths so far."""
        return self.counter.add(death_key(index, task))

    def gives_up(self, deaths: int) -> bool:
        """Whether a task with ``deaths`` deaths is kept whole instead of run again."""
        return deaths > self.max_retries

    def forget(self, index: int, task: Task) -> None:
        """``task`` finished: a later death is not its own."""
        self.counter.clear(death_key(index, task))

    @staticmethod
    def kept_whole(index: int, stage: ProcessingStage | str, task: Task, deaths: int,
                   error: str) -> Outcome:
        """The outcome of a task that killed its worker ``deaths`` times: failed, kept whole
        by the group's first stage (pipeline ``index``); ``deaths`` restarts on it."""
        call = StageCall([], [], 0.0, task.num_items, 0)
        return Outcome.of(index, [task], call, retries=deaths - 1, restarts=deaths,
                          failed=failed_task_record(stage, task, error))

    def run(self, batch: B, attempt: Callable[[B], Result], *, index: int,
            stage: ProcessingStage, split: Callable[[B], list[B]],
            task_of: Callable[[B], Task], died: WorkerDied | None = None) -> list[Result]:
        """``attempt(batch)`` under the policy: a :class:`WorkerDied` splits the batch
        (``split``: one batch per task) and each part runs alone; a lone task (``task_of``)
        is run again until it died more than ``max_retries`` times, then kept whole.
        ``died``: the batch already killed its worker once (a call queued before the death).
        Returns one result per attempt that came back, or a kept task's ``([outcome], None)``
        (``task_of`` is asked only then). The deaths are counted in this call's frame, on the
        driver, which outlives the worker."""
        deaths = 0  # counted here: this frame outlives the worker
        while True:
            try:
                if died is not None:
                    exc, died = died, None
                    raise exc
                outcomes, passed_on = attempt(batch)
            except WorkerDied as exc:
                deaths += 1
                parts = split(batch)
                if len(parts) > 1:  # find the task that kills its worker
                    results = [r for part in parts
                               for r in self.run(part, attempt, index=index, stage=stage,
                                                 split=split, task_of=task_of)]
                    results[0][0][0].restarts += deaths
                    return results
                if self.gives_up(deaths):
                    return [([self.kept_whole(index, stage, task_of(batch), deaths, str(exc))],
                             None)]
                continue
            if deaths:
                outcomes[0].restarts += deaths
                outcomes[0].retries += deaths
            return [(outcomes, passed_on)]
