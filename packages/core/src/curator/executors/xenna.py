"""XennaExecutor: run pipelines on NVIDIA's Cosmos-Xenna (streaming or batch) on a Ray cluster.

Needs the optional extra ``curator-core[xenna]`` (``cosmos-xenna``); this module imports it only
when a run starts, so registering the executor is cheap.
"""

from __future__ import annotations

import gc
import math
import os
import threading
import time
import uuid
import warnings
from collections import defaultdict, deque
from dataclasses import replace
from typing import Any

import cloudpickle

from curator.cluster.ray_client import STATE_API_ENV, RayClient, RayStartError, alive_nodes, environ
from curator.executors.base import Run
from curator.executors.config import XennaConfig
from curator.executors.fusion import StageGroup, chain_outcomes, setup_group
from curator.executors.ray_common import (
    RayExecutorBase,
    RayKV,
    node_gpu_memory_gb,
    ray_client,
    tasks_per_block,
)
from curator.executors.retry import DeadWorkerPolicy
from curator.executors.sizing import Cluster, plan_pools
from curator.run.context import RunContext
from curator.run.result import RunResult
from curator.stages.base import ProcessingStage
from curator.tasks import Task

__all__ = ["XennaExecutor", "XennaRayClient"]

_VERBOSITY = ("actor_pool_verbosity_level", "monitoring_verbosity_level",
              "autoscaler_verbosity_level", "executor_verbosity_level")
# Xenna lists actors through Ray's state API with this limit (the dashboard must allow it) and
# sets CUDA_VISIBLE_DEVICES of its GPU workers itself.
_XENNA_ENV = {**STATE_API_ENV, "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES": "1"}


def _xenna() -> Any:
    try:
        from cosmos_xenna.pipelines import v1
    except ImportError as exc:
        raise ImportError("XennaExecutor needs NVIDIA's cosmos-xenna: "
                          "pip install 'curator-core[xenna]'") from exc
    return v1


def _check_state_api() -> None:
    """Raise :class:`RayStartError` unless the connected cluster answers Ray's state API with
    Xenna's actor limit (Xenna's monitor needs Ray's dashboard, started with that limit).

    A cluster started without the dashboard still names a dashboard address (Ray's default
    port), where another cluster's dashboard may answer: the nodes the state API lists must be
    this cluster's."""
    import ray
    from ray.util.state import list_actors, list_nodes

    address = ray.get_runtime_context().gcs_address
    ours = {n["NodeID"] for n in ray.nodes()}
    try:
        list_actors(address=address, limit=int(_XENNA_ENV["RAY_MAX_LIMIT_FROM_API_SERVER"]),
                    timeout=30, raise_on_missing_output=False)
        served = {getattr(n, "node_id", None) for n in list_nodes(
            address=address, limit=10_000, timeout=30, raise_on_missing_output=False)}
        if not served & ours:
            raise RuntimeError("the dashboard at the address the cluster names belongs to "
                               "another Ray cluster")
    except Exception as exc:
        limits = " ".join(f"{k}={v}" for k, v in STATE_API_ENV.items())
        what = ("its dashboard allows fewer actors per state API call than Xenna lists"
                if "exceeds the supported limit" in str(exc) else "it runs no Ray dashboard")
        cause = (str(exc).strip().splitlines() or [""])[0][:200]
        raise RayStartError(
            f"XennaExecutor: the Ray cluster at {address} does not serve Ray's state API as "
            f"Xenna needs it: {what} ({type(exc).__name__}: {cause}). Start the cluster with "
            f"the dashboard: RayClient() does by default (drop dashboard=False); for "
            f"`ray start --head`, add --include-dashboard=true (package ray[default]) and run "
            f"it with {limits} in its environment. Or run XennaExecutor with no Ray cluster "
            f"connected and no address: it then starts one for the run") from exc


def _check_gpu_env() -> None:
    """Raise :class:`RayStartError` unless the cluster's workers were started with
    ``RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1``: Xenna assigns GPUs to its workers itself,
    and elsewhere Ray hides every GPU from them (Xenna's workers then fail one by one)."""
    import ray

    @ray.remote(num_cpus=0)
    def _noset() -> str | None:
        return os.environ.get("RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES")

    if ray.get(_noset.remote(), timeout=120) != "1":
        raise RayStartError(
            "XennaExecutor: the pipeline has GPU stages, but the Ray cluster was started without "
            "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1, which Xenna needs to give its "
            "workers their GPUs. Start the cluster with XennaRayClient() instead of RayClient() "
            "(or let XennaExecutor start one: no Ray connected, no address), or export that "
            "variable before `ray start` on every node")


class XennaRayClient(RayClient):
    """A :class:`RayClient` (dashboard on, as every ``RayClient`` by default) whose started
    cluster also leaves ``CUDA_VISIBLE_DEVICES`` to Xenna, as Xenna's own clusters do (Ray
    Data and actor pool workers need Ray to set it, so a plain ``RayClient`` does not do this).
    Parameters are :class:`RayClient`'s; :meth:`start` also checks the state API."""

    def start(self) -> XennaRayClient:
        with environ(_XENNA_ENV):
            super().start()
        try:
            _check_state_api()
        except BaseException:
            self.stop()
            raise
        return self


Key = tuple[int, "str | None", str]
"""A task entering a stage group: (the group's first stage index, partition, task id)."""


def _stage_class(group: StageGroup, v1: Any) -> type:
    """A Xenna ``Stage`` class named after ``group`` (Xenna names its pools by class name)."""

    class _XennaGroupStage(v1.Stage):
        """Runs a group of fused stages in one Xenna worker and sends every batch's
        :class:`~curator.run.outcome.Outcome` to the driver through ``reports``.

        Each call is written to ``journal`` while it runs (its tasks' keys; ``alone``: one
        task per call, kept in the journal too), so after a worker died the driver knows what
        it was running. In a run that redoes partitions, only the tasks in ``loud`` (the ones whose
        reports the driver still waits for; ``None``: all) report, the others run quietly to
        make the outputs downstream groups still need, and those in ``skip`` (kept in the
        rejected sink after killing their workers) do not run.
        """

        def __init__(self, group: StageGroup, n_stages: int, max_retries: int, cpus: float,
                     gpus: float, reports: Any, collect: bool, per_call: int,
                     journal: RayKV | None = None, loud: frozenset[Key] | None = None,
                     skip: frozenset[Key] = frozenset(), alone: bool = False) -> None:
            self.group, self.n_stages, self.max_retries = group, n_stages, max_retries
            self.collect, self.per_call = collect, per_call
            self.cpus, self.gpus, self.reports = cpus, gpus, reports
            self.journal, self.loud, self.skip = journal, loud, skip
            self.alone = alone
            self.worker = group.name

        @property
        def required_resources(self) -> Any:
            return v1.Resources(cpus=self.cpus, gpus=self.gpus)

        @property
        def stage_batch_size(self) -> int:  # the chain still gives each stage its own batches
            return 1 if self.alone else max(self.group.batch_size, self.per_call)

        def setup_on_node(self, node_info: Any, worker_metadata: Any) -> None:
            """Nothing: Xenna calls this on each node per ``run_pipeline``, which runs once per
            source window and again for redone work; the stages' ``setup_on_node`` ran once
            per node before the run (:func:`~curator.executors.ray_common.setup_on_nodes`)."""

        def setup(self, worker_metadata: Any) -> None:
            self.worker = f"{self.group.name}-{worker_metadata.worker_id}"
            setup_group(self.group, self.worker)

        def process_data(self, in_data: list[Task]) -> list[Task]:
            first = self.group.first
            keyed = [((first, t.partition, t.task_id), t) for t in in_data]
            keyed = [(k, t) for k, t in keyed if k not in self.skip]
            tasks = [t for _, t in keyed]
            call = f"{first}/{uuid.uuid4().hex}"
            if self.journal is not None:
                self.journal.put(call, cloudpickle.dumps(
                    ([k for k, _ in keyed], tasks if self.alone else None)))
            loud = [t for k, t in keyed if self.loud is None or k in self.loud]
            quiet = [t for k, t in keyed if self.loud is not None and k not in self.loud]
            passed_on: list[Task] = []
            if quiet:  # already reported: only their outputs are wanted
                passed_on += chain_outcomes(self.group, quiet, self.max_retries, self.worker,
                                            self.n_stages, self.collect)[1]
            if loud:
                reports, out = chain_outcomes(self.group, loud, self.max_retries, self.worker,
                                              self.n_stages, self.collect)
                self.reports.put((self.worker, reports))  # booked on the driver as it arrives
                passed_on += out
            if self.journal is not None:
                self.journal.delete(call)
            return passed_on

    return type(group.name, (_XennaGroupStage,), {"__module__": __name__})


def _journaled_calls(journal: RayKV) -> list[tuple[list[Key], list[Task] | None]]:
    """The calls the journal shows running (their tasks' keys, and the tasks of a call made
    alone); a call with no task left to run is left out."""
    calls = (cloudpickle.loads(value) for value in map(journal.get, journal.keys()) if value)
    return [call for call in calls if call[0]]


def _await_release(cpus: float, timeout_s: float = 60.0) -> None:
    """Wait until ``cpus`` CPUs are free again: a failed Xenna pipeline's workers end when
    nothing refers to their actors any more."""
    import ray

    gc.collect()
    deadline = time.monotonic() + timeout_s
    while (ray.available_resources().get("CPU", 0.0) + 1e-6 < cpus
           and time.monotonic() < deadline):
        time.sleep(0.1)


class XennaExecutor(RayExecutorBase):
    """Runs the pipeline on NVIDIA's Cosmos-Xenna, NeMo Curator's default executor: in
    ``streaming`` mode every stage runs at once, in ``batch`` mode one stage at a time.

    As on the other Ray executors, the source stage runs on the driver, consecutive stages with
    equal ``Resources`` are fused into one Xenna stage, failures follow the shared rules (a
    worker death, which stops Xenna's whole pipeline, is worked around: see
    :meth:`_run_window`), and every batch's report reaches the driver as it finishes. Worker
    counts and CPU shares come from the planner (:meth:`_cpu_shares`). Xenna needs Ray's
    dashboard, and ``RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1`` for GPU stages
    (:class:`XennaRayClient`); it has no teardown hook, so stages' ``teardown()`` does not run.
    Config keys (NeMo Curator's, plus the Ray executors'):
    :class:`~curator.executors.config.XennaConfig` (``ignore_head_node`` is an error;
    ``ignore_failures`` has no effect, with a warning); behaviour: ``docs/executors.md``.
    """

    name = "xenna"
    config_class = XennaConfig
    cfg: XennaConfig
    counts_partitions = True  # a dead worker's partitions are redone: the tracker knows them

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if "ignore_failures" in {**(config or {}), **kwargs}:
            # NeMo's switch between "drop failed tasks" and "stop the run": ours does neither
            config = {k: v for k, v in (config or {}).items() if k != "ignore_failures"}
            kwargs.pop("ignore_failures", None)
            warnings.warn("XennaExecutor: config ignore_failures has no effect in Curator: a task "
                          "that raises is retried max_retries times, then kept whole in the "
                          "rejected sink and the run is not ok; the other tasks go on",
                          UserWarning, stacklevel=2)
        super().__init__(config, **kwargs)

    def setting(self, key: str) -> Any:
        """The config value of ``key`` (NeMo Curator's default where not given)."""
        return getattr(self.cfg, key)

    def execute(self, stages: list[ProcessingStage], initial_tasks: list[Task] | None = None,
                *, context: RunContext | None = None) -> RunResult:
        _xenna()  # a missing extra fails before anything starts
        import ray

        if ray.is_initialized():
            _check_state_api()
            return super().execute(stages, initial_tasks, context=context)
        with ray_client(self.cfg, XennaRayClient):
            return super().execute(stages, initial_tasks, context=context)

    # -- running -------------------------------------------------------------------------------
    def _cpu_shares(self, groups: list[StageGroup],
                    alone: bool = False) -> list[tuple[int | None, float, float]]:
        """Each group's workers (``None``: left to Xenna's autoscaler), CPUs and GPUs per
        worker: the planner's (:func:`~curator.executors.sizing.plan_pools`) for the CPUs
        Xenna keeps for stages (``floor(node CPUs * cpu_allocation_percentage)``). A GPU group,
        or one with a fixed count, gets the planned count (the same as on the other
        executors); a CPU group without one is planned at one worker and left to Xenna's
        autoscaler. ``alone``: one worker per group (a redo in batch mode)."""
        pct = self.cfg.cpu_allocation_percentage
        alive = alive_nodes()
        nodes = [float((n.get("Resources") or {}).get("CPU", 0)) for n in alive]
        budget = sum(math.floor(c * pct) for c in nodes)
        largest = max((math.floor(c * pct) for c in nodes), default=0)
        if budget < 1 or largest < 1:
            raise RayStartError(
                f"XennaExecutor: Xenna keeps floor(CPUs x cpu_allocation_percentage={pct}) CPUs "
                f"of each node for stages, which is 0 on this cluster (node CPUs: {nodes}); "
                f"raise cpu_allocation_percentage (up to 1.0) or use nodes with more CPUs")
        gpus = sum(float((n.get("Resources") or {}).get("GPU", 0)) for n in alive)
        gpu_mem = (node_gpu_memory_gb(self.cfg.gpu_memory_gb_per_gpu)
                   if any(g.resources.gpu_memory_gb for g in groups) else None)
        demands = [self.demand(g) for g in groups]
        pinned = [not alone and bool(d.fixed or d.resources.requires_gpu) for d in demands]
        demands = [d if pin else replace(d, fixed=1)
                   for d, pin in zip(demands, pinned, strict=True)]
        plans = plan_pools(demands, Cluster(budget, gpus, gpu_mem))
        return [((p.workers or None) if pin else (1 if alone else None), min(p.cpus, largest),
                 p.gpus) for p, pin in zip(plans, pinned, strict=True)]

    def _run_window(self, run: Run, groups: list[StageGroup], tasks: list[Task]) -> None:
        """Run ``tasks`` through ``groups`` as one Xenna pipeline, under the dead-worker
        policy every executor shares (:class:`~curator.executors.retry.DeadWorkerPolicy`,
        counting on the driver: the death is detected when Xenna stops).

        Xenna stops the whole pipeline when a worker process dies. The partitions that were
        then running (the journal names them) are redone one task per call and one call at a
        time (batch mode, one worker per group), so the next death names its task: retried
        ``max_retries`` times, then kept whole in the rejected sink by its group's first stage
        (:meth:`~curator.executors.retry.DeadWorkerPolicy.kept_whole`); the other unfinished partitions
        are redone as before. A redo reports only what the driver still waits for (the
        tracker's outstanding tasks); the rest runs quietly, to make what later groups need.
        """
        v1 = _xenna()
        ctx, stats, tracker, cluster = run.ctx, run.stats, run.tracker, run.resources
        if any(g.resources.requires_gpu for g in groups):
            _check_gpu_env()
        firsts = {g.first: g for g in groups}
        journal = RayKV(uuid.uuid4().hex)
        per_call = tasks_per_block(len(tasks), cluster, self.cfg.tasks_per_block)
        seen: dict[int, set[str]] = defaultdict(set)  # the workers that ran each stage
        policy = DeadWorkerPolicy(ctx.max_retries)
        skip: set[Key] = set()
        jobs: deque[tuple[list[Task], bool]] = deque([(tasks, False)])
        redo = False
        try:
            while jobs:
                batch, alone = jobs.popleft()
                if not batch:
                    continue
                loud = (frozenset(tracker.outstanding({t.partition for t in batch}, set(firsts)))
                        if redo else None)
                died = self._pipeline(v1, groups, batch, run, seen, journal,
                                      1 if alone else per_call, alone, loud, frozenset(skip))
                if died is None:
                    continue
                redo = True
                calls = _journaled_calls(journal)
                journal.delete()
                if not calls:  # not in a call: a worker that failed to start or set up
                    raise died
                error = (str(died).strip().splitlines() or [type(died).__name__])[0]
                if alone:  # one call at a time, one task each: the call that was running
                    (key,), (task,) = calls[0]
                    deaths = policy.died(key[0], task)
                    stats.bump(key[0], "worker_restarts")
                    if policy.gives_up(deaths):  # it killed every worker: keep it whole
                        kept = policy.kept_whole(
                            key[0], firsts[key[0]].stages[0], task, deaths,
                            f"its worker process died {deaths} times running this task "
                            f"({error})")
                        run.book(replace(kept, restarts=0, retries=0))  # counted as they came
                        skip.add(key)
                    else:
                        stats.bump(key[0], "retries")
                    unfinished = tracker.open_partitions()
                    jobs.appendleft(([t for t in batch if t.partition in unfinished], True))
                    continue
                stats.bump(min(k[0] for keys, _ in calls for k in keys), "worker_restarts")
                suspects = {k[1] for keys, _ in calls for k in keys}
                unfinished = tracker.open_partitions()
                jobs.extendleft([
                    ([t for t in batch if t.partition in unfinished - suspects], False),
                    ([t for t in batch if t.partition in unfinished & suspects], True)])
        finally:
            journal.delete()

    def _pipeline(self, v1: Any, groups: list[StageGroup], tasks: list[Task], run: Run,
                  seen: dict[int, set[str]], journal: RayKV,
                  per_call: int, alone: bool, loud: frozenset[Key] | None,
                  skip: frozenset[Key]) -> BaseException | None:
        """One Xenna pipeline over ``tasks`` (``alone``: batch mode, one worker per group, one
        task per call); every report is booked as it arrives. Returns ``None``, or Ray's error
        when a worker process died (after Xenna's workers of this pipeline are gone)."""
        import ray
        from ray.util.queue import Empty, Queue

        ctx, stats = run.ctx, run.stats
        reports = Queue(actor_options={"num_cpus": 0})
        specs = []
        for group, (n, cpus, gpus) in zip(groups, self._cpu_shares(groups, alone), strict=True):
            for i in group.indices:
                stats.stages[i].workers = max(stats.stages[i].workers, n or 0)
            stage = _stage_class(group, v1)(group, len(run.stages), ctx.max_retries, cpus, gpus,
                                            reports, run.outputs.collect, per_call, journal,
                                            loud, skip, alone)
            spec = {"num_workers": n, "slots_per_actor": 1 if alone else None,
                    **_xenna_spec(group.stages)}
            specs.append(v1.StageSpec(stage, **spec))
        errors: list[BaseException] = []
        done = threading.Event()

        def drain() -> None:
            """Book reports as they arrive (the checkpoint advances during the run)."""
            try:
                while True:
                    try:
                        worker, batch = reports.get(timeout=0.2)
                    except Empty:
                        if done.is_set() and reports.empty():
                            return
                        continue
                    for rep in batch:
                        run.book(rep)
                        seen[rep.index].add(worker)
                        stage_stats = stats.stages[rep.index]
                        stage_stats.workers = max(stage_stats.workers, len(seen[rep.index]))
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=drain, name="curator-xenna-reports", daemon=True)
        thread.start()
        free = ray.available_resources().get("CPU", 0.0)
        died: BaseException | None = None
        try:
            # Xenna sets _XENNA_ENV in this process for good: undone after the run, so clusters
            # this process starts later are as their client asks
            with environ({"RAY_ADDRESS": ray.get_runtime_context().gcs_address,
                          **{k: os.environ.get(k) for k in _XENNA_ENV}}):
                config = self._pipeline_config(v1, "batch" if alone else None)
                v1.run_pipeline(v1.PipelineSpec(input_data=tasks, stages=specs, config=config))
        except ray.exceptions.RayActorError as exc:  # a worker process died
            died = exc.with_traceback(None)  # its frames hold Xenna's actors: let them go
        finally:
            done.set()
            thread.join()
            ray.kill(reports.actor)
        if errors:
            raise errors[0]
        if died is not None:
            _await_release(free)
        return died

    def _pipeline_config(self, v1: Any, mode: str | None = None) -> Any:
        """Xenna's ``PipelineConfig`` from the config keys (our retries replace Xenna's);
        ``mode`` overrides ``execution_mode``."""
        cfg = self.cfg
        level = {k: v1.VerbosityLevel[str(getattr(cfg, k)).upper()] for k in _VERBOSITY}
        streaming = (mode or cfg.execution_mode) == "streaming"
        mode_specific = v1.StreamingSpecificSpec(
            autoscale_interval_s=float(cfg.autoscale_interval_s),
            autoscaler_verbosity_level=level["autoscaler_verbosity_level"],
            executor_verbosity_level=level["executor_verbosity_level"]) if streaming else None
        return v1.PipelineConfig(
            execution_mode=v1.ExecutionMode.STREAMING if streaming else v1.ExecutionMode.BATCH,
            logging_interval_s=float(cfg.logging_interval),
            log_worker_allocation_layout=cfg.log_worker_allocation_layout,
            cpu_allocation_percentage=cfg.cpu_allocation_percentage,
            return_last_stage_outputs=False, mode_specific=mode_specific,
            actor_pool_verbosity_level=level["actor_pool_verbosity_level"],
            monitoring_verbosity_level=level["monitoring_verbosity_level"])


# StageSpec options a stage may set through xenna_stage_spec() / with_(xenna_stage_spec=...);
# the others (num_workers, retries, failures) stay the executor's, as its policies need them.
_XENNA_SPEC_KEYS = frozenset({"num_workers_per_node", "worker_max_lifetime_m",
                              "worker_restart_interval_m", "over_provision_factor"})


def _xenna_spec(stages: list[ProcessingStage]) -> dict[str, Any]:
    """The Xenna options the group's stages ask for (NeMo Curator's ``xenna_stage_spec``)."""
    spec: dict[str, Any] = {}
    for stage in stages:
        spec.update({k: v for k, v in stage.xenna_stage_spec().items() if k in _XENNA_SPEC_KEYS})
    return spec
