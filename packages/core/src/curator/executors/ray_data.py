"""RayDataExecutor: streaming execution on Ray Data (every stage runs at once)."""

from __future__ import annotations

import time
import warnings
from typing import Any

import cloudpickle

from curator.executors.base import BaseExecutor, RunContext, RunResult, invoke_stage
from curator.executors.local import plan_workers
from curator.executors.ray_common import (
    LineageTracker,
    apply_outcome,
    has_setup,
    node_gpu_memory_gb,
    ray_session,
    run_with_retries,
    stage_override,
)
from curator.executors.stats import ProgressReporter, RunStats
from curator.stages.base import ProcessingStage
from curator.tasks import EmptyTask, Task

__all__ = ["RayDataExecutor"]

_CONFIG_KEYS = {"num_workers", "max_retries", "address", "num_cpus", "num_gpus",
                "object_store_memory", "ray_timeout_s", "max_worker_restarts"}


class _StageUDF:
    """Runs one stage on a batch of rows ``{"task": pickled Task, "event": pickled report}``.

    Report rows of upstream stages pass through unchanged; each batch adds one report per
    (retried) outcome so the driver can keep statistics, the rejected sink and the checkpoint.
    Used as a function (stateless stage, Ray tasks) or a class (stage with ``setup``, actors).
    """

    def __init__(self, stage_bytes: bytes, index: int, last: bool, max_retries: int,
                 done: frozenset[str] | None, actor: bool) -> None:
        self.stage: ProcessingStage = cloudpickle.loads(stage_bytes)
        self.index = index
        self.last = last
        self.max_retries = max_retries
        self.done = done
        self.worker = f"{self.stage.name}-ray"
        if actor:
            self.stage.setup({"worker": self.worker})

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa  # noqa: PLC0415

        from curator.checkpoint import CheckpointStore  # noqa: PLC0415

        tasks_col = batch.column("task").to_pylist()
        events = [e for e in batch.column("event").to_pylist() if e]
        tasks = [cloudpickle.loads(t) for t in tasks_col if t]
        out_tasks: list[bytes] = []
        if tasks:
            outcomes = run_with_retries(self.stage.name,
                                        lambda b: invoke_stage(self.stage, b, self.worker),
                                        tasks, self.max_retries)
            for o in outcomes:
                outputs, skipped = o.call.outputs, 0
                if self.done is not None and isinstance(o.inputs[0], EmptyTask):
                    kept = [t for t in outputs
                            if CheckpointStore.key(t.partition or t.task_id) not in self.done]
                    outputs, skipped = kept, len(outputs) - len(kept)
                    o.call.outputs = kept
                    o.call.items_out = sum(t.num_items for t in kept)
                report = {"index": self.index, "tasks_in": len(o.inputs), "call": o.call,
                          "retries": o.retries, "failed": o.failed, "skipped": skipped,
                          "failed_task_id": o.inputs[0].task_id,
                          "consumed": [(t.partition, t.task_id) for t in o.inputs],
                          "produced": [(t.partition, t.task_id) for t in outputs]}
                if not self.last:
                    report["call"] = _without_outputs(o.call)
                events.append(cloudpickle.dumps(report))
                if not self.last:
                    out_tasks.extend(cloudpickle.dumps(t) for t in outputs)
        rows_task = out_tasks + [b""] * len(events)
        rows_event = [b""] * len(out_tasks) + events
        return pa.table({"task": pa.array(rows_task, pa.binary()),
                         "event": pa.array(rows_event, pa.binary())})

    def __del__(self) -> None:  # actors end with the dataset: give the stage its teardown
        try:
            self.stage.teardown()
        except Exception:  # noqa: BLE001, S110 - nothing to report to at interpreter exit
            pass


def _without_outputs(call: Any) -> Any:
    from dataclasses import replace  # noqa: PLC0415

    return replace(call, outputs=[None] * len(call.outputs))


class RayDataExecutor(BaseExecutor):
    """Streams tasks through all stages at once on Ray Data.

    Each stage becomes a ``map_batches`` step of ``batch_size`` tasks (tasks travel as a column
    of cloudpickled bytes). Stages that override ``setup()`` run in actor pools (``setup`` once
    per actor); stateless stages run as Ray tasks. ``Resources.cpus`` / ``gpus`` become
    ``num_cpus`` / ``num_gpus`` (fractional allowed), ``gpu_memory_gb`` the matching fraction of
    the node's GPU. When the actor pools would need more CPUs than the cluster has, every stage's
    CPU share is scaled down so any number of stages streams on a small machine.

    A task that raises is retried ``max_retries`` times and then written to the rejected sink; a
    worker process that dies is restarted by Ray and its batch retried.

    Config keys:
        num_workers: actors per stage: int, or ``{stage_name: int}`` (default: from resources).
        max_retries: overrides the run's retry count.
        address: connect to this Ray cluster; without one and with no Ray running, a local
            cluster is started for the run (``num_cpus``, ``num_gpus``, ``object_store_memory``)
            and shut down at the end.
        ray_timeout_s: the longest a Ray start or connect may take (default 120).
        max_worker_restarts: how often one batch may kill its worker before the run fails
            (default 4).
    """

    name = "ray_data"

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__({**(config or {}), **kwargs})
        unknown = set(self.config) - _CONFIG_KEYS
        if unknown:
            raise ValueError(f"RayDataExecutor: unknown config keys {sorted(unknown)}; "
                             f"known: {sorted(_CONFIG_KEYS)}")

    def execute(self, stages: list[ProcessingStage], initial_tasks: list[Task] | None = None,
                *, context: RunContext | None = None) -> RunResult:
        ctx = context or RunContext()
        if "max_retries" in self.config:
            ctx.max_retries = int(self.config["max_retries"])
        stats = RunStats.for_stages([s.name for s in stages], executor=self.name)
        with ray_session(self.config) as client:
            outputs = self._run(stages, self.initial(initial_tasks), ctx, stats,
                                client.cluster_resources())
        return self.finish(ctx, stats, outputs)

    # -- planning ------------------------------------------------------------------------------
    def remote_args(self, stages: list[ProcessingStage],
                    cluster: dict[str, float]) -> list[dict[str, Any]]:
        """``map_batches`` arguments (num_cpus, num_gpus, compute) of every stage."""
        import ray.data  # noqa: PLC0415

        cpus = float(cluster.get("CPU", 1.0))
        gpus = float(cluster.get("GPU", 0.0))
        gpu_mem = node_gpu_memory_gb() if any(s.resources.gpu_memory_gb for s in stages) else None
        split = self.repartitions(cpus)
        # Actor pools hold their CPUs for the whole run: they share what is left after one CPU
        # for Ray tasks (stateless stages and the 1-CPU block repartitioning between stages),
        # so every pool starts and no task waits forever, however many stages there are.
        room = 0.95 * (cpus - 1 if split else cpus)
        actor_cpus = sum(s.resources.cpus for s in stages if has_setup(s)) or 1.0
        plans = []
        for s in stages:
            fixed = stage_override(self.config, "num_workers", s) or s.num_workers
            if fixed:
                n = int(fixed)
            elif has_setup(s):  # an equal share of the room, at most what resources allow
                n = max(1, min(plan_workers(s, cpus, int(gpus)), int(room / actor_cpus)))
            else:
                n = plan_workers(s, cpus, int(gpus))
            plans.append((s, n, fixed))
        self._planned = [n for _, n, _ in plans]
        want = sum(s.resources.cpus * n for s, n, _ in plans if has_setup(s))
        scale = min(1.0, room / want) if want else 1.0
        args = []
        for s, n, fixed in plans:
            a: dict[str, Any] = {"num_cpus": round(max(s.resources.cpus * scale, 0.01), 3)}
            frac = s.resources.gpu_fraction(gpu_mem)
            if frac:
                a["num_gpus"] = frac
            if has_setup(s):
                a["compute"] = ray.data.ActorPoolStrategy(size=n)
            elif fixed:
                a["concurrency"] = int(fixed)
            args.append(a)
        return args

    @staticmethod
    def repartitions(cpus: float) -> bool:
        """Whether to split blocks between stages (a 1-CPU task each; off below 2 CPUs)."""
        return cpus >= 2

    # -- running -------------------------------------------------------------------------------
    def _run(self, stages: list[ProcessingStage], initial: list[Task], ctx: RunContext,
             stats: RunStats, cluster: dict[str, float]) -> list[Task]:
        import pyarrow as pa  # noqa: PLC0415
        import ray.data  # noqa: PLC0415

        dctx = ray.data.DataContext.get_current()
        dctx.enable_progress_bars = False
        dctx.print_on_execution_start = False
        # Per-operator reservations split a small cluster into slices too thin for any actor
        # pool (the run would wait forever); the pools are sized to fit together instead.
        dctx.op_resource_reservation_enabled = False
        lineage = LineageTracker(ctx.checkpoint, len(stages))
        done: frozenset[str] | None = None
        if isinstance(initial[0], EmptyTask):
            if ctx.checkpoint is not None:
                done = frozenset(ctx.checkpoint.done())
        else:
            for t in initial:
                t.metadata.setdefault("partition", t.task_id)
            initial, skipped = ctx.skip_done(initial)
            stats.stages[0].skipped += skipped
            for t in initial:
                lineage.seed(t.partition, t.task_id)
        start = time.perf_counter()
        outputs: list[Task] = []
        if not initial:
            stats.wall_s = time.perf_counter() - start
            return outputs
        table = pa.table({"task": pa.array([cloudpickle.dumps(t) for t in initial], pa.binary()),
                          "event": pa.array([b""] * len(initial), pa.binary())})
        split = self.repartitions(float(cluster.get("CPU", 1.0)))
        ds = ray.data.from_arrow(table)
        if split:
            ds = ds.repartition(target_num_rows_per_block=max(1, stages[0].batch_size))
        restarts = int(self.config.get("max_worker_restarts", 4))
        for i, (stage, args) in enumerate(zip(stages, self.remote_args(stages, cluster),
                                              strict=True)):
            stats.stages[i].workers = self._planned[i]
            stage.setup_on_node({"node": "ray"}, {})
            udf_args = (cloudpickle.dumps(stage), i, i + 1 == len(stages), ctx.max_retries,
                        done if i == 0 else None)
            with warnings.catch_warnings():  # max_(task_)retries: "ray_remote_args deprecated"
                warnings.simplefilter("ignore", DeprecationWarning)
                if has_setup(stage):
                    ds = ds.map_batches(_StageUDF, fn_constructor_args=(*udf_args, True),
                                        batch_size=stage.batch_size, batch_format="pyarrow",
                                        zero_copy_batch=True, max_task_retries=restarts, **args)
                else:
                    udf = _StageUDF(*udf_args, False)
                    ds = ds.map_batches(udf.__call__, batch_size=stage.batch_size,
                                        batch_format="pyarrow", zero_copy_batch=True,
                                        max_retries=restarts, **args)
            if split and i + 1 < len(stages):  # small blocks, so the next stage's workers share them
                ds = ds.repartition(target_num_rows_per_block=max(1, stages[i + 1].batch_size))
        reporter = ProgressReporter(stats, ctx.progress_interval) if ctx.progress else None
        if reporter:
            reporter.__enter__()
        try:
            for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
                for raw in batch.column("event").to_pylist():
                    if raw:
                        self._report(cloudpickle.loads(raw), stages, ctx, stats, lineage,
                                     outputs)
        finally:
            if reporter:
                reporter.__exit__()
            stats.wall_s = time.perf_counter() - start
        return outputs

    @staticmethod
    def _report(rep: dict[str, Any], stages: list[ProcessingStage], ctx: RunContext,
                stats: RunStats, lineage: LineageTracker, outputs: list[Task]) -> None:
        i = rep["index"]
        call = rep["call"]
        apply_outcome(ctx, stats, i, stages[i].name, rep["tasks_in"], call,
                      retries=rep["retries"], failed=rep["failed"],
                      failed_task_id=rep["failed_task_id"], skipped=rep["skipped"])
        if i + 1 == len(stages):
            outputs.extend(call.outputs)
        lineage.report(i, rep["consumed"], rep["produced"])
