"""RayDataExecutor: streaming execution on Ray Data (every stage runs at once)."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import cloudpickle

from curator.executors.base import Run
from curator.executors.config import RayDataConfig
from curator.executors.fusion import StageGroup, chain_outcomes, release_group, setup_group
from curator.executors.ray_common import (
    RayDeaths,
    RayExecutorBase,
    node_gpu_memory_gb,
    tasks_per_block,
)
from curator.executors.retry import DeadWorkerPolicy
from curator.executors.sizing import Cluster, plan_pools
from curator.run.outcome import Outcome
from curator.tasks import Task

__all__ = ["RayDataExecutor", "nodes_resources"]


class _GroupUDF:
    """Runs a group of fused stages on a batch of rows ``{"task": pickled Task or b"",
    "event": pickled list of outcomes or b""}`` inside one Ray worker (each stage's ``setup``
    once per actor).

    Every (retried) batch of every stage makes one outcome, so the driver keeps statistics, the
    rejected sink and the checkpoint. Outcomes ride on the first output row, with those of
    upstream groups, so a row is a task and ``batch_size`` counts tasks; only a batch that
    passes no task on emits a task-less row for its outcomes.
    """

    def __init__(self, group_bytes: bytes, n_stages: int, max_retries: int,
                 collect_outputs: bool = True, run_key: str = "") -> None:
        self.group: StageGroup = cloudpickle.loads(group_bytes)
        self.n_stages = n_stages
        self.max_retries = max_retries
        self.collect_outputs = collect_outputs
        self.deaths = RayDeaths(run_key)
        self.policy = DeadWorkerPolicy(max_retries, self.deaths)
        self.worker = f"{self.group.name}-ray"
        setup_group(self.group, self.worker)

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        reports = [r for e in batch.column("event").to_pylist() if e for r in cloudpickle.loads(e)]
        tasks = [cloudpickle.loads(t) for t in batch.column("task").to_pylist() if t]
        new, passed_on = self._run(tasks)
        rows = [cloudpickle.dumps(t) for t in passed_on] or [b""]
        events = [cloudpickle.dumps(reports + new)] + [b""] * (len(rows) - 1)
        return pa.table({"task": pa.array(rows, pa.binary()),
                         "event": pa.array(events, pa.binary())})

    def _run(self, tasks: list[Task]) -> tuple[list[Outcome], list[Task]]:
        """The chain on ``tasks``, under the dead-worker policy every executor shares
        (:class:`~curator.executors.retry.DeadWorkerPolicy`, counting in Ray's key-value store):
        Ray retries a block whose worker died (the death detected here, by the retry); the
        retry runs its tasks one at a time, each start after a death counted against the task
        (the block's death first), and a task that has died more than ``max_retries`` times is
        kept whole in the rejected sink instead of run again."""
        if not tasks or self.deaths.block_deaths(self.group.first) == 0:
            return chain_outcomes(self.group, tasks, self.max_retries, self.worker,
                                  self.n_stages, self.collect_outputs)
        first = self.group.first
        outcomes: list[Outcome] = []
        passed_on: list[Task] = []
        for task in tasks:
            died = self.policy.died(first, task)
            if self.policy.gives_up(died):
                kept = self.policy.kept_whole(first, self.group.stages[0], task, died,
                                              f"its worker process died {died} times running "
                                              "this task")
                kept.restarts = 0  # deaths: counted by the driver (RayDeaths.deaths)
                outcomes.append(kept)
                continue
            new, out = chain_outcomes(self.group, [task], self.max_retries, self.worker,
                                      self.n_stages, self.collect_outputs)
            self.policy.forget(first, task)  # it finished: a later death is not its own
            outcomes += new
            passed_on += out
        return outcomes, passed_on

    def __del__(self) -> None:  # actors end with the dataset: give the stages their teardown
        try:
            release_group(self.group)
        except Exception:
            pass


class RayDataExecutor(RayExecutorBase):
    """Streams tasks through all stages at once on Ray Data.

    The source stage runs on the driver; its tasks become input blocks. Consecutive stages with
    equal ``Resources`` are fused into one ``map_batches`` step, run in an actor pool (GPU
    groups, groups with worker state, every group on several nodes) or as Ray tasks, sized by
    the planner (:mod:`curator.executors.sizing`). Failures follow the rules every executor
    shares (retry, then keep the task whole in the rejected sink; a dead worker's batch retried
    task by task). Config keys: :class:`~curator.executors.config.RayDataConfig`; behaviour:
    ``docs/executors.md``.
    """

    name = "ray_data"
    config_class = RayDataConfig
    cfg: RayDataConfig

    def usable_resources(self, cluster: dict[str, float]) -> dict[str, float]:
        """The resources the pools are sized from: the cluster's, or with ``ignore_head_node``
        those of the alive nodes other than the head."""
        if not self._avoid_head():
            return cluster
        from curator.cluster.ray_client import alive_nodes

        return nodes_resources(alive_nodes(ignore_head_node=True))

    def _avoid_head(self) -> bool:
        """``ignore_head_node``, when the cluster has another node to run on (else a warning:
        a one-node cluster runs on its head, as NeMo Curator's Ray Data executor does)."""
        if not self.cfg.ignore_head_node:
            return False
        from curator.cluster.ray_client import alive_nodes

        try:
            alive_nodes(ignore_head_node=True)
        except ValueError:
            warnings.warn("RayDataExecutor: ignore_head_node=True, but the cluster has no node "
                          "besides its head node: running there (add worker nodes to keep the "
                          "head free)", stacklevel=2)
            return False
        return True

    def _placement(self) -> dict[str, Any]:
        """``map_batches`` arguments that keep work off the head node (``ignore_head_node``)."""
        if not self._avoid_head():
            return {}
        import ray

        heads = [n["NodeID"] for n in ray.nodes() if n.get("Alive")
                 and "node:__internal_head__" in (n.get("Resources") or {})]
        return {"label_selector": {"ray.io/node-id": f"!in({','.join(heads)})"}} if heads else {}

    def plan(self, groups: list[StageGroup], cluster: dict[str, float],
             nodes: int = 1) -> list[tuple[int, dict[str, Any]]]:
        """Workers and ``map_batches`` arguments (num_cpus, num_gpus, compute) of every group:
        the planner's (:func:`~curator.executors.sizing.plan_pools`) in Ray Data's terms.

        GPU groups and groups with worker state run in actor pools, which hold their CPUs for
        the whole run; the others run as Ray tasks (their worker processes are reused from run
        to run), and the pools leave room for one such task so no group waits forever. On a
        cluster of several ``nodes`` every group is an actor pool of at least one actor per
        node, spread over them: Ray reuses a task's worker for the next task, so tasks would
        pile onto the first node whose worker started.
        """
        import ray.data

        gpu_mem = (node_gpu_memory_gb(self.cfg.gpu_memory_gb_per_gpu)
                   if any(g.resources.gpu_memory_gb for g in groups) else None)
        # a GPU group always: Ray starts a fresh worker process for every GPU task
        # or asked for by a stage's ray_stage_spec() (NeMo Curator's ``is_actor_stage``)
        actor = [nodes > 1 or g.resources.requires_gpu or any(
                 s.has_worker_state or s.ray_stage_spec().get("is_actor_stage")
                 for s in g.stages) for g in groups]
        pools = plan_pools([self.demand(g, holds_cpus=a)
                            for g, a in zip(groups, actor, strict=True)],
                           Cluster.of(cluster, gpu_mem, nodes), autoscale=self.cfg.autoscale)
        plans = []
        for g, p, a in zip(groups, pools, actor, strict=True):
            n = max(p.workers, 1)  # a GPU group that does not fit still gets one actor
            low, top = max(p.min_workers, 1), max(p.max_workers, 1)
            # stateless tasks: twice the workers in flight, so the next one waits on its node
            # instead of on the driver's dispatch; their CPU request still caps what runs at once
            args: dict[str, Any] = {
                "num_cpus": p.cpus,
                "compute": (ray.data.ActorPoolStrategy(min_size=low, max_size=top)
                            if a else ray.data.TaskPoolStrategy(size=2 * top))}
            if p.gpus:
                args["num_gpus"] = p.gpus
            env = {k: v for s in g.stages for k, v in (s.runtime_env or {}).items()}
            if env:  # the stage's with_(runtime_env=...), as NeMo Curator passes it
                args["runtime_env"] = env
            plans.append((n, args))
        return plans

    # -- running -------------------------------------------------------------------------------
    def run_groups(self, run: Run, groups: list[StageGroup],
                   windows: Iterator[list[Task]]) -> None:
        from curator.executors.ray_quiet import quiet_actor_restart_notice

        quiet_actor_restart_notice()  # Ray's ERROR line about Ray Data's own actor arguments
        super().run_groups(run, groups, windows)

    def _run_window(self, run: Run, groups: list[StageGroup], tasks: list[Task]) -> None:
        """Run ``tasks`` through ``groups`` as one Ray Dataset; book every outcome."""
        ctx, stats, cluster, outputs = run.ctx, run.stats, run.resources, run.outputs
        import pyarrow as pa
        import ray.data
        from ray.data.context import DEFAULT_WAIT_FOR_MIN_ACTORS_S

        dctx = ray.data.DataContext.get_current()
        dctx.enable_progress_bars = False
        dctx.print_on_execution_start = False
        # Per-operator reservations split a small cluster into slices too thin for any actor
        # pool (the run would wait forever); the pools are sized to fit together instead.
        dctx.op_resource_reservation_enabled = False
        nodes = self.usable_nodes()
        # on several nodes every actor is up before the first block goes out, so every node
        # takes work (read when the dataset is made)
        dctx.wait_for_min_actors_s = (max(1, int(self.cfg.ray_timeout_s)) if nodes > 1
                                      else DEFAULT_WAIT_FOR_MIN_ACTORS_S)
        collect = outputs.collect
        per_block = tasks_per_block(len(tasks), cluster, self.cfg.tasks_per_block)
        # from_blocks: metadata computed here; from_arrow asks a Ray task per block for it,
        # which costs a worker start (about 2.5 s on 2 cores) at the beginning of every run
        from_blocks = getattr(ray.data, "from_blocks", ray.data.from_arrow)  # older Ray: none
        ds = from_blocks([
            pa.table({"task": pa.array([cloudpickle.dumps(t) for t in chunk], pa.binary()),
                      "event": pa.array([b""] * len(chunk), pa.binary())})
            for chunk in (tasks[i:i + per_block] for i in range(0, len(tasks), per_block))])
        # Ray retries a batch whose worker died (the UDF then applies the dead-worker policy):
        # enough for every task of a block to die max_retries + 1 times, at least
        # max_worker_restarts
        restarts = max(self.cfg.max_worker_restarts,
                       1 + (ctx.max_retries + 1) * per_block)
        run_key = uuid.uuid4().hex
        for group, (n, args) in zip(groups, self.plan(groups, cluster, nodes), strict=True):
            for i in group.indices:
                stats.stages[i].workers = n
            udf_args = (cloudpickle.dumps(group), len(run.stages), ctx.max_retries, collect,
                        run_key)
            # SPREAD: tasks and actors over every node with the resources, not packed on one
            kwargs = {**args, "batch_size": group.batch_size, "batch_format": "pyarrow",
                      "zero_copy_batch": True, "scheduling_strategy": "SPREAD",
                      **self._placement()}
            with warnings.catch_warnings():  # max_(task_)retries: "ray_remote_args deprecated"
                warnings.simplefilter("ignore", DeprecationWarning)
                if isinstance(args["compute"], ray.data.ActorPoolStrategy):
                    ds = ds.map_batches(_GroupUDF, fn_constructor_args=udf_args,
                                        max_task_retries=restarts, **kwargs)
                else:  # stateless: a function (setup-free, so built here once)
                    ds = ds.map_batches(_GroupUDF(*udf_args).__call__, max_retries=restarts,
                                        **kwargs)
        # no prefetching: each outcome is booked (and its partition checkpointed) on arrival
        deaths = RayDeaths(run_key)
        try:
            for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow",
                                         prefetch_batches=0):
                for raw in batch.column("event").to_pylist():
                    for outcome in cloudpickle.loads(raw) if raw else ():
                        run.book(outcome)
            for group in groups:  # on the group's first stage, as every executor counts them
                stats.bump(group.first, "worker_restarts", deaths.deaths(group.first))
        finally:
            deaths.clear()


def nodes_resources(nodes: list[dict[str, Any]]) -> dict[str, float]:
    """The summed ``Resources`` (CPU, GPU, memory …) of ``ray.nodes()`` entries."""
    out: dict[str, float] = {}
    for node in nodes:
        for key, value in (node.get("Resources") or {}).items():
            if not key.startswith("node:"):
                out[key] = out.get(key, 0.0) + float(value)
    return out
