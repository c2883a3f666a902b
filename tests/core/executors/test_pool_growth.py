"""Actor pools grow while work waits and the cluster has room (``max_workers``), up to the
limit, and shrink as the work runs out; without ``max_workers`` a pool keeps its size."""

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


def test_pool_without_max_workers_keeps_its_size(ray_cluster):
    result = _run()
    assert len({t.data["pid"] for t in result}) == 1


def test_growth_waits_for_backlog_and_room():
    from curator.executors.ray_actor_pool import GrowthController

    grow = GrowthController(max_workers=2, cpus=1.0, gpus=0.0, interval_s=0.0)
    assert not grow.wants_another(running=2, waiting=10, depth=1, errors=[])  # at the limit
    assert not grow.wants_another(running=1, waiting=1, depth=2, errors=[])  # too little work
    assert not grow.wants_another(running=1, waiting=5, depth=1, errors=[RuntimeError()])


def test_ray_data_pool_may_grow_to_max_workers(ray_cluster):
    from curator.executors.ray_data import RayDataExecutor

    ex = RayDataExecutor(num_workers=1, max_workers=3)
    (_, args), = ex.plan(ex.groups([SlowPid()]), {"CPU": 2.0})
    assert (args["compute"].min_size, args["compute"].max_size) == (1, 3)  # autoscaling pool
    tasks = [Task(f"t{i:02d}", "growth", i) for i in range(12)]
    result = Pipeline("growth", stages=[SlowPid()]).run(ex, initial_tasks=tasks, summary=False)
    assert result.ok and sorted(t.data["n"] for t in result) == list(range(12))
    assert 1 <= len({t.data["pid"] for t in result}) <= 3
