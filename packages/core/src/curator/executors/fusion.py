"""Stage fusion: consecutive stages that ask for the same resources run back to back in one
worker, so a task crosses the network (or a process boundary, or a queue) once per group instead
of once per stage (Ray Data fuses its own map operators the same way)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from curator.executors.base import ensure_setup, invoke_stage, release_stage
from curator.executors.retry import run_with_retries
from curator.resources import Resources
from curator.run.outcome import Outcome
from curator.run.result import OutputCollector
from curator.stages.base import ProcessingStage, fixed_num_workers
from curator.stages.node_info import WorkerMetadata
from curator.tasks import Task

__all__ = ["StageGroup", "group_stages", "run_chain", "chain_outcomes", "ChainJob",
           "setup_group", "release_group"]


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
              ) -> Iterator[Outcome]:
    """Run ``tasks`` through every stage of ``group`` in this process, each stage on batches of
    its own ``batch_size`` with the shared retry policy. Yields the outcome of every batch, in
    order, outputs included; the outputs of the group's last stage are in the last ones."""
    for index, stage in zip(group.indices, group.stages, strict=True):
        produced: list[Task] = []
        for batch in _chunks(tasks, stage.batch_size):
            for outcome in run_with_retries(index, stage.name,
                                            lambda b, s=stage: invoke_stage(s, b, worker),
                                            batch, max_retries):
                produced.extend(outcome.call.outputs)
                yield outcome
        tasks = produced
        if not tasks:
            return


def chain_outcomes(group: StageGroup, tasks: list[Task], max_retries: int, worker: str,
                   n_stages: int, collect: bool = True) -> tuple[list[Outcome], list[Task]]:
    """Run the chain in this worker; return one outcome per batch (what the driver needs for
    statistics, the rejected sink and the checkpoint) and the tasks the group passes on.

    Outputs travel in an outcome only for the pipeline's last stage, and without ``collect``
    (``collect_outputs=False``) only as their :meth:`OutputCollector.stub` (counts and paths);
    in between, the outcome names them (partition, task id) and the tasks themselves are
    returned once.
    """
    outcomes: list[Outcome] = []
    passed_on: list[Task] = []
    group_last = group.indices[-1]
    for o in run_chain(group, tasks, max_retries, worker):
        last = o.index + 1 == n_stages
        if not last:
            if o.index == group_last:
                passed_on.extend(o.call.outputs)
            o = o.lean()
        elif not collect:
            o = replace(o, call=replace(o.call, outputs=[OutputCollector.stub(t)
                                                         for t in o.call.outputs]))
        outcomes.append(o)
    return outcomes, passed_on


def setup_group(group: StageGroup, worker: str) -> None:
    """Set up every member of ``group`` in worker ``worker`` (NeMo's ``WorkerMetadata``)."""
    for stage in group.stages:
        ensure_setup(stage, WorkerMetadata(worker_id=worker))


def release_group(group: StageGroup) -> None:
    """Tear down every member of ``group`` that was set up in this process."""
    for stage in group.stages:
        release_stage(stage)


class ChainJob:
    """A stage group (fused, or a lone stage: a chain of one) as a worker's job (see
    :mod:`curator.executors.workers`): ``setup(worker)``, ``job(tasks, worker)`` (never raises:
    :func:`chain_outcomes` of a pipeline of ``n_stages``), ``release()``, and ``name``."""

    def __init__(self, group: StageGroup, max_retries: int, n_stages: int,
                 collect: bool = True) -> None:
        self.group, self.max_retries, self.n_stages = group, max_retries, n_stages
        self.collect, self.name = collect, group.name

    def setup(self, worker: str) -> None:
        setup_group(self.group, worker)

    def __call__(self, tasks: list[Task], worker: str) -> tuple[list[Outcome], list[Task]]:
        return chain_outcomes(self.group, tasks, self.max_retries, worker, self.n_stages,
                              self.collect)

    def release(self) -> None:
        release_group(self.group)
