"""LocalExecutor: the embedded streaming executor (no server, no cluster)."""

from __future__ import annotations

import functools
import os
import queue
import threading
import time
import warnings
from typing import Any

from curator.executors.base import (
    BaseExecutor,
    OutputCollector,
    RunContext,
    RunResult,
    SourceStageError,
    StageCall,
)
from curator.executors.retry import apply_report, outcome_report, run_with_retries
from curator.executors.sizing import workers_alone
from curator.executors.stats import ProgressReporter, RunStats
from curator.executors.workers import (
    ProcessWorker,
    StageSetupError,
    ThreadWorker,
    WorkerDied,
    worker_command,
)
from curator.stages.base import ProcessingStage
from curator.tasks import EmptyTask, Task

__all__ = ["LocalExecutor", "SourceStageError", "plan_workers", "available_gpus"]

_END = object()


def available_gpus() -> int:
    """CUDA devices visible to this process (0 without torch or a GPU)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return 0
    try:
        import torch  # noqa: PLC0415 - only when a GPU stage asks
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def plan_workers(stage: ProcessingStage, cpus: float, gpus: int,
                 override: int | None = None) -> int:
    """Workers for ``stage`` on a machine with ``cpus`` cores and ``gpus`` GPUs (see
    :mod:`curator.executors.sizing`)."""
    return workers_alone(stage.resources, override or stage.num_workers, cpus, gpus)


class LocalExecutor(BaseExecutor):
    """Runs every stage at once on different tasks, in this machine's threads and processes.

    Tasks flow through bounded queues (memory stays flat as the input grows). Each stage gets
    workers from its ``Resources`` and the machine (or ``num_workers``): threads for stages with
    ``worker_mode="thread"``, worker processes for ``worker_mode="process"``. Worker processes are
    fresh interpreters that receive the stage by value and never import the user's ``__main__``,
    so scripts without a main guard, ``python -c``, stdin and notebooks work. ``setup()`` runs once
    per worker, ``teardown()`` at the end. A failing task is retried, then written with its
    traceback to the rejected sink; a dead worker process is replaced.

    Config keys:
        num_workers: int for every stage, or ``{stage_name: int}``.
        queue_size: tasks buffered between two stages (default: 2 per consumer worker, at least
            ``batch_size``).
        max_retries: overrides the run's retry count.
        cpus: cores to plan for (default: this machine's).
        collect_outputs: keep the output tasks on the result (default ``True``); ``False`` keeps
            only their count and paths (``result.num_outputs``, ``result.output_paths``).
    """

    name = "local"

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__({**(config or {}), **kwargs})
        unknown = set(self.config) - {"num_workers", "queue_size", "max_retries", "cpus",
                                      "collect_outputs"}
        if unknown:
            raise ValueError(f"LocalExecutor: unknown config keys {sorted(unknown)}")

    # -- planning ---------------------------------------------------------------------------------
    def _workers_for(self, stage: ProcessingStage, cpus: float, gpus: int) -> int:
        nw = self.config.get("num_workers")
        override = nw.get(stage.name) if isinstance(nw, dict) else nw
        return plan_workers(stage, cpus, gpus, override)

    def execute(self, stages: list[ProcessingStage], initial_tasks: list[Task] | None = None,
                *, context: RunContext | None = None) -> RunResult:
        ctx = context or RunContext()
        if "max_retries" in self.config:
            ctx.max_retries = int(self.config["max_retries"])
        run = _LocalRun(self, stages, self.initial(initial_tasks), ctx)
        outputs = run.run()
        return self.finish(ctx, run.stats, outputs)


def _processes_available(stages: list[ProcessingStage]) -> bool:
    """Whether worker processes can start here; else warn once that threads run them."""
    wanted = [s.name for s in stages if s.worker_mode == "process"]
    if not wanted or worker_command(0) is not None:
        return True
    warnings.warn(f"LocalExecutor: this Python cannot start worker processes (no executable), so "
                  f"the process-mode stages {wanted} run in threads of this process",
                  RuntimeWarning, stacklevel=4)
    return False


class _LocalRun:
    """One execution: queues, worker threads, bookkeeping."""

    def __init__(self, executor: LocalExecutor, stages: list[ProcessingStage],
                 initial: list[Task], ctx: RunContext) -> None:
        self.stages = stages
        self.ctx = ctx
        self.stats = RunStats.for_stages([s.name for s in stages], executor="local")
        cpus = float(executor.config.get("cpus") or os.cpu_count() or 1)
        gpus = available_gpus() if any(s.resources.requires_gpu for s in stages) else 0
        self.n_workers = [executor._workers_for(s, cpus, gpus) for s in stages]
        self.n_workers[0] = min(self.n_workers[0], max(1, len(initial)))
        qsize = executor.config.get("queue_size")
        self.queues: list[queue.Queue] = [queue.Queue()]
        for s, n in zip(stages[1:], self.n_workers[1:], strict=True):
            self.queues.append(queue.Queue(maxsize=qsize or max(2 * n + 2, s.batch_size * (n + 1))))
        self.processes = _processes_available(stages)
        self.stop = threading.Event()
        self.fatal: list[BaseException] = []
        self.results = OutputCollector(bool(executor.config.get("collect_outputs", True)))
        self.lock = threading.Lock()
        self.alive = list(self.n_workers)
        self.procs: list[ProcessWorker] = []
        self.tracker = ctx.tracker(len(stages))
        self.names = [s.name for s in stages]
        self.initial = initial

    def run(self) -> OutputCollector:
        for i, stage in enumerate(self.stages):
            self.stats.stages[i].workers = self.n_workers[i]
            stage.setup_on_node({"node": "local"}, {})
        first = self.initial
        if not isinstance(first[0], EmptyTask):
            for t in first:
                t.metadata.setdefault("partition", t.task_id)
            first, skipped = self.ctx.skip_done(first)
            self.stats.stages[0].skipped += skipped
        for t in first:
            self.tracker.seed(t.partition, t.task_id)
            self.queues[0].put(t)
        for _ in range(self.n_workers[0]):
            self.queues[0].put(_END)
        threads = [threading.Thread(target=self._worker, args=(i, w), daemon=True,
                                    name=f"curator-{s.name}-{w}")
                   for i, s in enumerate(self.stages) for w in range(self.n_workers[i])]
        start = time.perf_counter()
        try:
            if self.ctx.progress:
                with ProgressReporter(self.stats, self.ctx.progress_interval):
                    self._start_and_wait(threads)
            else:
                self._start_and_wait(threads)
        except KeyboardInterrupt:
            self._abort(threads)
            raise
        finally:
            self.stats.wall_s = time.perf_counter() - start
        if self.fatal:
            raise self.fatal[0]
        return self.results

    def _start_and_wait(self, threads: list[threading.Thread]) -> None:
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)

    def _abort(self, threads: list[threading.Thread]) -> None:
        self.stop.set()
        with self.lock:
            procs = list(self.procs)
        for p in procs:
            p.kill()
        for t in threads:
            t.join(5)

    # -- queues -----------------------------------------------------------------------------------
    def _put(self, q: queue.Queue, item: Any) -> bool:
        while not self.stop.is_set():
            try:
                q.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _get(self, q: queue.Queue) -> Any:
        while not self.stop.is_set():
            try:
                return q.get(timeout=0.2)
            except queue.Empty:
                continue
        return _END

    def _take_batch(self, i: int) -> tuple[list[Task], bool]:
        size = self.stages[i].batch_size
        batch: list[Task] = []
        while len(batch) < size:
            item = self._get(self.queues[i])
            if item is _END:
                return batch, True
            batch.append(item)
        return batch, False

    # -- workers ----------------------------------------------------------------------------------
    def _worker(self, i: int, w: int) -> None:
        stage = self.stages[i]
        name = f"{stage.name}-{w}"
        runner: ThreadWorker | ProcessWorker | None = None
        try:
            if stage.worker_mode == "process" and self.processes:
                runner = ProcessWorker(stage, name)
                with self.lock:
                    self.procs.append(runner)
            else:
                runner = ThreadWorker(stage, name)
            ended = False
            while not ended and not self.stop.is_set():
                batch, ended = self._take_batch(i)
                if batch:
                    self._handle(i, runner, batch)
        except StageSetupError as exc:
            self.fatal.append(exc)
            self.stop.set()
        except BaseException as exc:  # noqa: BLE001 - a bug here must not hang the run
            self.fatal.append(exc)
            self.stop.set()
        finally:
            if runner is not None:
                try:
                    runner.close()
                except Exception as exc:  # noqa: BLE001
                    self.fatal.append(exc)
            self._worker_exit(i)

    def _worker_exit(self, i: int) -> None:
        with self.lock:
            self.alive[i] -= 1
            last = self.alive[i] == 0
        if last and i + 1 < len(self.stages):
            for _ in range(self.n_workers[i + 1]):
                self._put(self.queues[i + 1], _END)

    def _call(self, i: int, runner: Any, batch: list[Task]) -> StageCall:
        """One attempt; a dead worker process is replaced and the attempt counts as failed."""
        try:
            return runner.call(batch)
        except WorkerDied as exc:
            self.stats.bump(i, "worker_restarts")
            runner.restart()
            return StageCall([], [], 0.0, 0, 0, error=str(exc))

    def _handle(self, i: int, runner: Any, batch: list[Task]) -> None:
        stage = self.stages[i]
        last = i + 1 == len(self.stages)
        call_once = functools.partial(self._call, i, runner)
        for outcome in run_with_retries(stage.name, call_once, batch, self.ctx.max_retries):
            inputs, call = outcome.inputs, outcome.call
            source = isinstance(inputs[0], EmptyTask)
            if outcome.failed is not None and source:  # the source failed: there is no input
                raise SourceStageError(f"source stage {stage.name!r} failed, so the pipeline "
                                       f"has no input:\n{outcome.failed.error}")
            skipped = 0
            if i == 0 and source:
                call.outputs, skipped = self.ctx.skip_done(call.outputs)
            report = outcome_report(i, outcome, keep_outputs=True)
            report.skipped = skipped
            # booked before the outputs move on, so the tracker counts them before they are
            # consumed downstream
            apply_report(report, self.names, self.ctx, self.stats, self.tracker)
            if last:
                with self.lock:
                    self.results.add(call.outputs)
            else:
                for out in call.outputs:
                    if not self._put(self.queues[i + 1], out):
                        return
