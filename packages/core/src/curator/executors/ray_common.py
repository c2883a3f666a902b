"""What the Ray executors share: cluster ownership, resource mapping, retries, bookkeeping."""

from __future__ import annotations

import contextlib
import functools
import time
from abc import abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar

from curator.checkpoint import PartitionTracker
from curator.executors.base import (
    BaseExecutor,
    OutputCollector,
    RunContext,
    RunResult,
    ensure_setup,
    release_stage,
)
from curator.executors.fusion import StageGroup, group_stages
from curator.executors.ray_client import RayClient, alive_nodes
from curator.executors.retry import (
    BatchOutcome,
    apply_outcome,
    apply_report,
    outcome_report,
    run_with_retries,
    source_outcomes,
)
from curator.executors.stats import ProgressReporter, RayStageMetrics, RunStats
from curator.paths import warn_node_local_paths
from curator.stages.base import ProcessingStage
from curator.stages.lifecycle import overrides
from curator.stages.node_info import NodeInfo, WorkerMetadata
from curator.tasks import EmptyTask, Task

__all__ = ["RayExecutorBase", "ray_session", "BatchOutcome", "run_with_retries", "apply_outcome",
           "node_gpu_memory_gb", "stage_override", "pool_limits", "RunStore", "PartitionTracker",
           "source_windows", "apply_report", "tasks_per_block", "SOURCE_WINDOW",
           "setup_on_nodes"]


@contextlib.contextmanager
def ray_session(config: dict[str, Any]) -> Iterator[Any]:
    """Use the running Ray connection, or start a local cluster for the run and stop it after.

    Config keys used: ``address`` (connect there), ``num_cpus``, ``num_gpus``,
    ``object_store_memory``, ``ray_timeout_s``.
    """
    client = RayClient(address=config.get("address"), num_cpus=config.get("num_cpus"),
                       num_gpus=config.get("num_gpus"),
                       object_store_memory=config.get("object_store_memory"),
                       timeout_s=float(config.get("ray_timeout_s", 120.0)))
    client.start()
    try:
        yield client
    finally:
        client.stop()


def stage_override(config: dict[str, Any], key: str, stage: ProcessingStage) -> Any:
    """``config[key]`` for this stage: a plain value, or ``{stage_name: value}``."""
    value = config.get(key)
    return value.get(stage.name) if isinstance(value, dict) else value


def pool_limits(config: dict[str, Any], stages: list[ProcessingStage], size: int,
                cpus_each: float, gpus_each: float, cpus: float, gpus: float) -> tuple[int, int]:
    """The fewest and most workers of a pool of ``stages`` planned at ``size`` workers of
    ``cpus_each`` / ``gpus_each``: the ``min_workers`` / ``max_workers`` config (the largest
    over the stages), else with ``autoscale`` 1 and as many as ``cpus`` / ``gpus`` hold, else
    ``size`` (a fixed pool)."""
    def most(key: str) -> int:
        return max((int(stage_override(config, key, s) or 0) for s in stages), default=0)

    fits = int(cpus / max(cpus_each, 1e-3) + 1e-9)
    if gpus_each:
        fits = min(fits, int(gpus / gpus_each + 1e-9))
    auto = bool(config.get("autoscale", False))
    low = most("min_workers") or (1 if auto else size)
    top = most("max_workers") or (max(fits, 1) if auto else size)
    return max(1, min(low, size)), max(top, size)


def node_gpu_memory_gb(override: float | None = None) -> float | None:
    """GPU memory in GB that ``Resources.gpu_memory_gb`` is sized against: the smallest GPU of
    the connected cluster's GPU nodes, by accelerator type or ``override`` (see
    :mod:`curator.executors.gpu_sizing`); ``None`` when the cluster has no GPU."""
    import ray

    from curator.executors.gpu_sizing import smallest_gpu_memory_gb

    return smallest_gpu_memory_gb(ray.nodes(), override)


class RunStore:
    """Keys of one run in Ray's internal key-value store (on the head node): what a worker
    writes there outlives the worker process if it dies, and the driver can read it."""

    NAMESPACE = "curator_runs"

    def __init__(self, run_key: str) -> None:
        self.prefix = f"{run_key}/"

    def get(self, key: str) -> bytes | None:
        from ray.experimental import internal_kv

        return internal_kv._internal_kv_get((self.prefix + key).encode(),
                                            namespace=self.NAMESPACE)

    def put(self, key: str, value: bytes) -> None:
        from ray.experimental import internal_kv

        internal_kv._internal_kv_put((self.prefix + key).encode(), value, overwrite=True,
                                     namespace=self.NAMESPACE)

    def keys(self, prefix: str = "") -> list[str]:
        """The run's keys that start with ``prefix`` (without the run's own prefix)."""
        from ray.experimental import internal_kv

        found = internal_kv._internal_kv_list((self.prefix + prefix).encode(),
                                              namespace=self.NAMESPACE)
        return [k.decode()[len(self.prefix):] for k in found]

    def delete(self, key: str = "") -> None:
        """Forget ``key``, by default every key of the run."""
        from ray.experimental import internal_kv

        internal_kv._internal_kv_del((self.prefix + key).encode(), del_by_prefix=not key,
                                     namespace=self.NAMESPACE)


SOURCE_WINDOW = 100_000
"""Partitions a Ray executor takes from the source at most before running them (config key
``source_window``): the driver never holds more, whatever the listing's size."""


def source_windows(stages: list[ProcessingStage], initial: list[Task], ctx: RunContext,
                   stats: RunStats, tracker: PartitionTracker, window: int = SOURCE_WINDOW,
                   ) -> Iterator[tuple[list[Task], int]]:
    """The tasks the cluster starts from, window by window, and the index of the first stage
    to run there.

    Given an empty root task, the source stage (the one that lists the work: files, manifest
    lines) runs here on the driver, like on the local executor, chunk by chunk
    (:meth:`~ProcessingStage.process_stream`): each window of at most ``window`` partitions
    (plus a chunk) is yielded to run through the pipeline before more is listed. A source that
    fails stops the run with :class:`SourceStageError`, and partitions an earlier run finished
    are dropped, so every remaining partition is its own unit of parallel work. Given tasks,
    those minus the finished partitions are the start (one window).
    """
    if not isinstance(initial[0], EmptyTask):
        for t in initial:
            t.metadata.setdefault("partition", t.task_id)
        tasks, skipped = ctx.skip_done(initial)
        stats.stages[0].skipped += skipped
        for t in tasks:
            tracker.seed(t.partition, t.task_id)
        yield tasks, 0
        return
    source = stages[0]
    source.setup_on_node(NodeInfo(node_id=_driver_node_id()), WorkerMetadata())
    ensure_setup(source, {"worker": "driver"})
    stats.stages[0].workers = 1
    names = [s.name for s in stages]
    tasks: list[Task] = []
    windows = 0
    try:
        for o in source_outcomes(source, initial[0], ctx.max_retries):
            o.call.outputs, skipped = ctx.skip_done(o.call.outputs)
            rep = outcome_report(0, o, keep_outputs=True)
            rep.skipped = skipped
            apply_report(rep, names, ctx, stats, tracker)
            tasks.extend(o.call.outputs)
            if len(tasks) >= max(1, window):
                windows += 1
                yield tasks, 1
                tasks = []
    finally:
        release_stage(source)
    if tasks or not windows:
        yield tasks, 1


def _driver_node_id() -> str:
    """The Ray node id of the node this driver is connected to (``"driver"`` without Ray)."""
    import ray

    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else "driver"


def _setup_here(stage: ProcessingStage) -> str:
    """Body of the Ray task :func:`setup_on_nodes` pins to one node; returns its node id."""
    import ray

    node_id = ray.get_runtime_context().get_node_id()
    stage.setup_on_node(NodeInfo(node_id=node_id), WorkerMetadata())
    return node_id


@functools.cache
def _setup_task() -> Any:
    import ray

    return ray.remote(max_retries=0)(_setup_here)


def setup_on_nodes(stages: list[ProcessingStage],
                   ignore_head_node: bool = False) -> dict[str, list[str]]:
    """Run each stage's ``setup_on_node`` once on every alive node that can hold one of its
    workers (the head node left out with ``ignore_head_node``), before any worker starts.

    One Ray task per (stage, node), pinned there (``NodeAffinitySchedulingStrategy``, not
    soft), all submitted at once so slow setups (model downloads) overlap; they ask for no CPU
    (nothing else runs yet) and for the stage's GPUs, so a GPU setup sees one. Stages that keep
    the base class's no-op are skipped (no Ray task). A setup that raises stops the run with
    its error. Returns ``{stage name: [node ids]}`` of the setups that ran.
    """
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from curator.executors.ray_client import alive_nodes

    wanted = [s for s in stages if overrides(s, ProcessingStage, "setup_on_node")]
    if not wanted:
        return {}
    nodes = alive_nodes(ignore_head_node)
    refs: dict[str, list[Any]] = {}
    for stage in wanted:
        res = stage.resources
        gpus = res.gpu_fraction(None) if res.requires_gpu else 0.0
        staged = ray.put(stage)
        for node in nodes:
            have = node.get("Resources") or {}
            if have.get("CPU", 0.0) + 1e-9 < res.cpus or have.get("GPU", 0.0) + 1e-9 < gpus:
                continue  # no worker of this stage fits there: nothing of it runs there
            refs.setdefault(stage.name, []).append(_setup_task().options(
                num_cpus=0, num_gpus=gpus, scheduling_strategy=NodeAffinitySchedulingStrategy(
                    node_id=node["NodeID"], soft=False)).remote(staged))
    return {name: ray.get(r) for name, r in refs.items()}


def tasks_per_block(n_tasks: int, cluster: dict[str, float], configured: Any = None) -> int:
    """Tasks a Ray executor hands over at once (a Ray Data input block, a Xenna call): one while
    there are at most 16 tasks per cluster CPU (every task its own unit of parallel work), else
    enough to keep about 16 per CPU, at most 64 (each costs the driver a Ray object and a call).
    ``configured``: the executor's ``tasks_per_block`` setting, if any."""
    if configured:
        return max(1, int(configured))
    per_cpu = 16 * max(1, int(cluster.get("CPU", 1)))
    return max(1, min(64, -(-n_tasks // per_cpu)))


class RayExecutorBase(BaseExecutor):
    """What both Ray executors share: config validation, the cluster session for a run,
    progress and timing, and stage fusion. Subclasses implement :meth:`_run`."""

    config_keys: ClassVar[frozenset[str]] = frozenset({
        "num_workers", "fuse_stages", "max_retries", "address", "num_cpus", "num_gpus",
        "object_store_memory", "ray_timeout_s", "gpu_memory_gb_per_gpu", "collect_outputs",
        "source_window"})
    counts_partitions: ClassVar[bool] = False
    """Whether the run's tracker counts partitions without a checkpoint too (an executor that
    re-runs unfinished partitions after a lost worker needs to know them)."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__({**(config or {}), **kwargs})
        self.warn_unknown_keys(self.config_keys)

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
                warn_node_local_paths(stages, len(alive_nodes()))
                with RayStageMetrics(stats, ctx.pipeline_name):  # Ray dashboard / Prometheus
                    outputs = self._run(stages, self.initial(initial_tasks), ctx, stats,
                                        client.cluster_resources())
            finally:
                stats.wall_s = time.perf_counter() - start
                if reporter:
                    reporter.__exit__()
        if isinstance(outputs, list) and not self.config.get("collect_outputs", True):
            lean = OutputCollector(collect=False)  # an executor that returns a plain list
            lean.add(outputs)
            outputs = lean
        return self.finish(ctx, stats, outputs)

    def groups(self, stages: list[ProcessingStage], first: int = 0) -> list[StageGroup]:
        """The fused stage groups of ``stages`` (pipeline indices from ``first``)."""
        return group_stages(stages, first, fuse=bool(self.config.get("fuse_stages", True)))

    def windows(self, stages: list[ProcessingStage], initial: list[Task], ctx: RunContext,
                stats: RunStats, tracker: PartitionTracker) -> Iterator[tuple[list[Task], int]]:
        """:func:`source_windows` with this executor's ``source_window`` config."""
        return source_windows(stages, initial, ctx, stats, tracker,
                              int(self.config.get("source_window") or SOURCE_WINDOW))

    def workers_override(self, stage: ProcessingStage) -> int | None:
        """The ``num_workers`` config for ``stage`` (plain or per stage name)."""
        return stage_override(self.config, "num_workers", stage)

    def _run(self, stages: list[ProcessingStage], initial: list[Task], ctx: RunContext,
             stats: RunStats, cluster: dict[str, float]) -> OutputCollector:
        """Run the stages on the connected cluster, window by window of the source's
        partitions (:meth:`windows`); return the last stage's outputs."""
        tracker = ctx.tracker(len(stages), count=self.counts_partitions)
        outputs = OutputCollector(bool(self.config.get("collect_outputs", True)))
        # once per run, before any pool starts; an empty root task's source runs on the driver
        on_cluster = stages[1:] if isinstance(initial[0], EmptyTask) else stages
        setup_on_nodes(on_cluster, bool(self.config.get("ignore_head_node")))
        for tasks, first in self.windows(stages, initial, ctx, stats, tracker):
            if not tasks or first == len(stages):
                outputs.add(tasks if first == len(stages) else [])
                continue
            self._run_window(stages, tasks, first, ctx, stats, tracker, cluster, outputs)
        return outputs

    @abstractmethod
    def _run_window(self, stages: list[ProcessingStage], tasks: list[Task], first: int,
                    ctx: RunContext, stats: RunStats, tracker: PartitionTracker,
                    cluster: dict[str, float], outputs: OutputCollector) -> None:
        """Run ``tasks`` through ``stages[first:]`` on the cluster, booking every report
        (:func:`apply_report`) as it arrives and the run's outputs into ``outputs``."""
