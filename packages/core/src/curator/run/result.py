"""What a run gives back: its outputs, statistics and rejected sink."""

from __future__ import annotations

from typing import Any

from curator.errors import PipelineFailedError
from curator.run.sink import FailedTask, RejectedSink
from curator.run.stats import RunStats
from curator.tasks import Task

__all__ = ["RunResult", "OutputCollector", "output_paths"]


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
    (:class:`~curator.run.sink.FailedTask`). Records rejected by design (filtered, malformed
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
