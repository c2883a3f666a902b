"""Stage fusion: consecutive stages that ask for the same resources run back to back in one
worker, so a task crosses the network (or a process boundary, or a queue) once per group instead
of once per stage (Ray Data fuses its own map operators the same way)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from curator.executors.base import OutputCollector, ensure_setup, invoke_stage, release_stage
from curator.executors.retry import BatchOutcome, OutcomeReport, outcome_report, run_with_retries
from curator.resources import Resources
from curator.stages.base import ProcessingStage, fixed_num_workers
from curator.tasks import Task

__all__ = ["StageGroup", "group_stages", "run_chain", "chain_reports", "outcome_report",
           "ChainJob"]


@dataclass
class StageGroup:
    """Consecutive stages ``stages`` (pipeline indices ``first`` …) run in the same workers.

    ``resources`` are what each member asks for (equal by construction); ``num_workers`` is the
    largest fixed worker count of a member (``None``: the executor decides).
    """

    first: int
    stages: list[ProcessingStage] = field(default_factory=list)

    @property
    def resources(self) -> Resources:
        return self.stages[0].resources

    @property
    def batch_size(self) -> int:
        return self.stages[0].batch_size

    @property
    def indices(self) -> range:
        return range(self.first, self.first + len(self.stages))

    @property
    def name(self) -> str:
        return "+".join(s.name for s in self.stages)

    def num_workers(self, override: Callable[[ProcessingStage], int | None]) -> int | None:
        """The largest fixed worker count among the members (config override first)."""
        fixed = [override(s) or fixed_num_workers(s) for s in self.stages]
        return max((int(n) for n in fixed if n), default=None)


def group_stages(stages: list[ProcessingStage], first: int = 0,
                 fuse: bool = True) -> list[StageGroup]:
    """Split ``stages`` (pipeline indices from ``first``) into groups of consecutive stages with
    equal ``Resources`` and ``batch_size`` (a stage that gathers more tasks per call than its
    predecessor, a GPU embedder or a dedup over many tasks, starts its own group so it still
    gets full batches); with ``fuse=False`` every stage is its own group."""
    groups: list[StageGroup] = []
    for k, stage in enumerate(stages):
        last = groups[-1] if groups else None
        if (fuse and last is not None and last.resources == stage.resources
                and last.stages[-1].batch_size == stage.batch_size):
            groups[-1].stages.append(stage)
        else:
            groups.append(StageGroup(first + k, [stage]))
    return groups


def _chunks(tasks: list[Task], size: int) -> Iterator[list[Task]]:
    for k in range(0, len(tasks), max(size, 1)):
        yield tasks[k:k + size]


def run_chain(group: StageGroup, tasks: list[Task], max_retries: int, worker: str
              ) -> Iterator[tuple[int, BatchOutcome]]:
    """Run ``tasks`` through every stage of ``group`` in this process, each stage on batches of
    its own ``batch_size`` with the shared retry policy. Yields ``(stage index, outcome)`` for
    every batch, in order; the outputs of the group's last stage are in the last outcomes."""
    for index, stage in zip(group.indices, group.stages, strict=True):
        produced: list[Task] = []
        for batch in _chunks(tasks, stage.batch_size):
            for outcome in run_with_retries(stage.name,
                                            lambda b, s=stage: invoke_stage(s, b, worker),
                                            batch, max_retries):
                produced.extend(outcome.call.outputs)
                yield index, outcome
        tasks = produced
        if not tasks:
            return


def chain_reports(group: StageGroup, tasks: list[Task], max_retries: int, worker: str,
                  n_stages: int, collect: bool = True) -> tuple[list[OutcomeReport], list[Task]]:
    """Run the chain in this worker; return one report per batch (what the driver needs for
    statistics, the rejected sink and the checkpoint) and the tasks the group passes on.

    Outputs travel in a report only for the pipeline's last stage, and without ``collect``
    (``collect_outputs=False``) only as their :meth:`OutputCollector.stub` (counts and paths);
    in between, the report names them (partition, task id) and the tasks themselves are returned
    once.
    """
    reports: list[OutcomeReport] = []
    passed_on: list[Task] = []
    group_last = group.indices[-1]
    for index, o in run_chain(group, tasks, max_retries, worker):
        last = index + 1 == n_stages
        rep = outcome_report(index, o, keep_outputs=last)
        if last and not collect:
            rep = replace(rep, call=replace(rep.call, outputs=[OutputCollector.stub(t)
                                                               for t in rep.call.outputs]))
        reports.append(rep)
        if index == group_last and not last:
            passed_on.extend(o.call.outputs)
    return reports, passed_on


class ChainJob:
    """A fused group as a worker's job (see :mod:`curator.executors.workers`): sets up every
    member, and runs the chain with :func:`chain_reports` of a pipeline of ``n_stages``."""

    def __init__(self, group: StageGroup, max_retries: int, n_stages: int,
                 collect: bool = True) -> None:
        self.group, self.max_retries, self.n_stages = group, max_retries, n_stages
        self.collect, self.name = collect, group.name

    def setup(self, worker: str) -> None:
        for stage in self.group.stages:
            ensure_setup(stage, {"worker": worker})

    def __call__(self, tasks: list[Task], worker: str) -> tuple[list[OutcomeReport], list[Task]]:
        return chain_reports(self.group, tasks, self.max_retries, worker, self.n_stages,
                             self.collect)

    def release(self) -> None:
        for stage in self.group.stages:
            release_stage(stage)
