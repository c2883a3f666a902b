"""RayActorPoolExecutor: batch mode on Ray actor pools (one stage over all tasks, then the next)."""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from dataclasses import replace
from typing import Any

import cloudpickle

from curator.executors.base import (
    OutputCollector,
    RunContext,
    StageCall,
    ensure_setup,
    failed_task_record,
    release_stage,
)
from curator.executors.fusion import StageGroup, chain_reports
from curator.executors.local import plan_workers
from curator.executors.ray_client import alive_nodes, node_slots
from curator.executors.ray_common import (
    RayExecutorBase,
    node_gpu_memory_gb,
    stage_override,
    start_tasks,
)
from curator.executors.retry import BatchOutcome, OutcomeReport, apply_report, outcome_report
from curator.executors.stats import RunStats
from curator.executors.workers import StageSetupError
from curator.stages.base import ProcessingStage
from curator.tasks import Task

__all__ = ["RayActorPoolExecutor", "GrowthController"]


class _GroupActor:
    """A Ray actor holding one set-up copy of a group of fused stages."""

    def __init__(self, group_bytes: bytes, name: str) -> None:
        self.name = name
        self.group: StageGroup = cloudpickle.loads(group_bytes)
        for stage in self.group.stages:
            ensure_setup(stage, {"worker": name})

    def ready(self) -> bool:
        return True

    def call(self, tasks: list[Task], max_retries: int, n_stages: int,
             collect: bool = True) -> tuple[list[OutcomeReport], list[Task]]:
        reports, out = chain_reports(self.group, tasks, max_retries, self.name, n_stages)
        if not collect:  # the run's outputs go back as counts and paths only
            reports = [replace(r, call=replace(r.call, outputs=[OutputCollector.stub(t)
                                                                 for t in r.call.outputs]))
                       if r.index + 1 == n_stages else r for r in reports]
        return reports, out

    def teardown(self) -> None:
        for stage in self.group.stages:
            release_stage(stage)


class _ActorDied(Exception):
    pass


class _Actor:
    """Driver-side handle of one actor: starts it, calls it, replaces it when it dies."""

    def __init__(self, remote_cls: Any, group: StageGroup, name: str,
                 setup_timeout: float) -> None:
        self.remote_cls = remote_cls
        self.group_bytes = cloudpickle.dumps(group)
        self.group_name = group.name
        self.name = name
        self.setup_timeout = setup_timeout
        self._start()

    def _start(self) -> None:
        import ray  # noqa: PLC0415

        self.handle = self.remote_cls.remote(self.group_bytes, self.name)
        try:
            ray.get(self.handle.ready.remote(), timeout=self.setup_timeout)
        except ray.exceptions.GetTimeoutError as exc:
            ray.kill(self.handle)
            raise StageSetupError(
                f"{self.group_name}: actor {self.name} did not start within "
                f"{self.setup_timeout:.0f}s; the cluster may lack the resources it asks for "
                f"({ray.available_resources()} free): lower the stage's Resources or "
                f"num_workers, or raise setup_timeout_s") from exc
        except ray.exceptions.RayActorError as exc:
            raise StageSetupError(f"{self.group_name}.setup() failed in actor {self.name}: "
                                  f"{exc}") from exc

    def submit(self, tasks: list[Task], max_retries: int, n_stages: int,
               collect: bool = True) -> Any:
        """Start a call on the actor without waiting (see :meth:`wait`)."""
        return self.handle.call.remote(tasks, max_retries, n_stages, collect)

    def wait(self, ref: Any) -> tuple[list[OutcomeReport], list[Task]]:
        """The result of a submitted call; raises ``_ActorDied`` (after replacing the actor)
        when the worker process died."""
        import ray  # noqa: PLC0415

        try:
            return ray.get(ref)
        except ray.exceptions.RayActorError as exc:  # the worker process died: replace it
            self._start()
            raise _ActorDied(f"actor {self.name} of {self.group_name} died: {exc}") from exc

    def call(self, tasks: list[Task], max_retries: int, n_stages: int,
             collect: bool = True) -> tuple[list[OutcomeReport], list[Task]]:
        return self.wait(self.submit(tasks, max_retries, n_stages, collect))

    def run(self, group: StageGroup, batch: list[Task], max_retries: int, n_stages: int,
            collect: bool = True, died: _ActorDied | None = None,
            ) -> tuple[list[OutcomeReport], list[Task]]:
        """Call with the retry policy for dying workers: a batch whose worker died is split
        and each task retried ``max_retries`` times, then rejected by the group's first stage.
        Restarts and those retries are counted on the group's first stage. ``died``: the
        batch already killed the actor once (a pipelined call)."""
        deaths = 0
        while True:
            try:
                if died is not None:
                    exc, died = died, None
                    raise exc
                reports, out = self.call(batch, max_retries, n_stages, collect)
                break
            except _ActorDied as exc:
                deaths += 1
                if len(batch) > 1:  # find the task that kills its worker
                    parts = [self.run(group, [t], max_retries, n_stages, collect) for t in batch]
                    reports = [r for rs, _ in parts for r in rs]
                    reports[0].restarts += deaths
                    return reports, [t for _, ts in parts for t in ts]
                if deaths > max_retries:
                    failed = BatchOutcome(batch, StageCall([], [], 0.0, batch[0].num_items, 0),
                                          retries=deaths - 1, restarts=deaths,
                                          failed=failed_task_record(group.stages[0], batch[0],
                                                                    str(exc)))
                    return [outcome_report(group.first, failed, keep_outputs=False)], []
        reports[0].restarts += deaths
        reports[0].retries += deaths
        return reports, out

    def close(self) -> None:
        import ray  # noqa: PLC0415

        try:
            ray.get(self.handle.teardown.remote(), timeout=60)
        finally:
            ray.kill(self.handle)


class GrowthController:
    """Decides when an actor pool takes one more actor: while batches wait beyond what the
    running actors hold, the pool is under ``max_workers`` and the cluster has room for one
    more (a node joined, or another group let go), checked every ``interval_s``."""

    def __init__(self, max_workers: int, cpus: float, gpus: float, interval_s: float) -> None:
        self.max_workers = max_workers
        self.cpus, self.gpus = cpus, gpus
        self.interval_s = interval_s
        self._next = time.monotonic() + interval_s

    def wants_another(self, running: int, waiting: int, depth: int,
                      errors: list[BaseException]) -> bool:
        if errors or running >= self.max_workers or waiting < depth:
            return False
        if time.monotonic() < self._next:
            return False
        self._next = time.monotonic() + self.interval_s
        import ray  # noqa: PLC0415

        free = ray.available_resources()
        return (free.get("CPU", 0.0) + 1e-9 >= self.cpus
                and (not self.gpus or free.get("GPU", 0.0) + 1e-9 >= self.gpus))


class RayActorPoolExecutor(RayExecutorBase):
    """Runs one group of stages at a time over all tasks on a pool of Ray actors, then the next.

    The source stage runs on the driver (as for :class:`RayDataExecutor`); consecutive stages
    asking for the same ``Resources`` are fused into one group (``fuse_stages=False``: one stage
    per group). Each actor holds a copy of its group and calls every member's ``setup()`` once.
    ``Resources`` become the actors' ``num_cpus`` / ``num_gpus`` (``gpu_memory_gb`` as a
    fraction of the node's GPU). A task that raises is retried ``max_retries`` times, then
    written to the rejected sink; an actor whose process dies is replaced and its batch retried
    (a restart, and a task that kills every attempt, are counted on the group's first stage).
    Simple and robust, but all of a group's outputs are held before the next group starts:
    prefer :class:`RayDataExecutor` when intermediate data is large.

    Config keys:
        num_workers: actors per group: int, or ``{stage_name: int}`` (a group takes the largest
            of its members; default: from resources).
        fuse_stages: fuse consecutive stages with equal resources (default ``True``).
        max_retries: overrides the run's retry count.
        address, num_cpus, num_gpus, object_store_memory, ray_timeout_s: the Ray cluster (as
            for :class:`RayDataExecutor`; a local one is started and stopped when none runs).
        setup_timeout_s: how long an actor may take to start and run ``setup()`` (default 600).
        batches_in_flight: batches queued on each actor at once (default 2), so an actor never
            waits for the driver between batches.
        collect_outputs: bring the output tasks back to the driver (default ``True``); with
            ``False`` actors send only their count and paths (``result.num_outputs``,
            ``result.output_paths``) and the result list stays empty.
        ignore_head_node: place no actor on the cluster's head node (NeMo Curator's option;
            default ``False``). Actors are spread over the nodes that have room for them.
        gpu_memory_gb_per_gpu: GPU memory in GB to size ``gpu_memory_gb`` against where the
            cluster's GPU type is unknown (see :mod:`curator.executors.gpu_sizing`).
        max_workers: let a group's pool grow up to this many actors (int or
            ``{stage_name: int}``; default: the starting size, no growth): while batches wait
            and the cluster has room (a node joined), one more actor starts every
            ``scale_interval_s`` (default 2). Actors leave as the work runs out.
    """

    name = "ray_actor_pool"
    config_keys = RayExecutorBase.config_keys | {"setup_timeout_s", "ignore_head_node",
                                                 "batches_in_flight", "max_workers",
                                                 "scale_interval_s"}

    def max_workers(self, group: StageGroup) -> int:
        """The most actors ``group``'s pool may grow to (``max_workers`` config), 0 for none."""
        return max((int(stage_override(self.config, "max_workers", s) or 0)
                    for s in group.stages), default=0)

    def _run(self, stages: list[ProcessingStage], initial: list[Task], ctx: RunContext,
             stats: RunStats, cluster: dict[str, float]) -> OutputCollector:
        tracker = ctx.tracker(len(stages))
        names = [s.name for s in stages]
        tasks, first = start_tasks(stages, initial, ctx, stats, tracker)
        outputs = OutputCollector(bool(self.config.get("collect_outputs", True)))
        for group in self.groups(stages[first:], first):
            if not tasks:
                break
            for stage in group.stages:
                stage.setup_on_node({"node": "ray"}, {})
            nxt: list[Task] = []

            def handle(reports: list[OutcomeReport], out: list[Task],
                       nxt: list[Task] = nxt) -> None:
                """Bookkeeping as each batch lands (so the checkpoint advances during the
                last group, not only at its end)."""
                for rep in reports:
                    nxt.extend(apply_report(rep, names, ctx, stats, tracker))
                nxt.extend(out)

            self._run_group(group, tasks, ctx, cluster, stats, len(stages), handle)
            tasks = nxt
        outputs.add(tasks)
        return outputs

    def _run_group(self, group: StageGroup, tasks: list[Task], ctx: RunContext,
                   cluster: dict[str, float], stats: RunStats, n_stages: int,
                   handle: Any) -> None:
        """Run ``group`` over ``tasks`` on an actor pool; ``handle(reports, outputs)`` is
        called (one at a time) as each batch finishes."""
        import ray  # noqa: PLC0415

        cpus = float(cluster.get("CPU", 1.0))
        gpus = float(cluster.get("GPU", 0.0))
        ignore_head = bool(self.config.get("ignore_head_node", False))
        nodes = alive_nodes(ignore_head)
        if ignore_head:  # size the pool for the nodes it may use
            cpus = sum(float(nd["Resources"].get("CPU", 0.0)) for nd in nodes) or 1.0
            gpus = sum(float(nd["Resources"].get("GPU", 0.0)) for nd in nodes)
        res = group.resources
        n = group.num_workers(self.workers_override)
        n = n or plan_workers(group.stages[0], cpus, int(gpus))
        size = group.batch_size
        batches = [tasks[k:k + size] for k in range(0, len(tasks), size)]
        n = max(1, min(n, len(batches)))
        for i in group.indices:
            stats.stages[i].workers = n
        opts: dict[str, Any] = {"num_cpus": min(res.cpus, cpus), "max_restarts": 0}
        frac = res.gpu_fraction(node_gpu_memory_gb(self.config.get("gpu_memory_gb_per_gpu"))
                                if res.gpu_memory_gb else None)
        if frac:
            opts["num_gpus"] = frac
        remote_cls = ray.remote(**opts)(_GroupActor)
        # actors spread over every node with room for them (pinned softly, so a busy node
        # passes its actor on; with ignore_head_node firmly, so none lands on the head)
        slots = node_slots(nodes, opts["num_cpus"], frac)

        def placed(w: int) -> Any:
            from ray.util.scheduling_strategies import (  # noqa: PLC0415
                NodeAffinitySchedulingStrategy,
            )

            return remote_cls.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
                slots[w % len(slots)], soft=not ignore_head))
        timeout = float(self.config.get("setup_timeout_s", 600.0))
        work: queue.Queue = queue.Queue()
        for b in batches:
            work.put(b)
        errors: list[BaseException] = []
        lock = threading.Lock()

        depth = max(1, int(self.config.get("batches_in_flight", 2)))
        collect = bool(self.config.get("collect_outputs", True))
        args = (ctx.max_retries, n_stages, collect)

        def worker(w: int) -> None:
            """Keeps ``depth`` batches queued on its actor, so the actor never waits for the
            driver; calls run in order, so the oldest is the one a dead actor was running."""
            actor = None
            pending: deque[tuple[list[Task], Any]] = deque()
            try:
                actor = _Actor(placed(w), group, f"{group.name}-{w}", timeout)
                while not errors:
                    while len(pending) < depth:
                        try:
                            batch = work.get_nowait()
                        except queue.Empty:
                            break
                        pending.append((batch, actor.submit(batch, *args)))
                    if not pending:
                        break
                    batch, ref = pending.popleft()
                    try:
                        reports, out = actor.wait(ref)
                    except _ActorDied as died:  # the calls queued behind it died with it
                        rest = [b for b, _ in pending]
                        pending.clear()
                        reports, out = actor.run(group, batch, *args, died=died)
                        pending.extend((b, actor.submit(b, *args)) for b in rest)
                    with lock:
                        handle(reports, out)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the driver thread
                errors.append(exc)
            finally:
                if actor is not None:
                    try:
                        actor.close()
                    except Exception as exc:  # noqa: BLE001
                        errors.append(exc)

        threads: list[threading.Thread] = []

        def start_worker() -> None:
            t = threading.Thread(target=worker, args=(len(threads),), daemon=True,
                                 name=f"curator-{group.name}-{len(threads)}")
            threads.append(t)
            t.start()

        for _ in range(n):
            start_worker()
        grow = GrowthController(self.max_workers(group), opts["num_cpus"], frac or 0.0,
                                float(self.config.get("scale_interval_s", 2.0)))
        while any(t.is_alive() for t in threads):
            threads[-1].join(0.2)
            if grow.wants_another(len(threads), work.qsize(), depth, errors):
                slots[:] = node_slots(alive_nodes(ignore_head), opts["num_cpus"], frac or 0.0)
                start_worker()
                for i in group.indices:
                    stats.stages[i].workers = len(threads)
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
