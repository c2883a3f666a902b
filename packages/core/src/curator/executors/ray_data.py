"""RayDataExecutor: streaming execution on Ray Data (every stage runs at once)."""

from __future__ import annotations

import uuid
import warnings
from dataclasses import replace
from typing import Any

import cloudpickle

from curator.executors.base import OutputCollector, RunContext, ensure_setup, release_stage
from curator.executors.fusion import StageGroup, chain_reports
from curator.executors.ray_common import (
    PartitionTracker,
    RayExecutorBase,
    RunStore,
    apply_report,
    node_gpu_memory_gb,
    pool_limits,
    tasks_per_block,
)
from curator.executors.retry import OutcomeReport, worker_death_report
from curator.executors.sizing import fit_cpu_shares, workers_together
from curator.executors.stats import RunStats
from curator.stages.base import ProcessingStage
from curator.tasks import Task

__all__ = ["RayDataExecutor", "nodes_resources"]


class _GroupUDF:
    """Runs a group of fused stages on a batch of rows ``{"task": pickled Task or b"",
    "event": pickled list of reports or b""}`` inside one Ray worker (each stage's ``setup``
    once per actor).

    Every (retried) batch of every stage makes one report, so the driver keeps statistics, the
    rejected sink and the checkpoint. Reports ride on the first output row, with those of
    upstream groups, so a row is a task and ``batch_size`` counts tasks; only a batch that
    passes no task on emits a task-less row for its reports.
    """

    def __init__(self, group_bytes: bytes, n_stages: int, max_retries: int,
                 collect_outputs: bool = True, run_key: str = "") -> None:
        self.group: StageGroup = cloudpickle.loads(group_bytes)
        self.n_stages = n_stages
        self.max_retries = max_retries
        self.collect_outputs = collect_outputs
        self.starts = _Starts(run_key)
        self.worker = f"{self.group.name}-ray"
        for stage in self.group.stages:
            ensure_setup(stage, {"worker": self.worker})

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        reports = [r for e in batch.column("event").to_pylist() if e for r in cloudpickle.loads(e)]
        tasks = [cloudpickle.loads(t) for t in batch.column("task").to_pylist() if t]
        new, passed_on = self._run(tasks)
        rows = [cloudpickle.dumps(t) for t in passed_on] or [b""]
        events = [cloudpickle.dumps(reports + new)] + [b""] * (len(rows) - 1)
        return pa.table({"task": pa.array(rows, pa.binary()),
                         "event": pa.array(events, pa.binary())})

    def _run(self, tasks: list[Task]) -> tuple[list[OutcomeReport], list[Task]]:
        """The chain on ``tasks``, under the dead-worker policy every executor shares (see
        :func:`~curator.executors.retry.worker_death_report`): Ray retries a block whose worker
        died; the retry runs its tasks one at a time, and a task that has killed its worker more
        than ``max_retries`` times is kept whole in the rejected sink instead of run again."""
        deaths = self.starts.block_deaths(self.group.first) if tasks else 0
        if deaths == 0:
            return chain_reports(self.group, tasks, self.max_retries, self.worker,
                                 self.n_stages, self.collect_outputs)
        first = self.group.first
        reports: list[OutcomeReport] = []
        passed_on: list[Task] = []
        for task in tasks:
            key = f"t{first}:{task.task_id}"
            died = self.starts.bump(key)  # the retries that started it, this one included
            if died > self.max_retries:  # it died every time: it kills its worker
                report = worker_death_report(first, self.group.stages[0], task, died,
                                             f"its worker process died {died} times running "
                                             "this task")
                reports.append(replace(report, restarts=0))  # deaths: counted by the driver
                continue
            new, out = chain_reports(self.group, [task], self.max_retries, self.worker,
                                     self.n_stages, self.collect_outputs)
            self.starts.clear(key)  # it finished: a later death is not its own
            reports += new
            passed_on += out
        return reports, passed_on

    def __del__(self) -> None:  # actors end with the dataset: give the stages their teardown
        for stage in self.group.stages:
            try:
                release_stage(stage)
            except Exception:
                pass


class _Starts:
    """How often a batch or task was started in this run, kept in the run's
    :class:`~curator.executors.ray_common.RunStore`: it outlives the worker process that died,
    and the retry may run in another. A batch or task runs in one place at a time, so a read
    and a write suffice."""

    def __init__(self, run_key: str) -> None:
        self.store = RunStore(run_key)
        self._task: str | None = None
        self._deaths = 0

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
            self._deaths = self.bump(f"r{group}:{task}") - 1
            if self._deaths:  # one key per death: concurrent blocks never share a counter
                self.bump(f"d{group}:{task}:{self._deaths}")
        return self._deaths

    def deaths(self, group: int) -> int:
        """The worker deaths of group ``group`` in this run: one per retried attempt of a block.
        Counted here, not on a report: Ray's streaming generator drops a retry's outputs up to
        where the dead attempt had got, and a count riding on one of them would be lost."""
        return len(self.store.keys(f"d{group}:"))

    def bump(self, key: str) -> int:
        """Count one more start of ``key``; returns the count."""
        n = int(self.store.get(key) or 0) + 1
        self.store.put(key, str(n).encode())
        return n

    def clear(self, key: str = "") -> None:
        """Forget ``key`` (by default every key of the run)."""
        self.store.delete(key)


class RayDataExecutor(RayExecutorBase):
    """Streams tasks through all stages at once on Ray Data.

    The source stage (the one given the empty root task: file listing, manifest) runs on the
    driver; its tasks become blocks (``tasks_per_block``). Consecutive stages asking for the same
    ``Resources`` are fused into one ``map_batches`` step, so a task is pickled once per group
    rather than once per stage (``fuse_stages=False``: one stage per step). A GPU group, or one
    with worker state (a member's ``has_worker_state``: a model loaded by ``setup``), runs in an
    actor pool (each member's ``setup`` once per actor); any other group runs as Ray tasks,
    twice its workers in flight. ``Resources.cpus`` / ``gpus``
    become ``num_cpus`` / ``num_gpus`` (fractional allowed), ``gpu_memory_gb`` the matching
    fraction of the node's GPU; when the pools would need more CPUs than the cluster has, their
    CPU shares are scaled down so any number of groups streams on a small machine.

    A task that raises is retried ``max_retries`` times and then written to the rejected sink; a
    worker process that dies is restarted by Ray and its batch retried task by task, and a task
    that kills its worker more than ``max_retries`` times is kept whole in the rejected sink (the
    dead-worker policy of every executor; outputs are written atomically under deterministic
    names, so a re-run overwrites).

    Config keys:
        num_workers: actors per group: int, or ``{stage_name: int}`` (a group takes the largest
            of its members; default: the CPUs shared evenly between CPU groups, GPUs by share).
        fuse_stages: fuse consecutive stages with equal resources (default ``True``).
        max_retries: overrides the run's retry count.
        address: the Ray cluster to join; without one, ``RAY_ADDRESS``, else the Ray this
            process is connected to, else a local cluster started for the run (``num_cpus``,
            ``num_gpus``, ``object_store_memory``) and shut down at the end (see
            :class:`curator.executors.ray_client.RayClient`). A joined cluster keeps running.
        ray_timeout_s: the longest a Ray start or connect may take (default 120).
        gpu_memory_gb_per_gpu: GPU memory in GB to size ``gpu_memory_gb`` against where the
            cluster's GPU type is unknown (see :mod:`curator.executors.gpu_sizing`).
        max_worker_restarts: how often Ray may retry one batch whose worker died before the
            run fails (default 4, raised to what the dead-worker policy needs: every task of
            a block dying ``max_retries + 1`` times).
        collect_outputs: bring the output tasks back to the driver (default ``True``); with
            ``False`` workers send only their count and paths (``result.num_outputs``,
            ``result.output_paths``) and the result list stays empty.
        source_window: the most partitions taken from a lazily listing source before they
            run (default 100,000): the driver's memory does not grow with the listing.
        min_workers, max_workers: the fewest and most actors of a group's pool (int or
            ``{stage_name: int}``; default: the planned size): Ray Data's autoscaling actor
            pool grows as work queues up and the cluster has room, and lets idle actors go.
        autoscale: ``True`` sets the defaults of ``min_workers`` to 1 and of ``max_workers``
            to what the cluster holds (as on :class:`RayActorPoolExecutor`).
        tasks_per_block: tasks per input block (default: one each while there are at most 16
            tasks per cluster CPU, then up to 64, so 100k partitions are not 100k Ray objects).
        ignore_head_node: run nothing on the cluster's head node: tasks and actors get a Ray
            label selector that excludes it and the pools are sized from the other nodes
            (NeMo Curator's option, also ``RayDataExecutor(ignore_head_node=True)``). A
            cluster with no node besides its head runs there, with a warning.
    """

    name = "ray_data"
    config_keys = RayExecutorBase.config_keys | {"max_worker_restarts", "tasks_per_block",
                                                 "max_workers", "min_workers", "autoscale",
                                                 "ignore_head_node"}

    def usable_resources(self, cluster: dict[str, float]) -> dict[str, float]:
        """The resources the pools are sized from: the cluster's, or with ``ignore_head_node``
        those of the alive nodes other than the head."""
        if not self._avoid_head():
            return cluster
        from curator.executors.ray_client import alive_nodes

        return nodes_resources(alive_nodes(ignore_head_node=True))

    def _avoid_head(self) -> bool:
        """``ignore_head_node``, when the cluster has another node to run on (else a warning:
        a one-node cluster runs on its head, as NeMo Curator's Ray Data executor does)."""
        if not self.config.get("ignore_head_node"):
            return False
        from curator.executors.ray_client import alive_nodes

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

    def plan(self, groups: list[StageGroup],
             cluster: dict[str, float]) -> list[tuple[int, dict[str, Any]]]:
        """Workers and ``map_batches`` arguments (num_cpus, num_gpus, compute) of every group.

        GPU groups and groups with worker state run in actor pools, which hold their CPUs for
        the whole run; the others run as Ray tasks (their worker processes are reused from run
        to run), and the pools leave room for one such task so no group waits forever.
        """
        import ray.data

        cpus = float(cluster.get("CPU", 1.0))
        gpus = float(cluster.get("GPU", 0.0))
        gpu_mem = (node_gpu_memory_gb(self.config.get("gpu_memory_gb_per_gpu"))
                   if any(g.resources.gpu_memory_gb for g in groups) else None)
        # a GPU group always: Ray starts a fresh worker process for every GPU task
        # or asked for by a stage's ray_stage_spec() (NeMo Curator's ``is_actor_stage``)
        actor = [g.resources.requires_gpu or any(
                 s.has_worker_state or s.ray_stage_spec().get("is_actor_stage")
                 for s in g.stages) for g in groups]
        sizes = workers_together([g.resources for g in groups],
                                 [g.num_workers(self.workers_override) for g in groups],
                                 cpus, gpus, gpu_mem)
        tasks_cpus = max((g.resources.cpus for g, a in zip(groups, actor, strict=True) if not a),
                         default=0.0)
        if tasks_cpus and any(actor):
            tasks_cpus = min(tasks_cpus, cpus / 2)
        pools = [(g.resources.cpus, n) for g, n, a in zip(groups, sizes, actor, strict=True) if a]
        shares = iter(fit_cpu_shares([c for c, _ in pools], [n for _, n in pools],
                                     cpus - tasks_cpus))
        plans = []
        for g, n, a in zip(groups, sizes, actor, strict=True):
            share = (next(shares) if a
                     else max(int(min(g.resources.cpus, tasks_cpus) * 1000) / 1000, 0.001))
            frac = g.resources.gpu_fraction(gpu_mem)
            low, top = pool_limits(self.config, g.stages, n, share, frac or 0.0, cpus, gpus)
            # stateless tasks: twice the workers in flight, so the next one waits on its node
            # instead of on the driver's dispatch; their CPU request still caps what runs at once
            args: dict[str, Any] = {
                "num_cpus": share,
                "compute": (ray.data.ActorPoolStrategy(min_size=low, max_size=top)
                            if a else ray.data.TaskPoolStrategy(size=2 * top))}
            if frac:
                args["num_gpus"] = frac
            env = {k: v for s in g.stages for k, v in (s.runtime_env or {}).items()}
            if env:  # the stage's with_(runtime_env=...), as NeMo Curator passes it
                args["runtime_env"] = env
            plans.append((n, args))
        return plans

    # -- running -------------------------------------------------------------------------------
    def _run(self, stages: list[ProcessingStage], initial: list[Task], ctx: RunContext,
             stats: RunStats, cluster: dict[str, float]) -> OutputCollector:
        return super()._run(stages, initial, ctx, stats, self.usable_resources(cluster))

    def _run_window(self, stages: list[ProcessingStage], tasks: list[Task], first: int,
                    ctx: RunContext, stats: RunStats, tracker: PartitionTracker,
                    cluster: dict[str, float], outputs: OutputCollector) -> None:
        """Run ``tasks`` through ``stages[first:]`` as one Ray Dataset; book every report."""
        import pyarrow as pa
        import ray.data

        dctx = ray.data.DataContext.get_current()
        dctx.enable_progress_bars = False
        dctx.print_on_execution_start = False
        # Per-operator reservations split a small cluster into slices too thin for any actor
        # pool (the run would wait forever); the pools are sized to fit together instead.
        dctx.op_resource_reservation_enabled = False
        collect = outputs.collect
        per_block = tasks_per_block(len(tasks), cluster, self.config.get("tasks_per_block"))
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
        restarts = max(int(self.config.get("max_worker_restarts", 4)),
                       1 + (ctx.max_retries + 1) * per_block)
        run_key = uuid.uuid4().hex
        groups = self.groups(stages[first:], first)
        for group, (n, args) in zip(groups, self.plan(groups, cluster), strict=True):
            for i in group.indices:
                stats.stages[i].workers = n
            udf_args = (cloudpickle.dumps(group), len(stages), ctx.max_retries, collect, run_key)
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
        # no prefetching: each report is booked (and its partition checkpointed) on arrival
        names = [s.name for s in stages]
        starts = _Starts(run_key)
        try:
            for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow",
                                         prefetch_batches=0):
                for raw in batch.column("event").to_pylist():
                    for rep in cloudpickle.loads(raw) if raw else ():
                        outputs.add(apply_report(rep, names, ctx, stats, tracker))
            for group in groups:  # on the group's first stage, as every executor counts them
                stats.bump(group.first, "worker_restarts", starts.deaths(group.first))
        finally:
            starts.clear()


def nodes_resources(nodes: list[dict[str, Any]]) -> dict[str, float]:
    """The summed ``Resources`` (CPU, GPU, memory …) of ``ray.nodes()`` entries."""
    out: dict[str, float] = {}
    for node in nodes:
        for key, value in (node.get("Resources") or {}).items():
            if not key.startswith("node:"):
                out[key] = out.get(key, 0.0) + float(value)
    return out
