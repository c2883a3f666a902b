"""The one sizing planner (curator.executors.sizing.plan_pools) and how each engine translates
it: the same stage gets the same workers on every executor."""

from __future__ import annotations

import pytest
from curator import Resources
from curator.executors.sizing import Cluster, Demand, plan_pools, pool_bounds

from tests.core.executors.stages import Square

HALF_GPU = Resources(gpus=0.5)


def test_gpu_groups_fill_the_gpus_and_share_them_when_together():
    (one,) = plan_pools([Demand(HALF_GPU)], Cluster(cpus=2, gpus=2))
    assert (one.workers, one.gpus) == (4, 0.5)
    assert one.workers * one.cpus <= 2  # the CPU requests are scaled down to fit
    both = plan_pools([Demand(HALF_GPU), Demand(HALF_GPU)], Cluster(cpus=4, gpus=2))
    assert [p.workers for p in both] == [2, 2]
    # one GPU cannot hold a whole-GPU worker of each: 0 tells the caller to take turns
    assert [p.workers for p in plan_pools([Demand(Resources(gpus=1))] * 2,
                                          Cluster(cpus=4, gpus=1))] == [0, 0]
    mem = plan_pools([Demand(Resources(gpu_memory_gb=20))], Cluster(8, 1, gpu_memory_gb=80))
    assert (mem[0].workers, mem[0].gpus) == (4, 0.25)


def test_cpu_groups_share_the_cpus_and_get_one_worker_per_node():
    cpu = Demand(Resources(cpus=1))
    assert [p.workers for p in plan_pools([cpu, cpu], Cluster(cpus=4))] == [2, 2]
    assert [p.workers for p in plan_pools([cpu, cpu], Cluster(cpus=4), together=False)] == [4, 4]
    # two nodes: every CPU group spreads over both, even where the CPUs fit one worker
    spread = plan_pools([cpu, cpu, cpu], Cluster(cpus=2, nodes=2))
    assert [p.workers for p in spread] == [2, 2, 2]
    assert sum(p.workers * p.cpus for p in spread) <= 2 + 1e-9
    # a fixed count wins, also over the nodes
    (one,) = plan_pools([Demand(Resources(cpus=1), fixed=1)], Cluster(cpus=2, nodes=2))
    assert one.workers == 1


def test_task_groups_leave_room_and_bounds_follow_the_config():
    actor, task = Demand(Resources(cpus=1)), Demand(Resources(cpus=1), holds_cpus=False)
    a, t = plan_pools([actor, task], Cluster(cpus=4))
    assert t.cpus == 1.0 and a.workers * a.cpus <= 4 - 1.0 + 1e-9
    (auto,) = plan_pools([Demand(Resources(cpus=0.5), fixed=2)], Cluster(cpus=4), autoscale=True)
    assert (auto.min_workers, auto.max_workers) == (1, 8)
    (fixed,) = plan_pools([Demand(Resources(cpus=0.5), fixed=2, max_workers=5)], Cluster(4))
    assert (fixed.workers, fixed.min_workers, fixed.max_workers) == (2, 2, 5)
    assert pool_bounds(1, None, None, True, 0.5, 0.25, 4.0, 1.0) == (1, 4)  # GPUs bound it
    # no more workers than batches to run
    assert plan_pools([Demand(Resources(cpus=0.5))], Cluster(cpus=4), most=[3])[0].workers == 3


@pytest.mark.parametrize("res", [HALF_GPU, Resources(cpus=0.5), Resources(gpu_memory_gb=20)])
def test_every_engine_translates_the_same_plan(res, monkeypatch):
    """Ray Data, the actor pool, Xenna and the local executor give a one-stage pipeline the
    planner's workers, on 2 CPUs and 2 GPUs of 80 GB."""
    pytest.importorskip("ray")
    from curator.executors import ray_actor_pool, ray_data, xenna
    from curator.executors.local import LocalExecutor

    for module in (ray_data, ray_actor_pool, xenna):
        monkeypatch.setattr(module, "node_gpu_memory_gb", lambda *_: 80.0)
    nodes = [{"NodeID": "n1", "Alive": True, "Resources": {"CPU": 2.0, "GPU": 2.0}}]
    monkeypatch.setattr(xenna, "alive_nodes", lambda *_: nodes)
    stage = Square().with_(resources=res)
    want = plan_pools([Demand(res)], Cluster(cpus=2, gpus=2, gpu_memory_gb=80))[0].workers

    data = ray_data.RayDataExecutor()
    ((n_data, args),) = data.plan(data.groups([stage]), {"CPU": 2.0, "GPU": 2.0})
    pool = ray_actor_pool.RayActorPoolExecutor()
    (_, ((n_pool, opts),)) = pool.plan(pool.groups([stage]), 100, 2.0, 2.0)
    x = xenna.XennaExecutor()
    ((n_xenna, _, x_gpus),) = x._cpu_shares(x.groups([stage]))
    local = LocalExecutor()
    (n_local,) = local.plan(local.groups([stage])[:1], 2.0, 2)
    assert n_data == n_pool == want
    assert args.get("num_gpus", 0) == opts.get("num_gpus", 0) == x_gpus
    if res.requires_gpu:  # Xenna's autoscaler keeps sizing CPU groups
        assert n_xenna == want == (8 if res.gpu_memory_gb else 4)
    if not res.gpu_memory_gb:  # the local executor knows no GPU memory
        assert n_local == want
