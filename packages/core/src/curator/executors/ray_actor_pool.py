"""RayActorPoolExecutor: one Ray actor pool per stage group, outputs passed pool to pool by
reference (streaming, or one group after the other)."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import cloudpickle

from curator.cluster.ray_client import alive_nodes, node_slots
from curator.executors.base import Run
from curator.executors.config import ActorPoolConfig
from curator.executors.fusion import StageGroup, chain_outcomes, release_group, setup_group
from curator.executors.ray_common import RayExecutorBase, node_gpu_memory_gb
from curator.executors.retry import DeadWorkerPolicy, WorkerDied
from curator.executors.sizing import Cluster, PoolPlan, plan_pools
from curator.executors.workers import StageSetupError
from curator.run.outcome import Outcome
from curator.run.stats import RunStats
from curator.tasks import Task

__all__ = ["RayActorPoolExecutor", "PoolController"]

log = logging.getLogger(__name__)


class _GroupActor:
    """A Ray actor holding one set-up copy of a group of fused stages."""

    def __init__(self, group_bytes: bytes, name: str) -> None:
        self.name = name
        self.group: StageGroup = cloudpickle.loads(group_bytes)
        setup_group(self.group, name)

    def ready(self) -> bool:
        return True

    def call(self, max_retries: int, n_stages: int, collect: bool, pick: int | None,
             *parts: list[Task]) -> tuple[list[Outcome], list[Task]]:
        """Run the group over the tasks of ``parts`` (lists of tasks: Ray resolves the output
        refs of upstream calls here, on the worker), or only the ``pick``-th of them. Two
        returns: the outcomes (for the driver) and the tasks passed on (for the next group)."""
        tasks = [t for part in parts for t in part]
        if pick is not None:
            tasks = [tasks[pick]]
        return chain_outcomes(self.group, tasks, max_retries, self.name, n_stages, collect)

    def teardown(self) -> None:
        release_group(self.group)


@dataclass
class _Batch:
    """The input of one actor call: ``parts`` are lists of tasks (the first group's) or object
    refs to them (outputs of upstream calls, kept here until the call succeeded, so a retry
    still has its inputs); ``count`` tasks in all, or only the ``pick``-th."""

    parts: list[Any]
    count: int
    pick: int | None = None

    def one(self, k: int) -> _Batch:
        """The batch of its ``k``-th task alone (for the split-and-retry policy)."""
        if all(isinstance(p, list) for p in self.parts):
            return _Batch([[[t for p in self.parts for t in p][k]]], 1)
        return _Batch(self.parts, 1, k)

    def task(self) -> Task:
        """The (first) task itself, fetched to the driver: only for a task that failed for
        good (it is kept whole in the rejected sink)."""
        import ray

        tasks = [t for p in self.parts for t in (p if isinstance(p, list) else ray.get(p))]
        return tasks[self.pick or 0]


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
        import ray

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

    def submit(self, batch: _Batch, max_retries: int, n_stages: int,
               collect: bool = True) -> list[Any]:
        """Start a call on the actor without waiting: ``[reports ref, passed-on tasks ref]``
        (see :meth:`wait`)."""
        return self.handle.call.options(num_returns=2).remote(
            max_retries, n_stages, collect, batch.pick, *batch.parts)

    def wait(self, refs: list[Any]) -> tuple[list[Outcome], Any]:
        """The reports of a submitted call and the ref of the tasks it passes on (they stay in
        the object store); raises :class:`WorkerDied` (after replacing the actor) when the worker
        process died."""
        import ray

        try:
            return ray.get(refs[0]), refs[1]
        except ray.exceptions.RayActorError as exc:  # the worker process died: replace it
            self._start()
            raise WorkerDied(f"actor {self.name} of {self.group_name} died: {exc}") from exc

    def run(self, group: StageGroup, batch: _Batch, max_retries: int, n_stages: int,
            collect: bool = True, died: WorkerDied | None = None,
            ) -> list[tuple[list[Outcome], Any]]:
        """Call under the dead-worker policy every executor shares
        (:meth:`DeadWorkerPolicy.run`; the death is detected by :meth:`wait`). ``died``: the
        batch already killed the actor once (a pipelined call). Returns ``(outcomes, ref of
        the passed-on tasks or None)`` per call that succeeded or failed for good."""
        return DeadWorkerPolicy(max_retries).run(
            batch, lambda b: self.wait(self.submit(b, max_retries, n_stages, collect)),
            index=group.first, stage=group.stages[0],
            split=lambda b: [b.one(k) for k in range(b.count)] if b.count > 1 else [b],
            task_of=lambda b: b.task(), died=died)

    def close(self) -> None:
        import ray

        try:
            ray.get(self.handle.teardown.remote(), timeout=60)
        finally:
            ray.kill(self.handle)


class PoolController:
    """Sizes the actor pools of a run from their measured throughput, one decision every
    ``interval_s``.

    Each pool's *utilisation* is the actor busy time booked by its calls (:meth:`book`) over
    its actors' wall time since its last decision (taken only once every actor landed a call
    on average, so slow calls are measured, not guessed). A pool is *hungry* when batches wait
    beyond what its actors hold, its actors are busy (``busy`` or more) and it is under its
    ``max_workers``: it takes one more actor when the cluster has room for one (a node joined,
    or another pool let go). When the cluster is full, the least used pool above its
    ``min_workers`` with utilisation under ``idle`` lets one actor go for it (a pool held back
    by a slow downstream one idles); one at a time, until the hungry pool grew. A pool idle
    with nothing waiting lets one go down to its ``min_workers``.

    ``limits``: ``(min_workers, max_workers)`` per pool; ``needs``: ``(cpus, gpus)`` of one
    actor per pool; ``free``: the cluster's free resources (``ray.available_resources``).
    """

    def __init__(self, limits: list[tuple[int, int]], needs: list[tuple[float, float]],
                 interval_s: float, free: Callable[[], dict[str, float]] | None = None,
                 busy: float = 0.75, idle: float = 0.5,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limits, self.needs = limits, needs
        self.interval_s = interval_s
        self.free = free or _ray_free
        self.busy_level, self.idle_level = busy, idle
        self.clock = clock
        now = clock()
        self._next = now + interval_s
        self._busy = [0.0] * len(limits)
        self._calls = [0] * len(limits)
        self._since = [now] * len(limits)
        self.usage: list[float | None] = [None] * len(limits)
        self._owed: int | None = None  # the pool an actor was let go for, until it grows
        self._lock = threading.Lock()  # calls are booked from the pools' worker threads

    @property
    def active(self) -> bool:
        """Whether any pool may change size at all."""
        return any(lo < hi for lo, hi in self.limits)

    def book(self, k: int, busy_s: float) -> None:
        """A call of pool ``k`` landed after ``busy_s`` seconds of work."""
        with self._lock:
            self._busy[k] += busy_s
            self._calls[k] += 1

    def _measure(self, k: int, running: int, now: float) -> None:
        with self._lock:
            if running and self._calls[k] >= running:
                self.usage[k] = self._busy[k] / (running * max(now - self._since[k], 1e-6))
                self._busy[k], self._calls[k], self._since[k] = 0.0, 0, now

    def restart_clock(self, k: int) -> None:
        """Pool ``k`` changed size: measure it afresh."""
        with self._lock:
            self._busy[k], self._calls[k], self._since[k] = 0.0, 0, self.clock()
            self.usage[k] = None

    def decide(self, running: list[int], waiting: list[bool],
               alive: list[bool]) -> list[int]:
        """``+1`` (start an actor), ``-1`` (let one go) or ``0`` per pool. ``running``: actors
        per pool; ``waiting``: more batches queued than its actors hold; ``alive``: the pool
        still has work to come (a finished pool is left alone)."""
        now = self.clock()
        moves = [0] * len(running)
        if not self.active or now < self._next:
            return moves
        self._next = now + self.interval_s
        for k, n in enumerate(running):
            self._measure(k, n, now)
        use = [u if u is not None else -1.0 for u in self.usage]
        hungry = [k for k, (n, w, a) in enumerate(zip(running, waiting, alive, strict=True))
                  if a and w and use[k] >= self.busy_level and n < self.limits[k][1]]
        spare = [k for k, (n, a) in enumerate(zip(running, alive, strict=True))
                 if a and n > self.limits[k][0] and 0.0 <= use[k] < self.idle_level]
        if self._owed is not None and self._owed not in hungry:
            self._owed = None
        if hungry:
            k = max(hungry, key=lambda h: use[h])
            cpus, gpus = self.needs[k]
            free = self.free()
            if (free.get("CPU", 0.0) + 1e-9 >= cpus
                    and (not gpus or free.get("GPU", 0.0) + 1e-9 >= gpus)):
                moves[k] = 1
                self._owed = None
                return moves
            donors = [j for j in spare if j != k and self.needs[j][1] + 1e-9 >= gpus]
            if donors and self._owed is None:
                moves[min(donors, key=lambda j: use[j])] = -1
                self._owed = k
            return moves
        for j in spare:  # idle with nothing waiting: give the room back
            if not waiting[j]:
                moves[j] = -1
        return moves


def _ray_free() -> dict[str, float]:
    import ray

    return ray.available_resources()


class _Pool:
    """One group's actor pool on the driver: its queue of batches, fed as upstream calls land
    (refs gathered until a batch holds ``batch_size`` tasks), its worker threads (one per
    actor), and the actors asked to leave (:meth:`retire_one`)."""

    def __init__(self, index: int, group: StageGroup, workers: int, opts: dict[str, Any],
                 nodes: list[dict[str, Any]], ignore_head: bool) -> None:
        import ray

        self.index, self.group, self.workers = index, group, workers
        self.opts, self.ignore_head = opts, ignore_head
        self.frac = float(opts.get("num_gpus", 0.0))
        self.remote_cls = ray.remote(**opts)(_GroupActor)
        self.slots = node_slots(nodes, opts["num_cpus"], self.frac)
        self.work: queue.Queue[_Batch] = queue.Queue()
        self.gathered: list[Any] = []
        self.gathered_n = 0
        self.upstream_done = threading.Event()
        self.threads: list[threading.Thread] = []
        self.started = self.done = False
        self.next: _Pool | None = None
        self._asked = 0  # actors asked to leave that have not taken it yet
        self._draining = 0  # actors that took leave and finish their calls
        self._lock = threading.Lock()

    def retire_one(self) -> None:
        """Ask one actor to leave: it takes no new batch, finishes its calls, then stops."""
        with self._lock:
            self._asked += 1

    def take_leave(self) -> bool:
        """Called by a worker thread before it takes a batch: whether it is the one to leave
        (never the last actor taking work)."""
        with self._lock:
            if self._asked and self._alive() - self._draining > 1:
                self._asked -= 1
                self._draining += 1
                return True
            return False

    def gone(self) -> None:
        """A worker that took leave has finished its calls."""
        with self._lock:
            self._draining -= 1

    def _alive(self) -> int:
        return sum(t.is_alive() for t in self.threads)

    def running(self) -> int:
        """Actors taking work: alive, not leaving."""
        return self._alive() - self._draining - self._asked

    def placed(self, w: int) -> Any:
        """The actor class for worker ``w``, pinned to its node (softly, so a busy node passes
        its actor on; with ``ignore_head_node`` firmly, so none lands on the head)."""
        from ray.util.scheduling_strategies import (
            NodeAffinitySchedulingStrategy,
        )

        return self.remote_cls.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
            self.slots[w % len(self.slots)], soft=not self.ignore_head))

    def feed(self, part: Any, count: int) -> None:
        """Queue ``count`` tasks (a list, or the ref of an upstream call's outputs)."""
        self.gathered.append(part)
        self.gathered_n += count
        if self.gathered_n >= self.group.batch_size:
            self.flush()

    def flush(self) -> None:
        if self.gathered:
            self.work.put(_Batch(self.gathered, self.gathered_n))
            self.gathered, self.gathered_n = [], 0

    def backlogged(self, depth: int) -> bool:
        """Whether the next pool, running, already has ``2 * depth`` batches per actor
        waiting: then this one takes no new batch (outputs do not pile up in the object
        store while a slow downstream group catches up)."""
        nxt = self.next
        return (nxt is not None and nxt.started and not nxt.done
                and nxt.work.qsize() >= 2 * depth * max(nxt.running(), 1))

    def closed(self) -> bool:
        """No batch will come any more."""
        return self.upstream_done.is_set() and self.work.empty()

    def alive(self) -> bool:
        return any(t.is_alive() for t in self.threads)


class RayActorPoolExecutor(RayExecutorBase):
    """Streams tasks through one pool of Ray actors per group of stages, all pools at once.

    The source stage runs on the driver; consecutive stages with equal ``Resources`` share a
    group, and each actor calls its members' ``setup()`` once. A call's reports reach the driver
    as they land; the tasks it passes on stay in Ray's object store and go to the next pool by
    reference. Pool sizes come from the planner (:mod:`curator.executors.sizing`) and follow
    measured throughput between ``min_workers`` and ``max_workers`` (:class:`PoolController`);
    GPU groups that cannot all hold an actor at once run one after the other. Config keys:
    :class:`~curator.executors.config.ActorPoolConfig`; behaviour: ``docs/executors.md``.
    """

    name = "ray_actor_pool"
    config_class = ActorPoolConfig
    cfg: ActorPoolConfig

    def plan(self, groups: list[StageGroup], n_tasks: int, cpus: float, gpus: float,
             nodes: int = 1) -> tuple[bool, list[tuple[int, dict[str, Any]]]]:
        """Whether the groups stream (all pools at once), and each pool's size and actor
        options (``num_cpus``, ``num_gpus``): see :meth:`pool_plans`."""
        stream, plans = self.pool_plans(groups, n_tasks, Cluster(cpus, gpus, None, nodes))
        return stream, [(p.workers, self._actor_options(p)) for p in plans]

    @staticmethod
    def _actor_options(plan: PoolPlan) -> dict[str, Any]:
        opts: dict[str, Any] = {"num_cpus": plan.cpus, "max_restarts": 0}
        if plan.gpus:
            opts["num_gpus"] = plan.gpus
        return opts

    def pool_plans(self, groups: list[StageGroup], n_tasks: int,
                   cluster: Cluster) -> tuple[bool, list[PoolPlan]]:
        """Whether the groups stream, and the planner's plan of each pool
        (:func:`~curator.executors.sizing.plan_pools`), no pool larger than its batches.
        Streaming pools share the cluster; when the GPU groups cannot all hold an actor at
        once, or with ``streaming=False``, each group in turn gets the whole cluster."""
        if any(g.resources.gpu_memory_gb for g in groups) and cluster.gpu_memory_gb is None:
            cluster = replace(cluster,
                              gpu_memory_gb=node_gpu_memory_gb(self.cfg.gpu_memory_gb_per_gpu))
        demands = [self.demand(g) for g in groups]
        most = [-(-n_tasks // max(g.batch_size, 1)) for g in groups]
        stream = self.cfg.streaming and len(groups) > 1
        if stream:
            plans = plan_pools(demands, cluster, autoscale=self.cfg.autoscale, most=most)
            stream = (all(p.workers for p in plans)  # every GPU pool holds an actor at once
                      and sum(p.workers * p.gpus for p in plans) <= cluster.gpus + 1e-9)
            if stream:
                return True, plans
        return False, [plan_pools([d], cluster, autoscale=self.cfg.autoscale, most=[m])[0]
                       for d, m in zip(demands, most, strict=True)]

    def _run_window(self, run: Run, groups: list[StageGroup], tasks: list[Task]) -> None:
        """Stream ``tasks`` through one actor pool per group."""
        ctx, stats, cluster = run.ctx, run.stats, run.resources
        cpus = float(cluster.get("CPU", 1.0))
        gpus = float(cluster.get("GPU", 0.0))
        ignore_head = self.cfg.ignore_head_node
        nodes = alive_nodes(ignore_head)
        if ignore_head:  # size the pools for the nodes they may use
            cpus = sum(float(nd["Resources"].get("CPU", 0.0)) for nd in nodes) or 1.0
            gpus = sum(float(nd["Resources"].get("GPU", 0.0)) for nd in nodes)
        stream, plans = self.pool_plans(groups, len(tasks),
                                        Cluster(cpus, gpus, None, self.usable_nodes()))
        pools = [_Pool(k, g, p.workers, self._actor_options(p), nodes, ignore_head)
                 for k, (g, p) in enumerate(zip(groups, plans, strict=True))]
        for pool, nxt in zip(pools, pools[1:], strict=False):
            pool.next = nxt
        for pool in pools:
            for i in pool.group.indices:
                stats.stages[i].workers = pool.workers
        size = pools[0].group.batch_size
        for k in range(0, len(tasks), size):
            pools[0].feed(tasks[k:k + size], len(tasks[k:k + size]))
        pools[0].flush()
        pools[0].upstream_done.set()
        del tasks  # the driver keeps the first group's batches only until they ran
        lock = threading.Lock()
        errors: list[BaseException] = []

        def landed(pool: _Pool, reports: list[Outcome], out: Any) -> None:
            """Bookkeeping as each call lands (so the checkpoint advances during the run), then
            its passed-on tasks (by reference) to the next group's queue."""
            with lock:
                for rep in reports:
                    run.book(rep)
                passed = sum(len(r.produced) for r in reports
                             if r.index == pool.group.indices[-1])
                if out is not None and passed and pool.index + 1 < len(pools):
                    pools[pool.index + 1].feed(out, passed)

        self._stream(pools, stream, ctx.max_retries, len(run.stages), stats, landed, errors,
                     [(p.min_workers, p.max_workers) for p in plans])
        if errors:
            raise errors[0]

    def _stream(self, pools: list[_Pool], stream: bool, max_retries: int, n_stages: int,
                stats: RunStats, landed: Any, errors: list[BaseException],
                limits: list[tuple[int, int]]) -> None:
        """Run the pools (all at once with ``stream``, else one after the other) until every
        batch landed; a pool's upstream is done when the previous pool's threads all ended.
        Pool sizes follow the :class:`PoolController` (``limits``: the fewest and most actors
        of each pool)."""
        import ray

        timeout = self.cfg.setup_timeout_s
        depth = max(1, self.cfg.batches_in_flight)
        args = (max_retries, n_stages, self.cfg.collect_outputs)

        def worker(pool: _Pool, w: int) -> None:
            """Keeps ``depth`` batches queued on its actor, so the actor never waits for the
            driver; calls run in order, so the oldest is the one a dead actor was running."""
            actor = None
            pending: deque[tuple[_Batch, list[Any]]] = deque()
            group = pool.group
            leaving = False
            try:
                actor = _Actor(pool.placed(w), group, f"{group.name}-{w}", timeout)
                while not errors:
                    leaving = leaving or pool.take_leave()
                    while (not leaving and len(pending) < depth
                           and not pool.backlogged(depth)):
                        try:
                            batch = pool.work.get_nowait() if pending else pool.work.get(
                                timeout=0.05)
                        except queue.Empty:
                            break
                        pending.append((batch, actor.submit(batch, *args)))
                    if not pending:
                        if leaving or pool.closed():
                            break
                        if pool.backlogged(depth):
                            time.sleep(0.05)
                        continue
                    batch, refs = pending[0]
                    if len(pending) < depth and not (leaving or pool.closed()):
                        if not ray.wait([refs[0]], timeout=0.05)[0]:  # take more work meanwhile
                            continue
                    pending.popleft()
                    try:
                        done = [actor.wait(refs)]
                    except WorkerDied as died:  # the calls queued behind it died with it
                        rest = [b for b, _ in pending]
                        pending.clear()
                        done = actor.run(group, batch, *args, died=died)
                        pending.extend((b, actor.submit(b, *args)) for b in rest)
                    for reports, out in done:
                        landed(pool, reports, out)
                        control.book(pool.index, sum(r.call.busy_s for r in reports))
            except BaseException as exc:
                errors.append(exc)
            finally:
                if actor is not None:
                    try:
                        actor.close()
                    except Exception as exc:
                        errors.append(exc)
                if leaving:
                    pool.gone()

        def start_worker(pool: _Pool) -> None:
            t = threading.Thread(target=worker, args=(pool, len(pool.threads)), daemon=True,
                                 name=f"curator-{pool.group.name}-{len(pool.threads)}")
            pool.threads.append(t)
            t.start()

        def start(pool: _Pool) -> None:
            pool.started = True
            for _ in range(pool.workers):
                start_worker(pool)

        control = PoolController(limits, [(p.opts["num_cpus"], p.frac) for p in pools],
                                 self.cfg.scale_interval_s)
        for pool in pools if stream else pools[:1]:
            start(pool)
        while not all(p.done for p in pools):
            if errors and not any(p.alive() for p in pools):
                return
            time.sleep(0.05)
            for k, pool in enumerate(pools):
                if not pool.started or pool.done:
                    continue
                if pool.upstream_done.is_set() and not pool.alive():
                    pool.done = True
                    if k + 1 < len(pools):  # the rest of its outputs, then no more
                        nxt = pools[k + 1]
                        nxt.flush()
                        nxt.upstream_done.set()
                        if not nxt.started and not errors:
                            if nxt.work.empty():  # nothing reached it: no actors to start
                                nxt.started = True
                            else:
                                start(nxt)
            if errors or not control.active:
                continue
            running = [p.running() for p in pools]
            moves = control.decide(
                running, [p.work.qsize() >= max(depth, n) for p, n in zip(pools, running,
                                                                          strict=True)],
                [p.started and not p.done and not p.closed() for p in pools])
            for k, move in enumerate(moves):
                pool = pools[k]
                if move > 0:
                    pool.slots[:] = node_slots(alive_nodes(pool.ignore_head),
                                               pool.opts["num_cpus"], pool.frac)
                    start_worker(pool)
                elif move < 0:
                    pool.retire_one()
                if move:
                    control.restart_clock(k)
                    stats.bump(pool.group.first,
                               "workers_added" if move > 0 else "workers_retired")
                    for i in pool.group.indices:
                        stats.stages[i].workers = max(stats.stages[i].workers, running[k] + move)
                    log.info("%s: %d -> %d actors (busy %.0f%%)", pool.group.name,
                             running[k], running[k] + move, 100 * (control.usage[k] or 0))
