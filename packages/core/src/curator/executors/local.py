"""LocalExecutor: the embedded streaming executor (no server, no cluster)."""

from __future__ import annotations

import collections
import os
import queue
import threading
import time
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from curator.executors.base import BaseExecutor, Run, SourceStageError
from curator.executors.config import QUEUE_BYTES, LocalConfig
from curator.executors.fusion import ChainJob, StageGroup
from curator.executors.retry import WorkerDied
from curator.executors.sizing import Cluster, Demand, plan_pools
from curator.executors.workers import ThreadWorker
from curator.run.outcome import Outcome
from curator.stages.base import ProcessingStage, fixed_num_workers
from curator.tasks import Task

if TYPE_CHECKING:
    from curator.executors.process_worker import ProcessWorker

__all__ = ["LocalExecutor", "SourceStageError", "plan_workers", "available_gpus"]

_END = object()


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
    demand = Demand(stage.resources, override or fixed_num_workers(stage))
    return plan_pools([demand], Cluster(cpus, gpus), together=False)[0].workers


class LocalExecutor(BaseExecutor):
    """Runs every stage at once on different tasks, in this machine's threads and processes.

    Tasks flow through bounded queues (memory stays flat as the input grows); consecutive stages
    with equal resources are fused into one group, each with the planner's workers: threads, or
    fresh worker processes (which never import the user's ``__main__``) where a member has
    ``worker_mode="process"``. Config keys: :class:`~curator.executors.config.LocalConfig`;
    behaviour and measurements: ``docs/executors.md``.
    """

    name = "local"

    config_class = LocalConfig
    cfg: LocalConfig

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        fuse = self.cfg.fuse_stages
        self.fuse: str | None = "process" if fuse is True else (fuse or None)

    # -- planning ---------------------------------------------------------------------------------
    def _override(self, stage: ProcessingStage) -> int | None:
        return self.cfg.per_stage("num_workers", stage.name)

    def plan(self, groups: list[StageGroup], cpus: float, gpus: int) -> list[int]:
        """Workers of each group: the planner's (:func:`~curator.executors.sizing.plan_pools`),
        each group planned with the machine to itself (threads hold no cores; a group's count
        is the largest fixed one of its members)."""
        demands = [Demand(g.resources, g.num_workers(self._override)) for g in groups]
        return [p.workers for p in plan_pools(demands, Cluster(cpus, gpus), together=False)]

    def groups(self, stages: list[ProcessingStage], first: int = 0) -> list[StageGroup]:
        """The stage groups (:meth:`BaseExecutor.groups`); given tasks, the first stage stays
        alone in threads (it may hold what cannot cross to a process: locks, open handles)."""
        if first or not stages:
            return super().groups(stages, first)
        return [StageGroup(0, stages[:1]), *super().groups(stages[1:], 1)]

    def run_groups(self, run: Run, groups: list[StageGroup],
                   windows: Iterator[list[Task]]) -> None:
        """Stream the windows' tasks through one pool of workers per group, bounded queues
        between them (the source, listing on the driver, feeds the first)."""
        _LocalRun(self, run, groups).run(windows)


def _processes_available(stages: list[ProcessingStage], fused: bool = False) -> bool:
    """Whether worker processes can start here; else warn once that threads run them."""
    wanted = [s.name for s in stages if s.worker_mode == "process" or fused]
    if not wanted:
        return True
    from curator.executors.process_worker import worker_command

    if worker_command(0) is not None:
        return True
    warnings.warn(f"LocalExecutor: this Python cannot start worker processes (no executable), so "
                  f"the process-mode stages {wanted} run in threads of this process",
                  RuntimeWarning, stacklevel=4)
    return False


class _LocalRun:
    """One execution: queues, worker threads, bookkeeping. Workers serve stage groups (each a
    chain: fused stages, or one); queue ``g`` feeds group ``g``, a feeder thread the first."""

    def __init__(self, executor: LocalExecutor, run: Run, groups: list[StageGroup]) -> None:
        self.run_, self.groups = run, groups
        self.stages, self.ctx, self.stats = run.stages, run.ctx, run.stats
        self.fuse = executor.fuse
        stages = [s for g in groups for s in g.stages]
        cpus = float(executor.cfg.cpus or _cores())
        gpus = available_gpus() if any(s.resources.requires_gpu for s in stages) else 0
        self.n_workers = executor.plan(groups, cpus, gpus)
        if groups[0].first == 0:  # no more workers than the initial tasks
            self.n_workers[0] = min(self.n_workers[0], max(1, run.n_initial))
        qsize = executor.cfg.queue_size
        qbytes = executor.cfg.queue_bytes or QUEUE_BYTES
        # given tasks are in memory already: the first queue holds them all (no feeder thread);
        # a source's partitions arrive as it lists them, through a bounded queue
        self.given = groups[0].first == 0
        self.queues: list[queue.Queue] = [
            queue.Queue() if g.first == 0
            else _BoundedQueue(qsize or max(2 * n + 2, g.batch_size * (n + 1)), qbytes)
            for g, n in zip(groups, self.n_workers, strict=True)]
        self.processes = _processes_available(stages, self.fuse == "process")
        self.stop = threading.Event()
        self.fatal: list[BaseException] = []
        self.lock = threading.Lock()
        self.alive = list(self.n_workers)
        self.procs: list[ProcessWorker] = []

    def run(self, windows: Iterator[list[Task]]) -> None:
        for g, group in enumerate(self.groups):
            for i in group.indices:
                self.stats.stages[i].workers = self.n_workers[g]
        threads = []
        if self.given:
            self._feed(windows)
        else:
            threads.append(threading.Thread(target=self._feed, args=(windows,), daemon=True,
                                            name="curator-source"))
        threads += [threading.Thread(target=self._worker, args=(g, w), daemon=True,
                                     name=f"curator-{group.name}-{w}")
                    for g, group in enumerate(self.groups) for w in range(self.n_workers[g])]
        try:
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive():
                    t.join(0.2)
        except KeyboardInterrupt:
            self._abort(threads)
            raise
        if self.fatal:
            raise self.fatal[0]

    def _feed(self, windows: Iterator[list[Task]]) -> None:
        """The windows' tasks into the first queue, then one end mark per worker."""
        try:
            for tasks in windows:
                for t in tasks:
                    if not self._put(self.queues[0], t):
                        return
        except BaseException as exc:
            self.fatal.append(exc)
            self.stop.set()
        finally:
            for _ in range(self.n_workers[0]):
                self._put(self.queues[0], _END)

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
        """A worker for ``group``'s chain, in a thread or a process."""
        in_process = self.processes and ((self.fuse == "process" and group.first > 0)
                                         or any(s.worker_mode == "process" for s in group.stages))
        # a thread hands its outputs over whole (no stubs to make: they cross no pipe)
        job = ChainJob(group, self.ctx.max_retries, len(self.stages),
                       self.run_.outputs.collect or not in_process)
        if in_process:
            from curator.executors.process_worker import ProcessWorker

            runner = ProcessWorker(job, name)
            with self.lock:
                self.procs.append(runner)
            return runner
        return ThreadWorker(job, name)

    def _worker(self, g: int, w: int) -> None:
        group = self.groups[g]
        runner: ThreadWorker | ProcessWorker | None = None
        try:
            runner = self._runner(group, f"{group.name}-{w}")
            ended = False
            while not ended and not self.stop.is_set():
                batch, ended = self._take_batch(g)
                if batch:
                    self._handle(g, runner, batch)
        except BaseException as exc:  # a StageSetupError, or a bug: the run stops
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

    def _handle(self, g: int, runner: ThreadWorker | ProcessWorker, batch: list[Task]) -> None:
        """Run group ``g``'s chain on ``batch`` (each stage retried by the shared policy inside
        it) under the dead-worker policy; book every outcome before the group's outputs move
        on, so the tracker counts them before they are consumed downstream."""
        try:
            results = [runner.call(batch)]
        except WorkerDied as died:  # detected here; the policy decides (off the common path)
            runner.restart()
            results = self._after_death(g, runner, batch, died)
        for outcomes, passed_on in results:
            for o in outcomes:
                self.run_.book(o)
            if g + 1 < len(self.groups):
                for out in passed_on or ():
                    if not self._put(self.queues[g + 1], out):
                        return

    def _after_death(self, g: int, runner: ThreadWorker | ProcessWorker, batch: list[Task],
                     died: WorkerDied) -> list[tuple[list[Outcome], Any]]:
        """``batch`` killed group ``g``'s worker process (replaced): the dead-worker policy."""
        def attempt(tasks: list[Task]) -> tuple[list[Outcome], list[Task]]:
            try:
                return runner.call(tasks)
            except WorkerDied:  # detected here; the policy decides
                runner.restart()
                raise

        group = self.groups[g]
        return self.run_.deaths.run(batch, attempt, index=group.first, stage=group.stages[0],
                                    split=lambda b: [[t] for t in b], task_of=lambda b: b[0],
                                    died=died)
