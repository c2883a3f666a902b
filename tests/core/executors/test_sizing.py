"""Worker sizing: one set of rules (curator.executors.sizing) that every executor plans with."""

from __future__ import annotations

import pytest
from curator import Resources
from curator.executors.sizing import fit_cpu_shares, workers_alone, workers_together

from tests.core.executors.stages import Square


def test_a_stage_alone_gets_what_its_resources_fit():
    assert workers_alone(Resources(cpus=0.5), None, cpus=4, gpus=0) == 8
    assert workers_alone(Resources(cpus=3), None, cpus=2, gpus=0) == 1  # at least one
    assert workers_alone(Resources(cpus=0.1), None, cpus=1, gpus=0) == 10  # not 9: 1 / 0.1
    assert workers_alone(Resources(cpus=1), 5, cpus=2, gpus=0) == 5  # a fixed count wins
    assert workers_alone(Resources(gpus=0.25), None, cpus=8, gpus=2) == 8
    assert workers_alone(Resources(gpu_memory_gb=20), None, cpus=8, gpus=1, gpu_mem=80) == 4
    assert workers_alone(Resources(gpus=1), None, cpus=8, gpus=0) == 1  # no GPU here: one


def test_pools_at_once_share_the_cpus_and_optionally_the_gpus():
    cpu, gpu = Resources(cpus=1), Resources(cpus=1, gpus=1)
    assert workers_together([cpu, cpu], [None, None], cpus=4, gpus=0) == [2, 2]
    assert workers_together([cpu, cpu], [3, None], cpus=4, gpus=0) == [3, 2]
    assert workers_together([cpu, gpu], [None, None], cpus=4, gpus=2) == [4, 2]
    assert workers_together([gpu, gpu], [None, None], cpus=4, gpus=2) == [2, 2]
    assert workers_together([gpu, gpu], [None, None], cpus=4, gpus=2, share_gpus=True) == [1, 1]
    # one GPU cannot hold an actor of each pool at once: 0 tells the caller to take turns
    assert workers_together([gpu, gpu], [None, None], cpus=4, gpus=1, share_gpus=True) == [0, 0]


def test_cpu_shares_are_scaled_down_to_fit_never_up():
    assert fit_cpu_shares([1.0, 1.0], [2, 2], room=2.0) == [0.5, 0.5]
    assert fit_cpu_shares([1.0, 0.5], [1, 1], room=8.0) == [1.0, 0.5]
    assert fit_cpu_shares([1.0] * 9, [1] * 9, room=0.001) == [0.001] * 9  # never zero
    assert fit_cpu_shares([], [], room=2.0) == []


@pytest.mark.parametrize("res", [Resources(cpus=0.5), Resources(cpus=1), Resources(cpus=3)])
def test_every_executor_sizes_a_lone_stage_alike(res):
    """The local executor, Ray Data and the actor pool plan a one-stage pipeline with the same
    rule, so moving a pipeline between them keeps its worker counts."""
    pytest.importorskip("ray")
    from curator.executors.local import plan_workers
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    stage = Square().with_(resources=res)
    local = plan_workers(stage, 4.0, 0)
    pool = RayActorPoolExecutor()
    (_, ((n_pool, _),)) = pool.plan(pool.groups([stage]), 100, 4.0, 0.0)
    data = RayDataExecutor()
    ((n_data, _),) = data.plan(data.groups([stage]), {"CPU": 4.0})
    assert local == n_pool == n_data == max(1, int(4 / res.cpus))
