"""What the Ray executors share: the cluster session of a run, ``setup_on_node`` on every node,
the run's keys in Ray's key-value store (:class:`RayKV`) and the dead-worker counter kept there
(:class:`RayDeaths`); the rest of a run is the skeleton's (:meth:`BaseExecutor.execute`)."""

from __future__ import annotations

import contextlib
import functools
from abc import abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar

from curator.cluster.ray_client import RayClient, alive_nodes
from curator.executors.base import BaseExecutor, Run
from curator.executors.config import SOURCE_WINDOW, RayConfig
from curator.executors.fusion import StageGroup
from curator.executors.ray_metrics import RayStageMetrics
from curator.executors.sizing import Demand
from curator.paths import warn_node_local_paths
from curator.stages.base import ProcessingStage
from curator.stages.lifecycle import overrides
from curator.stages.node_info import NodeInfo, WorkerMetadata
from curator.tasks import Task

__all__ = ["RayExecutorBase", "ray_session", "node_gpu_memory_gb", "ray_client", "RayKV",
           "RayDeaths", "tasks_per_block", "SOURCE_WINDOW", "setup_on_nodes"]


def ray_client(cfg: RayConfig, client_class: type[RayClient] = RayClient) -> RayClient:
    """The (not yet started) client of the cluster ``cfg`` names (``address``, ``num_cpus``,
    ``num_gpus``, ``object_store_memory``, ``ray_timeout_s``)."""
    return client_class(address=cfg.address, num_cpus=cfg.num_cpus, num_gpus=cfg.num_gpus,
                        object_store_memory=cfg.object_store_memory, timeout_s=cfg.ray_timeout_s)


@contextlib.contextmanager
def ray_session(cfg: RayConfig) -> Iterator[Any]:
    """Use the running Ray connection, or start a local cluster for the run and stop it after
    (:func:`ray_client`)."""
    client = ray_client(cfg)
    client.start()
    try:
        yield client
    finally:
        client.stop()


def node_gpu_memory_gb(override: float | None = None) -> float | None:
    """GPU memory in GB that ``Resources.gpu_memory_gb`` is sized against: the smallest GPU of
    the connected cluster's GPU nodes, by accelerator type or ``override`` (see
    :mod:`curator.cluster.gpu_sizing`); ``None`` when the cluster has no GPU."""
    import ray

    from curator.cluster.gpu_sizing import smallest_gpu_memory_gb

    return smallest_gpu_memory_gb(ray.nodes(), override)


class RayKV:
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


class RayDeaths:
    """A :class:`~curator.executors.retry.DeathCounter` in the run's :class:`RayKV` store: it
    outlives the worker process that died, and the retry may run in another. A block or task
    runs in one place at a time, so a read and a write suffice."""

    def __init__(self, run_key: str) -> None:
        self.store = RayKV(run_key)
        self._task: str | None = None
        self._deaths = 0

    def add(self, key: str) -> int:
        n = int(self.store.get(key) or 0) + 1
        self.store.put(key, str(n).encode())
        return n

    def clear(self, key: str = "") -> None:
        """Forget ``key`` (by default every key of the run)."""
        self.store.delete(key)

    def block_deaths(self, group: int) -> int:
        """How often the Ray task running this call of group ``group`` (one input block) died
        before: 0 on its first attempt. Counted once per attempt, on its first call (a retry
        keeps Ray's task id), so the common path costs two store operations per block, not per
        batch. 0 where Ray Data calls the function in the driver (no worker to lose)."""
        import ray

        context = ray.get_runtime_context()
        if context.worker.mode != ray._private.worker.WORKER_MODE:
            return 0
        task = context.get_task_id()
        if task != self._task:
            self._task = task
            self._deaths = self.add(f"r{group}:{task}") - 1
            if self._deaths:  # one key per death: concurrent blocks never share a counter
                self.add(f"d{group}:{task}:{self._deaths}")
        return self._deaths

    def deaths(self, group: int) -> int:
        """The worker deaths of group ``group`` in this run: one per retried attempt of a block.
        Counted here, not on an outcome: Ray's streaming generator drops a retry's outputs up
        to where the dead attempt had got, and a count riding on one of them would be lost."""
        return len(self.store.keys(f"d{group}:"))


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

    from curator.cluster.ray_client import alive_nodes

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
    """What the Ray executors share: the cluster session (:meth:`session`), ``setup_on_node``
    on every node, the source window, and running the groups window by window. Subclasses
    implement :meth:`_run_window`."""

    config_class: ClassVar[type[RayConfig]] = RayConfig
    cfg: RayConfig
    counts_partitions: ClassVar[bool] = False
    """Whether the run's tracker counts partitions without a checkpoint too (an executor that
    re-runs unfinished partitions after a lost worker needs to know them)."""

    @contextlib.contextmanager
    def session(self, stages: list[ProcessingStage]) -> Iterator[dict[str, float]]:
        """The Ray connection for the run (:func:`ray_session`) and Ray's metrics of it;
        yields the resources the pools are sized from (:meth:`usable_resources`)."""
        with ray_session(self.cfg) as client:
            warn_node_local_paths(stages, len(alive_nodes()))
            yield self.usable_resources(client.cluster_resources())

    def usable_resources(self, cluster: dict[str, float]) -> dict[str, float]:
        """The resources the pools are sized from: the cluster's."""
        return cluster

    def source_window(self) -> int:
        """The ``source_window`` config: the driver never holds more partitions of the
        source's listing, whatever its size."""
        return self.cfg.source_window or SOURCE_WINDOW

    def setup_on_nodes(self, stages: list[ProcessingStage],
                       source: ProcessingStage | None) -> None:
        """``setup_on_node`` once on every node of the cluster that can hold a worker of the
        stage (:func:`setup_on_nodes`), the source's on the driver's node."""
        if source is not None:
            source.setup_on_node(NodeInfo(node_id=_driver_node_id()), WorkerMetadata())
        setup_on_nodes(stages, self.cfg.ignore_head_node)

    def run_groups(self, run: Run, groups: list[StageGroup],
                   windows: Iterator[list[Task]]) -> None:
        """Each window in turn through the groups on the cluster (:meth:`_run_window`), with
        Ray's metrics of the run (dashboard, Prometheus)."""
        with RayStageMetrics(run.stats, run.ctx.pipeline_name):
            for tasks in windows:
                if tasks:
                    self._run_window(run, groups, tasks)

    def workers_override(self, stage: ProcessingStage) -> int | None:
        """The ``num_workers`` config for ``stage`` (plain or per stage name)."""
        return self.cfg.per_stage("num_workers", stage.name)

    def demand(self, group: StageGroup, holds_cpus: bool = True) -> Demand:
        """What ``group`` asks of the planner: its resources, fixed count and the pool bounds
        configured for its members (the largest over them)."""
        def most(key: str) -> int | None:
            return max((int(self.cfg.per_stage(key, s.name) or 0)
                        for s in group.stages), default=0) or None

        bounds = ({"min_workers": most("min_workers"), "max_workers": most("max_workers")}
                  if hasattr(self.cfg, "min_workers") else {})
        return Demand(group.resources, group.num_workers(self.workers_override),
                      holds_cpus=holds_cpus, **bounds)

    def usable_nodes(self) -> int:
        """Alive nodes with CPUs that may run workers (the head left out with
        ``ignore_head_node`` where there is another node); 1 without Ray."""
        import ray

        if not ray.is_initialized():
            return 1
        try:
            nodes = alive_nodes(self.cfg.ignore_head_node)
        except ValueError:  # no node besides the head: it runs there
            nodes = alive_nodes()
        return max(1, sum(1 for n in nodes if (n.get("Resources") or {}).get("CPU", 0) > 0))

    @abstractmethod
    def _run_window(self, run: Run, groups: list[StageGroup], tasks: list[Task]) -> None:
        """Run ``tasks`` through ``groups`` on the cluster, booking every outcome
        (``run.book``) as it arrives."""
