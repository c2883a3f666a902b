"""Actor pools change size by measured throughput: a busy pool with work waiting grows while the
cluster has room (up to ``max_workers``), an idle one gives an actor up for it when the cluster is
full (down to ``min_workers``); without limits a pool keeps its size."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import pytest
from curator import Pipeline, ProcessingStage, Resources, Task

pytestmark = pytest.mark.ray


@dataclass
class SlowPid(ProcessingStage):
    """Takes 0.25 s per task and records which actor process ran it."""

    name: str = "SlowPid"
    resources: Resources = field(default_factory=lambda: Resources(cpus=0.5))

    def setup(self, worker_metadata=None) -> None:
        self.pid = os.getpid()

    def process(self, task: Task) -> Task:
        time.sleep(0.25)
        return task.derive({"pid": self.pid, "n": task.data})


def _run(**config):
    from curator.executors.ray_actor_pool import RayActorPoolExecutor

    # 40 tasks: 10 s of work for one actor, so a second one started on a slow machine (its
    # start-up can take seconds under load) still finds work waiting
    tasks = [Task(f"t{i:02d}", "growth", i) for i in range(40)]
    return Pipeline("growth", stages=[SlowPid()]).run(
        RayActorPoolExecutor({"num_workers": 1, "batches_in_flight": 1, **config}),
        initial_tasks=tasks, summary=False)


def test_pool_grows_to_max_workers_while_work_waits(ray_cluster):
    result = _run(max_workers=3, scale_interval_s=0.2)
    assert result.ok and sorted(t.data["n"] for t in result) == list(range(40))  # each once
    pids = {t.data["pid"] for t in result}
    assert 2 <= len(pids) <= 3  # started with one actor, grew, never past max_workers
    assert result.stats.stages[0].workers == len(pids)
    assert result.stats.stages[0].workers_added == len(pids) - 1


def test_pool_without_max_workers_keeps_its_size(ray_cluster):
    result = _run()
    assert len({t.data["pid"] for t in result}) == 1


class _Clock:
    """The controller's clock, moved by the test (a loaded machine cannot skew utilisation)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _controller(limits, free, needs=None):
    from curator.executors.ray_actor_pool import PoolController

    return PoolController(limits, needs or [(1.0, 0.0)] * len(limits), interval_s=0.0,
                          free=lambda: free, clock=_Clock())


def _measured(control, busy_per_actor, running):
    """Book one call per actor with ``busy_per_actor[k]`` of pool k's wall time busy."""
    control.clock.now += 0.02
    for k, (u, n) in enumerate(zip(busy_per_actor, running, strict=True)):
        for _ in range(n):
            control.book(k, u * 0.02)


def test_controller_grows_a_busy_pool_while_the_cluster_has_room():
    control = _controller([(1, 3)], {"CPU": 1.0})
    _measured(control, [0.95], [1])
    assert control.decide([1], [True], [True]) == [1]
    _measured(control, [0.95], [1])
    assert control.decide([3], [True], [True]) == [0]  # at max_workers


def test_controller_waits_for_backlog_measurement_and_room():
    control = _controller([(1, 3)], {"CPU": 0.0})
    _measured(control, [0.95], [1])
    assert control.decide([1], [False], [True]) == [0]  # nothing waiting
    _measured(control, [0.95], [1])
    assert control.decide([1], [True], [True]) == [0]  # full cluster, nobody to give way
    fresh = _controller([(1, 3)], {"CPU": 4.0})
    assert fresh.decide([1], [True], [True]) == [0]  # no call landed yet: nothing measured


def test_controller_moves_an_actor_from_an_idle_pool_to_a_busy_one():
    control = _controller([(1, 3), (1, 3)], {"CPU": 0.0})
    _measured(control, [0.05, 0.98], [2, 1])  # pool 0 held back, pool 1 the bottleneck
    assert control.decide([2, 1], [True, True], [True, True]) == [-1, 0]
    _measured(control, [0.05, 0.98], [2, 1])
    assert control.decide([1, 1], [True, True], [True, True]) == [0, 0]  # at its min_workers
    control.free = lambda: {"CPU": 1.0}  # the retired actor's CPU came free
    _measured(control, [0.05, 0.98], [1, 1])
    assert control.decide([1, 1], [True, True], [True, True]) == [0, 1]


def test_controller_lets_one_actor_go_at_a_time_for_a_hungry_pool():
    control = _controller([(1, 4), (1, 4)], {"CPU": 0.0})
    _measured(control, [0.05, 0.98], [3, 1])
    assert control.decide([3, 1], [False, True], [True, True]) == [-1, 0]
    _measured(control, [0.05, 0.98], [2, 1])
    assert control.decide([2, 1], [False, True], [True, True]) == [0, 0]  # owed: wait for it


def test_controller_shrinks_idle_pools_to_min_workers_and_fixed_pools_never():
    control = _controller([(1, 3)], {"CPU": 0.0})
    _measured(control, [0.1], [3])
    assert control.decide([3], [False], [True]) == [-1]
    fixed = _controller([(2, 2)], {"CPU": 8.0})
    assert not fixed.active
    _measured(fixed, [0.1], [2])
    assert fixed.decide([2], [True], [True]) == [0]


@dataclass
class QuickPid(ProcessingStage):
    """Takes 10 ms per task."""

    name: str = "QuickPid"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))

    def process(self, task: Task) -> Task:
        time.sleep(0.01)
        return task.derive(task.data)


def test_full_cluster_moves_actors_from_an_idle_pool_to_the_bottleneck(ray_cluster):
    """Two pools fill the 2-CPU cluster; the quick one is held back by the slow one (its
    outputs wait), so it lets an actor go and the slow pool grows into the freed CPU."""
    from curator.executors.ray_actor_pool import RayActorPoolExecutor

    tasks = [Task(f"t{i:02d}", "rebalance", i) for i in range(40)]
    stages = [QuickPid(), SlowPid(resources=Resources(cpus=1.0))]
    ex = RayActorPoolExecutor({"num_workers": {"QuickPid": 2, "SlowPid": 1},
                               "batches_in_flight": 1, "fuse_stages": False,
                               "min_workers": 1, "max_workers": 2, "scale_interval_s": 0.3})
    result = Pipeline("rebalance", stages=stages).run(ex, initial_tasks=tasks, summary=False)
    assert result.ok and sorted(t.data["n"] for t in result) == list(range(40))  # each once
    quick, slow = result.stats.stages
    assert quick.workers_retired >= 1 and slow.workers_added >= 1
    assert len({t.data["pid"] for t in result}) == 2  # the slow group ran on two actors


def test_ray_data_pool_may_grow_to_max_workers(ray_cluster):
    from curator.executors.ray_data import RayDataExecutor

    ex = RayDataExecutor(num_workers=1, max_workers=3)
    (_, args), = ex.plan(ex.groups([SlowPid()]), {"CPU": 2.0})
    assert (args["compute"].min_size, args["compute"].max_size) == (1, 3)  # autoscaling pool
    tasks = [Task(f"t{i:02d}", "growth", i) for i in range(12)]
    result = Pipeline("growth", stages=[SlowPid()]).run(ex, initial_tasks=tasks, summary=False)
    assert result.ok and sorted(t.data["n"] for t in result) == list(range(12))
    assert 1 <= len({t.data["pid"] for t in result}) <= 3


def test_pool_limits_fixed_by_default_configured_or_autoscaled():
    from curator.executors.ray_data import RayDataExecutor
    from curator.executors.sizing import pool_bounds

    def pool_limits(config, size, cpus_each, gpus_each, cpus, gpus):
        """The planner's bounds of a pool of SlowPid under ``config``."""
        ex = RayDataExecutor(config)
        demand = ex.demand(ex.groups([SlowPid()])[0])
        return pool_bounds(size, demand.min_workers, demand.max_workers, ex.cfg.autoscale,
                           cpus_each, gpus_each, cpus, gpus)

    assert pool_limits({}, 2, 0.5, 0.0, 4.0, 0.0) == (2, 2)  # a fixed pool
    assert pool_limits({"max_workers": {"SlowPid": 5}}, 2, 0.5, 0.0, 4.0, 0.0) == (2, 5)
    assert pool_limits({"min_workers": 1}, 2, 0.5, 0.0, 4.0, 0.0) == (1, 2)
    assert pool_limits({"autoscale": True}, 2, 0.5, 0.0, 4.0, 0.0) == (1, 8)  # 4 / 0.5
    # GPUs bound it too: 0.25 of a GPU each on 1 GPU
    assert pool_limits({"autoscale": True}, 1, 0.5, 0.25, 4.0, 1.0) == (1, 4)


def test_ray_data_autoscale_plans_actor_pools_from_one_to_what_the_cluster_holds():
    from curator.executors.ray_data import RayDataExecutor

    ex = RayDataExecutor(num_workers=2, autoscale=True)
    (_, args), = ex.plan(ex.groups([SlowPid()]), {"CPU": 2.0})
    assert (args["compute"].min_size, args["compute"].max_size) == (1, 4)  # 2 CPUs / 0.5
