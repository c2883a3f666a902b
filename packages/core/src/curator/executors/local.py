"""LocalExecutor: the embedded streaming executor (no server, no cluster)."""

from __future__ import annotations

import collections
import dataclasses
import functools
import os
import queue
import threading
import time
import warnings
from collections.abc import Iterable
from typing import Any

from curator.executors.base import (
    BaseExecutor,
    OutputCollector,
    RunContext,
    RunResult,
    SourceStageError,
    StageCall,
)
from curator.executors.fusion import ChainJob, StageGroup, group_stages
from curator.executors.retry import (
    BatchOutcome,
    apply_report,
    outcome_report,
    run_with_retries,
    source_outcomes,
    worker_death_report,
)
from curator.executors.sizing import workers_alone
from curator.executors.stats import ProgressReporter, RunStats
from curator.executors.workers import (
    ProcessWorker,
    StageSetupError,
    ThreadWorker,
    WorkerDied,
    worker_command,
)
from curator.stages.base import ProcessingStage, fixed_num_workers
from curator.stages.node_info import LOCAL_NODE, NodeInfo, WorkerMetadata
from curator.tasks import EmptyTask, Task

__all__ = ["LocalExecutor", "SourceStageError", "plan_workers", "available_gpus"]

_END = object()
#: default bound on the bytes of task data buffered in each queue between two stages
QUEUE_BYTES = 64 * 2**20


def task_nbytes(task: Any) -> int:
    """The bytes a task's data holds where it says (``data.nbytes``: Arrow tables, NumPy
    arrays), else 0 (such tasks are bounded by count alone)."""
    n = getattr(getattr(task, "data", None), "nbytes", None)
    return n if isinstance(n, int) else 0


class _BoundedQueue(queue.Queue):
    """A queue bounded by item count and by bytes in flight: an item is admitted while the
    queue holds fewer than ``maxsize`` items and its bytes fit under ``max_bytes`` (an item
    bigger than that is admitted alone), so memory does not grow with the size of a task."""

    def __init__(self, maxsize: int, max_bytes: int) -> None:
        super().__init__(maxsize)
        self.max_bytes = max_bytes
        self.nbytes = 0

    def _init(self, maxsize: int) -> None:
        super()._init(maxsize)
        self._sizes: collections.deque[int] = collections.deque()

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        n = task_nbytes(item)
        with self.not_full:
            end = None if timeout is None else time.monotonic() + timeout
            while self._qsize() and (self._qsize() >= self.maxsize > 0
                                     or self.nbytes + n > self.max_bytes):
                remaining = None if end is None else end - time.monotonic()
                if not block or (remaining is not None and remaining <= 0):
                    raise queue.Full
                self.not_full.wait(remaining)
            self._put(item)
            self._sizes.append(n)
            self.nbytes += n
            self.unfinished_tasks += 1
            self.not_empty.notify()

    def _get(self) -> Any:
        self.nbytes -= self._sizes.popleft()
        return super()._get()


def available_gpus() -> int:
    """CUDA devices visible to this process (0 without torch or a GPU)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return 0
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells, e.g. under
    ``taskset`` or a container's cpuset), else the machine's."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def plan_workers(stage: ProcessingStage, cpus: float, gpus: int,
                 override: int | None = None) -> int:
    """Workers for ``stage`` on a machine with ``cpus`` cores and ``gpus`` GPUs (see
    :mod:`curator.executors.sizing`)."""
    return workers_alone(stage.resources, override or fixed_num_workers(stage), cpus, gpus)


class LocalExecutor(BaseExecutor):
    """Runs every stage at once on different tasks, in this machine's threads and processes.

    Tasks flow through bounded queues (memory stays flat as the input grows). Consecutive
    stages with equal resources are fused into one group (``fuse_stages``); each group gets
    workers from its ``Resources`` and the machine (or ``num_workers``): threads, or worker
    processes where a member has ``worker_mode="process"``. A dead worker process is replaced;
    in a fused group its batch is split and retried task by task, and a task that killed it
    more than ``max_retries`` times is kept whole in the rejected sink. Worker processes are
    fresh interpreters that receive the stage by value and never import the user's ``__main__``,
    so scripts without a main guard, ``python -c``, stdin and notebooks work. ``setup()`` runs once
    per worker, ``teardown()`` at the end. A failing task is retried, then written with its
    traceback to the rejected sink; a dead worker process is replaced.

    Config keys:
        num_workers: int for every stage, or ``{stage_name: int}``.
        queue_size: tasks buffered between two stages (default: 2 per consumer worker, at least
            ``batch_size``).
        queue_bytes: bytes of task data (Arrow tables, arrays) buffered between two stages
            beyond the first task (default 64 MiB), so big tasks do not multiply memory.
        max_retries: overrides the run's retry count.
        cpus: cores to plan for (default: this machine's).
        fuse_stages: ``"thread"`` (default): after the first stage, consecutive stages with
            equal ``Resources`` and ``batch_size`` run back to back in the same worker thread,
            so a task is handed over once per group, not once per stage (a group with a
            ``worker_mode="process"`` member runs in worker processes). ``"process"`` (or
            ``True``): every group in worker processes, which share no interpreter lock but
            each import the stages' libraries. ``False``: one pool of workers per stage.
        collect_outputs: keep the output tasks on the result (default ``True``); ``False`` keeps
            only their count and paths (``result.num_outputs``, ``result.output_paths``).
    """

    name = "local"

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__({**(config or {}), **kwargs})
        self.warn_unknown_keys({"num_workers", "queue_size", "queue_bytes", "max_retries",
                                "cpus", "collect_outputs", "fuse_stages"})
        fuse = self.config.get("fuse_stages", "thread")
        if fuse not in (False, True, "process", "thread"):
            raise ValueError(f"LocalExecutor: fuse_stages must be False, True, 'process' or "
                             f"'thread', got {fuse!r}")
        self.fuse: str | None = "process" if fuse is True else (fuse or None)

    # -- planning ---------------------------------------------------------------------------------
    def _override(self, stage: ProcessingStage) -> int | None:
        nw = self.config.get("num_workers")
        return nw.get(stage.name) if isinstance(nw, dict) else nw

    def _workers_for(self, group: StageGroup, cpus: float, gpus: int) -> int:
        # the members ask for the same resources; the group's count is its largest fixed one
        return plan_workers(group.stages[0], cpus, gpus, group.num_workers(self._override))

    def groups(self, stages: list[ProcessingStage]) -> list[StageGroup]:
        """The units of scheduling: one stage each, or fused groups (``fuse_stages``)."""
        return [StageGroup(0, stages[:1]),
                *group_stages(stages[1:], first=1, fuse=self.fuse is not None)]

    def execute(self, stages: list[ProcessingStage], initial_tasks: list[Task] | None = None,
                *, context: RunContext | None = None) -> RunResult:
        ctx = context or RunContext()
        if "max_retries" in self.config:
            ctx.max_retries = int(self.config["max_retries"])
        run = _LocalRun(self, stages, self.initial(initial_tasks), ctx)
        outputs = run.run()
        return self.finish(ctx, run.stats, outputs)


def _processes_available(stages: list[ProcessingStage], fused: bool = False) -> bool:
    """Whether worker processes can start here; else warn once that threads run them."""
    wanted = [s.name for s in stages if s.worker_mode == "process" or fused]
    if not wanted or worker_command(0) is not None:
        return True
    warnings.warn(f"LocalExecutor: this Python cannot start worker processes (no executable), so "
                  f"the process-mode stages {wanted} run in threads of this process",
                  RuntimeWarning, stacklevel=4)
    return False


class _LocalRun:
    """One execution: queues, worker threads, bookkeeping. Workers serve groups of stages (one
    stage each unless ``fuse_stages``); queue ``g`` feeds group ``g``."""

    def __init__(self, executor: LocalExecutor, stages: list[ProcessingStage],
                 initial: list[Task], ctx: RunContext) -> None:
        self.stages = stages
        self.ctx = ctx
        self.fuse = executor.fuse
        self.stats = RunStats.for_stages([s.name for s in stages], executor="local")
        cpus = float(executor.config.get("cpus") or _cores())
        gpus = available_gpus() if any(s.resources.requires_gpu for s in stages) else 0
        self.groups = executor.groups(stages)
        self.n_workers = [executor._workers_for(g, cpus, gpus) for g in self.groups]
        self.n_workers[0] = min(self.n_workers[0], max(1, len(initial)))
        qsize = executor.config.get("queue_size")
        qbytes = int(executor.config.get("queue_bytes") or QUEUE_BYTES)
        self.queues: list[queue.Queue] = [queue.Queue()]
        for g, n in zip(self.groups[1:], self.n_workers[1:], strict=True):
            self.queues.append(_BoundedQueue(qsize or max(2 * n + 2, g.batch_size * (n + 1)),
                                             qbytes))
        self.processes = _processes_available(stages, self.fuse == "process")
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
        for g, group in enumerate(self.groups):
            for i, stage in zip(group.indices, group.stages, strict=True):
                self.stats.stages[i].workers = self.n_workers[g]
                stage.setup_on_node(NodeInfo(node_id=LOCAL_NODE), WorkerMetadata())
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
        threads = [threading.Thread(target=self._worker, args=(g, w), daemon=True,
                                    name=f"curator-{group.name}-{w}")
                   for g, group in enumerate(self.groups) for w in range(self.n_workers[g])]
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

    def _take_batch(self, g: int) -> tuple[list[Task], bool]:
        size = self.groups[g].batch_size
        batch: list[Task] = []
        while len(batch) < size:
            item = self._get(self.queues[g])
            if item is _END:
                return batch, True
            batch.append(item)
        return batch, False

    # -- workers ----------------------------------------------------------------------------------
    def _runner(self, group: StageGroup, name: str) -> ThreadWorker | ProcessWorker:
        """A worker for ``group``: its stage, or its chain (fused), in a thread or a process."""
        fused = len(group.stages) > 1
        work = (ChainJob(group, self.ctx.max_retries, len(self.stages), self.results.collect)
                if fused
                else group.stages[0])
        in_process = ((self.fuse == "process" and group.first > 0)
                      or any(s.worker_mode == "process" for s in group.stages))
        if in_process and self.processes:
            runner = ProcessWorker(work, name)
            with self.lock:
                self.procs.append(runner)
            return runner
        return ThreadWorker(work, name)

    def _worker(self, g: int, w: int) -> None:
        group = self.groups[g]
        runner: ThreadWorker | ProcessWorker | None = None
        try:
            runner = self._runner(group, f"{group.name}-{w}")
            handle = self._handle_chain if len(group.stages) > 1 else self._handle
            ended = False
            while not ended and not self.stop.is_set():
                batch, ended = self._take_batch(g)
                if batch:
                    handle(g, runner, batch)
        except StageSetupError as exc:
            self.fatal.append(exc)
            self.stop.set()
        except BaseException as exc:
            self.fatal.append(exc)
            self.stop.set()
        finally:
            if runner is not None:
                try:
                    runner.close()
                except Exception as exc:
                    self.fatal.append(exc)
            self._worker_exit(g)

    def _worker_exit(self, g: int) -> None:
        with self.lock:
            self.alive[g] -= 1
            last = self.alive[g] == 0
        if last and g + 1 < len(self.groups):
            for _ in range(self.n_workers[g + 1]):
                self._put(self.queues[g + 1], _END)

    def _call(self, i: int, runner: Any, batch: list[Task]) -> StageCall:
        """One attempt; a dead worker process is replaced and the attempt counts as failed."""
        try:
            return runner.call(batch)
        except WorkerDied as exc:
            self.stats.bump(i, "worker_restarts")
            runner.restart()
            return StageCall([], [], 0.0, 0, 0, error=str(exc))

    def _pass_on(self, g: int, outputs: list[Task]) -> None:
        """The outputs of group ``g``: the run's results, or the next group's input."""
        if g + 1 == len(self.groups):
            with self.lock:
                self.results.add(outputs)
            return
        for out in outputs:
            if not self._put(self.queues[g + 1], out):
                return

    def _handle(self, g: int, runner: Any, batch: list[Task]) -> None:
        i = self.groups[g].first
        stage = self.stages[i]
        source = i == 0 and isinstance(batch[0], EmptyTask)
        if source and isinstance(runner, ThreadWorker):  # chunk by chunk as the listing goes
            outcomes: Iterable[BatchOutcome] = source_outcomes(runner.job.stage, batch[0],
                                                               self.ctx.max_retries, runner.name)
        else:
            outcomes = run_with_retries(stage.name, functools.partial(self._call, i, runner),
                                        batch, self.ctx.max_retries)
        for outcome in outcomes:
            call = outcome.call
            if outcome.failed is not None and source:  # the source failed: there is no input
                raise SourceStageError(f"source stage {stage.name!r} failed, so the pipeline "
                                       f"has no input:\n{outcome.failed.error}")
            skipped = 0
            if source:
                call.outputs, skipped = self.ctx.skip_done(call.outputs)
            report = outcome_report(i, outcome, keep_outputs=True)
            report.skipped = skipped
            # booked before the outputs move on, so the tracker counts them before they are
            # consumed downstream
            apply_report(report, self.names, self.ctx, self.stats, self.tracker)
            self._pass_on(g, call.outputs)

    def _handle_chain(self, g: int, runner: Any, batch: list[Task], deaths: int = 0) -> None:
        """Run a fused group's chain (each stage retried by the shared policy inside it); a
        batch whose worker process died is split and each task retried alone, and a task that
        killed it more than ``max_retries`` times is kept whole in the rejected sink."""
        group = self.groups[g]
        try:
            reports, passed_on = runner.call(batch)
        except WorkerDied as exc:
            self.stats.bump(group.first, "worker_restarts")
            runner.restart()
            if len(batch) > 1:
                for task in batch:
                    self._handle_chain(g, runner, [task])
            elif deaths + 1 > self.ctx.max_retries:
                report = worker_death_report(group.first, group.stages[0], batch[0], deaths + 1,
                                             str(exc))
                apply_report(dataclasses.replace(report, restarts=0), self.names, self.ctx,
                             self.stats, self.tracker)
            else:
                self._handle_chain(g, runner, batch, deaths + 1)
            return
        outputs: list[Task] = []  # the run's, when this group ends the pipeline
        for report in reports:  # booked before the outputs move on (see _handle)
            outputs += apply_report(report, self.names, self.ctx, self.stats, self.tracker)
        self._pass_on(g, outputs if g + 1 == len(self.groups) else passed_on)
