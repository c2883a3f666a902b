"""RayActorPoolExecutor: batch mode on Ray actor pools (one stage over all tasks, then the next)."""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

import cloudpickle

from curator.executors.base import BaseExecutor, RunContext, RunResult, StageCall, invoke_stage
from curator.executors.local import plan_workers
from curator.executors.ray_common import (
    BatchOutcome,
    LineageTracker,
    apply_outcome,
    node_gpu_memory_gb,
    ray_session,
    run_with_retries,
    stage_override,
)
from curator.executors.stats import ProgressReporter, RunStats
from curator.executors.workers import StageSetupError
from curator.stages.base import ProcessingStage
from curator.tasks import EmptyTask, Task

__all__ = ["RayActorPoolExecutor"]

_CONFIG_KEYS = {"num_workers", "max_retries", "address", "num_cpus", "num_gpus",
                "object_store_memory", "ray_timeout_s", "setup_timeout_s"}


class _StageActor:
    """A Ray actor holding one set-up copy of a stage."""

    def __init__(self, stage_bytes: bytes, name: str) -> None:
        self.name = name
        self.stage: ProcessingStage = cloudpickle.loads(stage_bytes)
        self.stage.setup({"worker": name})

    def ready(self) -> bool:
        return True

    def call(self, tasks: list[Task]) -> StageCall:
        return invoke_stage(self.stage, tasks, self.name)

    def teardown(self) -> None:
        self.stage.teardown()


class _Actor:
    """Driver-side handle of one actor: starts it, calls it, replaces it when it dies."""

    def __init__(self, remote_cls: Any, stage: ProcessingStage, name: str,
                 setup_timeout: float) -> None:
        self.remote_cls = remote_cls
        self.stage_bytes = cloudpickle.dumps(stage)
        self.stage_name = stage.name
        self.name = name
        self.setup_timeout = setup_timeout
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        import ray  # noqa: PLC0415

        self.handle = self.remote_cls.remote(self.stage_bytes, self.name)
        try:
            ray.get(self.handle.ready.remote(), timeout=self.setup_timeout)
        except ray.exceptions.GetTimeoutError as exc:
            ray.kill(self.handle)
            raise StageSetupError(
                f"{self.stage_name}: actor {self.name} did not start within "
                f"{self.setup_timeout:.0f}s; the cluster may lack the resources it asks for "
                f"({ray.available_resources()} free): lower the stage's Resources or "
                f"num_workers, or raise setup_timeout_s") from exc
        except ray.exceptions.RayActorError as exc:
            raise StageSetupError(f"{self.stage_name}.setup() failed in actor {self.name}: "
                                  f"{exc}") from exc

    def call(self, tasks: list[Task]) -> StageCall:
        import ray  # noqa: PLC0415

        try:
            return ray.get(self.handle.call.remote(tasks))
        except ray.exceptions.RayActorError as exc:  # the worker process died: replace it
            self.restarts += 1
            self._start()
            return StageCall([], [], 0.0, sum(t.num_items for t in tasks), 0,
                             error=f"actor {self.name} of stage {self.stage_name} died: {exc}")

    def close(self) -> None:
        import ray  # noqa: PLC0415

        try:
            ray.get(self.handle.teardown.remote(), timeout=60)
        finally:
            ray.kill(self.handle)


class RayActorPoolExecutor(BaseExecutor):
    """Runs one stage at a time over all tasks on a pool of Ray actors, then the next stage.

    Each actor holds a copy of the stage and calls ``setup()`` once. ``Resources`` become the
    actors' ``num_cpus`` / ``num_gpus`` (``gpu_memory_gb`` as a fraction of the node's GPU).
    A task that raises is retried ``max_retries`` times, then written to the rejected sink; an
    actor whose process dies is replaced and its batch retried. Simple and robust, but all of a
    stage's outputs are held before the next stage starts: prefer :class:`RayDataExecutor` when
    intermediate data is large.

    Config keys:
        num_workers: actors per stage: int, or ``{stage_name: int}`` (default: from resources).
        max_retries: overrides the run's retry count.
        address, num_cpus, num_gpus, object_store_memory, ray_timeout_s: the Ray cluster (as
            for :class:`RayDataExecutor`; a local one is started and stopped when none runs).
        setup_timeout_s: how long an actor may take to start and run ``setup()`` (default 600).
    """

    name = "ray_actor_pool"

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__({**(config or {}), **kwargs})
        unknown = set(self.config) - _CONFIG_KEYS
        if unknown:
            raise ValueError(f"RayActorPoolExecutor: unknown config keys {sorted(unknown)}; "
                             f"known: {sorted(_CONFIG_KEYS)}")

    def execute(self, stages: list[ProcessingStage], initial_tasks: list[Task] | None = None,
                *, context: RunContext | None = None) -> RunResult:
        ctx = context or RunContext()
        if "max_retries" in self.config:
            ctx.max_retries = int(self.config["max_retries"])
        stats = RunStats.for_stages([s.name for s in stages], executor=self.name)
        with ray_session(self.config) as client:
            cluster = client.cluster_resources()
            reporter = ProgressReporter(stats, ctx.progress_interval) if ctx.progress else None
            if reporter:
                reporter.__enter__()
            start = time.perf_counter()
            try:
                outputs = self._run(stages, self.initial(initial_tasks), ctx, stats, cluster)
            finally:
                stats.wall_s = time.perf_counter() - start
                if reporter:
                    reporter.__exit__()
        return self.finish(ctx, stats, outputs)

    def _run(self, stages: list[ProcessingStage], tasks: list[Task], ctx: RunContext,
             stats: RunStats, cluster: dict[str, float]) -> list[Task]:
        lineage = LineageTracker(ctx.checkpoint, len(stages))
        source = isinstance(tasks[0], EmptyTask)
        if not source:
            for t in tasks:
                t.metadata.setdefault("partition", t.task_id)
            tasks, skipped = ctx.skip_done(tasks)
            stats.stages[0].skipped += skipped
            for t in tasks:
                lineage.seed(t.partition, t.task_id)
        for i, stage in enumerate(stages):
            if not tasks:
                break
            stage.setup_on_node({"node": "ray"}, {})
            nxt: list[Task] = []
            last = i + 1 == len(stages)

            def handle(o: BatchOutcome, i: int = i, stage: ProcessingStage = stage,
                       nxt: list[Task] = nxt, last: bool = last) -> None:
                """Bookkeeping as each batch lands (so the checkpoint advances during the
                last stage, not only at its end)."""
                outputs, skipped = o.call.outputs, 0
                if i == 0 and source:
                    outputs, skipped = ctx.skip_done(outputs)
                    o.call.outputs = outputs
                apply_outcome(ctx, stats, i, stage.name, len(o.inputs), o.call,
                              retries=o.retries, failed=o.failed,
                              failed_task_id=o.inputs[0].task_id, restarts=o.restarts,
                              skipped=skipped)
                nxt.extend(outputs)
                lineage.report(i, [(t.partition, t.task_id) for t in o.inputs],
                               [(t.partition, t.task_id) for t in outputs] if not last else [])

            self._run_stage(stage, tasks, ctx, cluster, stats, i, handle)
            tasks = nxt
        return tasks

    def _run_stage(self, stage: ProcessingStage, tasks: list[Task], ctx: RunContext,
                   cluster: dict[str, float], stats: RunStats, i: int,
                   handle: Any) -> None:
        """Run ``stage`` over ``tasks`` on an actor pool; ``handle(outcome)`` is called (one
        at a time) as each batch finishes."""
        import ray  # noqa: PLC0415

        cpus = float(cluster.get("CPU", 1.0))
        gpus = float(cluster.get("GPU", 0.0))
        res = stage.resources
        n = plan_workers(stage, cpus, int(gpus), stage_override(self.config, "num_workers", stage))
        batches = [tasks[k:k + stage.batch_size] for k in range(0, len(tasks), stage.batch_size)]
        n = max(1, min(n, len(batches)))
        stats.stages[i].workers = n
        opts: dict[str, Any] = {"num_cpus": min(res.cpus, cpus), "max_restarts": 0}
        frac = res.gpu_fraction(node_gpu_memory_gb() if res.gpu_memory_gb else None)
        if frac:
            opts["num_gpus"] = frac
        remote_cls = ray.remote(**opts)(_StageActor)
        timeout = float(self.config.get("setup_timeout_s", 600.0))
        work: queue.Queue = queue.Queue()
        for b in batches:
            work.put(b)
        errors: list[BaseException] = []
        lock = threading.Lock()

        def worker(w: int) -> None:
            actor = None
            try:
                actor = _Actor(remote_cls, stage, f"{stage.name}-{w}", timeout)
                while not errors:
                    try:
                        batch = work.get_nowait()
                    except queue.Empty:
                        break
                    before = actor.restarts
                    out = run_with_retries(stage.name, actor.call, batch, ctx.max_retries)
                    out[0].restarts = actor.restarts - before
                    with lock:
                        for o in out:
                            handle(o)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the driver thread
                errors.append(exc)
            finally:
                if actor is not None:
                    try:
                        actor.close()
                    except Exception as exc:  # noqa: BLE001
                        errors.append(exc)

        threads = [threading.Thread(target=worker, args=(w,), daemon=True,
                                    name=f"curator-{stage.name}-{w}") for w in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)
        if errors:
            raise errors[0]
