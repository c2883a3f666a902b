"""What the Ray executors share: cluster ownership, resource mapping, retries, bookkeeping."""

from __future__ import annotations

import contextlib
import time
from abc import abstractmethod
from collections import defaultdict
from collections.abc import Iterator
from typing import Any, ClassVar

from curator.checkpoint import CheckpointStore
from curator.executors.base import (
    BaseExecutor,
    RunContext,
    RunResult,
    SourceStageError,
    invoke_stage,
)
from curator.executors.fusion import StageGroup, group_stages
from curator.executors.retry import BatchOutcome, apply_outcome, run_with_retries
from curator.executors.stats import ProgressReporter, RunStats
from curator.stages.base import ProcessingStage
from curator.tasks import EmptyTask, Task

__all__ = ["RayExecutorBase", "ray_session", "has_setup", "BatchOutcome", "run_with_retries", "apply_outcome",
           "node_gpu_memory_gb", "stage_override", "LineageTracker", "start_tasks", "apply_report"]


@contextlib.contextmanager
def ray_session(config: dict[str, Any]) -> Iterator[Any]:
    """Use the running Ray connection, or start a local cluster for the run and stop it after.

    Config keys used: ``address`` (connect there), ``num_cpus``, ``num_gpus``,
    ``object_store_memory``, ``ray_timeout_s``.
    """
    from curator.executors.ray_client import RayClient  # noqa: PLC0415

    client = RayClient(address=config.get("address"), num_cpus=config.get("num_cpus"),
                       num_gpus=config.get("num_gpus"),
                       object_store_memory=config.get("object_store_memory"),
                       timeout_s=float(config.get("ray_timeout_s", 120.0)))
    client.start()
    try:
        yield client
    finally:
        client.stop()


def has_setup(stage: ProcessingStage) -> bool:
    """Whether the stage overrides ``setup`` or ``teardown`` (so it needs a long-lived actor)."""
    klass = type(stage)
    return klass.setup is not ProcessingStage.setup or klass.teardown is not ProcessingStage.teardown


def stage_override(config: dict[str, Any], key: str, stage: ProcessingStage) -> Any:
    """``config[key]`` for this stage: a plain value, or ``{stage_name: value}``."""
    value = config.get(key)
    return value.get(stage.name) if isinstance(value, dict) else value


def node_gpu_memory_gb() -> float | None:
    """Memory of the first GPU of this node in GB (``None`` without torch or a GPU)."""
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_properties(0).total_memory / 1024**3


class LineageTracker:
    """Marks a source partition done once every task descending from it passed the last stage,
    whatever order the per-stage reports arrive in (streaming executors report out of order).

    Each report says "stage i consumed these tasks and produced those"; a multiset of
    (partition, stage, task_id) keys counts +1 when a task is produced (or seeded) and -1 when it
    is consumed. A partition is done when all its counts are back to zero.
    """

    def __init__(self, checkpoint: CheckpointStore | None, n_stages: int) -> None:
        self.checkpoint = checkpoint
        self.n_stages = n_stages
        self._counts: dict[str, dict[tuple[int, str], int]] = defaultdict(dict)

    def _bump(self, part: str | None, key: tuple[int, str], n: int) -> None:
        if part is None or self.checkpoint is None:
            return
        counts = self._counts[part]
        value = counts.get(key, 0) + n
        if value:
            counts[key] = value
        else:
            counts.pop(key, None)
            if not counts:
                del self._counts[part]
                self.checkpoint.mark_done(part)

    def seed(self, part: str | None, task_id: str) -> None:
        self._bump(part, (0, task_id), 1)

    def report(self, index: int, consumed: list[tuple[str | None, str]],
               produced: list[tuple[str | None, str]]) -> None:
        if index + 1 < self.n_stages:
            for part, tid in produced:
                self._bump(part, (index + 1, tid), 1)
        for part, tid in consumed:
            self._bump(part, (index, tid), -1)


def start_tasks(stages: list[ProcessingStage], initial: list[Task], ctx: RunContext,
                stats: RunStats, lineage: LineageTracker) -> tuple[list[Task], int]:
    """The tasks the cluster starts from, and the index of the first stage to run there.

    Given an empty root task, the source stage (the one that lists the work: files, manifest
    lines) runs here on the driver, like on the local executor: a source that fails stops the
    run with :class:`SourceStageError`, and partitions an earlier run finished are dropped, so
    every remaining partition is its own unit of parallel work. Given tasks, those minus the
    finished partitions are the start.
    """
    if not isinstance(initial[0], EmptyTask):
        for t in initial:
            t.metadata.setdefault("partition", t.task_id)
        tasks, skipped = ctx.skip_done(initial)
        stats.stages[0].skipped += skipped
        for t in tasks:
            lineage.seed(t.partition, t.task_id)
        return tasks, 0
    source = stages[0]
    source.setup_on_node({"node": "driver"}, {})
    source.setup({"worker": "driver"})
    try:
        outcomes = run_with_retries(source.name, lambda b: invoke_stage(source, b, "driver"),
                                    initial, ctx.max_retries)
    finally:
        source.teardown()
    tasks = []
    for o in outcomes:
        if o.failed is not None:
            raise SourceStageError(f"source stage {source.name!r} failed, so the pipeline "
                                   f"has no input:\n{o.failed.error}")
        o.call.outputs, skipped = ctx.skip_done(o.call.outputs)
        apply_outcome(ctx, stats, 0, source.name, len(o.inputs), o.call, retries=o.retries,
                      skipped=skipped)
        lineage.report(0, [], [(t.partition, t.task_id) for t in o.call.outputs])
        tasks.extend(o.call.outputs)
    stats.stages[0].workers = 1
    return tasks, 1


def apply_report(rep: dict[str, Any], stages: list[ProcessingStage], ctx: RunContext,
                 stats: RunStats, lineage: LineageTracker) -> list[Task]:
    """Driver-side bookkeeping of one report of :func:`curator.executors.fusion.chain_reports`;
    returns the run's outputs it carries (those of the last stage)."""
    i = rep["index"]
    call = rep["call"]
    apply_outcome(ctx, stats, i, stages[i].name, rep["tasks_in"], call, retries=rep["retries"],
                  failed=rep["failed"], failed_task_id=rep["failed_task_id"],
                  restarts=rep.get("restarts", 0))
    lineage.report(i, rep["consumed"], rep["produced"])
    return call.outputs if i + 1 == len(stages) else []


class RayExecutorBase(BaseExecutor):
    """What both Ray executors share: config validation, the cluster session for a run,
    progress and timing, and stage fusion. Subclasses implement :meth:`_run`."""

    config_keys: ClassVar[frozenset[str]] = frozenset({
        "num_workers", "fuse_stages", "max_retries", "address", "num_cpus", "num_gpus",
        "object_store_memory", "ray_timeout_s"})

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__({**(config or {}), **kwargs})
        unknown = set(self.config) - self.config_keys
        if unknown:
            raise ValueError(f"{type(self).__name__}: unknown config keys {sorted(unknown)}; "
                             f"known: {sorted(self.config_keys)}")

    def execute(self, stages: list[ProcessingStage], initial_tasks: list[Task] | None = None,
                *, context: RunContext | None = None) -> RunResult:
        ctx = context or RunContext()
        if "max_retries" in self.config:
            ctx.max_retries = int(self.config["max_retries"])
        stats = RunStats.for_stages([s.name for s in stages], executor=self.name)
        with ray_session(self.config) as client:
            reporter = ProgressReporter(stats, ctx.progress_interval) if ctx.progress else None
            if reporter:
                reporter.__enter__()
            start = time.perf_counter()
            try:
                outputs = self._run(stages, self.initial(initial_tasks), ctx, stats,
                                    client.cluster_resources())
            finally:
                stats.wall_s = time.perf_counter() - start
                if reporter:
                    reporter.__exit__()
        return self.finish(ctx, stats, outputs)

    def groups(self, stages: list[ProcessingStage], first: int = 0) -> list[StageGroup]:
        """The fused stage groups of ``stages`` (pipeline indices from ``first``)."""
        return group_stages(stages, first, fuse=bool(self.config.get("fuse_stages", True)))

    def workers_override(self, stage: ProcessingStage) -> int | None:
        """The ``num_workers`` config for ``stage`` (plain or per stage name)."""
        return stage_override(self.config, "num_workers", stage)

    @abstractmethod
    def _run(self, stages: list[ProcessingStage], initial: list[Task], ctx: RunContext,
             stats: RunStats, cluster: dict[str, float]) -> list[Task]:
        """Run the stages on the connected cluster; return the last stage's outputs."""
