"""Worker sizing, one planner for every executor: how many workers each stage group gets,
what share of a CPU and GPU each takes, and between which bounds a pool may change size.

:func:`plan_pools` decides from the groups' :class:`Demand` (resources, a fixed count,
``min_workers`` / ``max_workers``) and the :class:`Cluster` (CPUs, GPUs, GPU memory, nodes);
each engine only translates the :class:`PoolPlan` into its own arguments (Ray Data's
``compute`` / ``num_cpus`` / ``num_gpus``, the actor pool's sizes, Xenna's ``StageSpec``, the
local executor's threads). The rules:

* a fixed count always wins (the executor's ``num_workers`` config, then the stage's own);
* a GPU group gets as many workers as its GPU fraction fits in the GPUs (shared evenly between
  the GPU groups that run at the same time; 0 where not even one fits: the caller then runs the
  groups one at a time);
* a CPU group gets as many workers as its ``Resources.cpus`` fit in the CPUs (shared evenly
  between the CPU groups that run at the same time), and at least one per node, so the work
  spreads over the cluster;
* pools that hold their CPUs (actors) have their CPU requests scaled down (never up) so that
  together they fit, leaving room for the groups that run as tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from curator.resources import Resources

__all__ = ["Cluster", "Demand", "PoolPlan", "plan_pools", "pool_bounds", "workers_alone",
           "workers_together", "fit_cpu_shares"]


@dataclass(frozen=True)
class Cluster:
    """What the pools are sized from: CPUs and GPUs (summed over the usable nodes), the memory
    of the smallest GPU (for ``Resources.gpu_memory_gb``) and the number of usable nodes."""

    cpus: float
    gpus: float = 0.0
    gpu_memory_gb: float | None = None
    nodes: int = 1

    @classmethod
    def of(cls, resources: dict[str, float], gpu_memory_gb: float | None = None,
           nodes: int = 1) -> Cluster:
        """From Ray's ``cluster_resources()``-style dict (``CPU``, ``GPU``)."""
        return cls(float(resources.get("CPU", 1.0)), float(resources.get("GPU", 0.0)),
                   gpu_memory_gb, max(1, nodes))


@dataclass(frozen=True)
class Demand:
    """One stage group's ask: its resources per worker, a fixed count (``None``: planned) and
    the ``min_workers`` / ``max_workers`` bounds set for it (``None``: the planned size, or
    with ``autoscale`` 1 and what the cluster holds). ``holds_cpus``: its workers are actors
    that keep their CPUs for the run (``False``: Ray tasks, which free them between calls)."""

    resources: Resources
    fixed: int | None = None
    min_workers: int | None = None
    max_workers: int | None = None
    holds_cpus: bool = True


@dataclass(frozen=True)
class PoolPlan:
    """A group's plan: ``workers`` to start with, ``cpus`` / ``gpus`` per worker, and the
    fewest and most workers its pool may have."""

    workers: int
    cpus: float
    gpus: float
    min_workers: int
    max_workers: int


def plan_pools(demands: Sequence[Demand], cluster: Cluster, *, together: bool = True,
               autoscale: bool = False, most: Sequence[int] | None = None) -> list[PoolPlan]:
    """The plan of every group (see the module's rules).

    Parameters:
        together: the groups run at the same time (streaming) and share the cluster; ``False``:
            each is planned with the cluster to itself (the local executor's threads hold no
            cores; pools that take turns).
        autoscale: pools may grow and shrink: unset bounds default to 1 and what the cluster
            holds.
        most: at most this many workers per group to start with (the batches it will get).
    """
    res = [d.resources for d in demands]
    fixed = [d.fixed for d in demands]
    if together:
        counts = workers_together(res, fixed, cluster.cpus, cluster.gpus,
                                  cluster.gpu_memory_gb, share_gpus=True)
    else:
        counts = [workers_alone(r, f, cluster.cpus, cluster.gpus, cluster.gpu_memory_gb)
                  for r, f in zip(res, fixed, strict=True)]
    # at least one worker per node for CPU groups, so the work spreads over the cluster
    counts = [max(n, cluster.nodes) if not f and not r.requires_gpu else n
              for n, f, r in zip(counts, fixed, res, strict=True)]
    if most is not None:
        counts = [max(1, min(n, m)) if n else 0 for n, m in zip(counts, most, strict=True)]
    # Ray tasks free their CPUs between calls; actor pools leave room for one such task
    tasks_cpus = max((min(d.resources.cpus, cluster.cpus) for d in demands if not d.holds_cpus),
                     default=0.0)
    if tasks_cpus and any(d.holds_cpus for d in demands):
        tasks_cpus = min(tasks_cpus, cluster.cpus / 2)
    held = [k for k, d in enumerate(demands) if d.holds_cpus]
    if together:
        fitted = fit_cpu_shares([min(res[k].cpus, cluster.cpus) for k in held],
                                [counts[k] for k in held], cluster.cpus - tasks_cpus)
    else:
        fitted = [fit_cpu_shares([min(res[k].cpus, cluster.cpus)], [counts[k]],
                                 cluster.cpus)[0] for k in held]
    shares = dict(zip(held, fitted, strict=True))
    plans = []
    for k, d in enumerate(demands):
        cpus = shares.get(k, max(int(min(d.resources.cpus, tasks_cpus) * 1000) / 1000, 0.001))
        gpus = d.resources.gpu_fraction(cluster.gpu_memory_gb) if d.resources.requires_gpu \
            else 0.0
        low, high = pool_bounds(counts[k], d.min_workers, d.max_workers, autoscale, cpus, gpus,
                                cluster.cpus, cluster.gpus)
        plans.append(PoolPlan(counts[k], cpus, gpus, low, high))
    return plans


def pool_bounds(size: int, min_workers: int | None, max_workers: int | None, autoscale: bool,
                cpus_each: float, gpus_each: float, cpus: float, gpus: float) -> tuple[int, int]:
    """The fewest and most workers of a pool planned at ``size`` workers of ``cpus_each`` /
    ``gpus_each``: ``min_workers`` / ``max_workers``, else with ``autoscale`` 1 and as many as
    ``cpus`` / ``gpus`` hold, else ``size`` (a fixed pool)."""
    fits = int(cpus / max(cpus_each, 1e-3) + 1e-9)
    if gpus_each:
        fits = min(fits, int(gpus / gpus_each + 1e-9))
    low = min_workers or (1 if autoscale else size)
    top = max_workers or (max(fits, 1) if autoscale else size)
    return max(1, min(low, max(size, 1))), max(top, size)


def workers_alone(res: Resources, fixed: int | None, cpus: float, gpus: float,
                  gpu_mem: float | None = None) -> int:
    """Workers of a stage with the machine (``cpus`` cores, ``gpus`` GPUs) to itself.

    Parameters:
        res: the stage's resources per worker.
        fixed: a count set by the user (wins when given).
        gpu_mem: GPU memory in GB, to turn ``gpu_memory_gb`` into a fraction of a GPU.
    """
    if fixed:
        return int(fixed)
    if res.requires_gpu:
        frac = res.gpu_fraction(gpu_mem) or 1.0
        return max(1, int(gpus / frac + 1e-9)) if gpus else 1
    return max(1, int(cpus / max(res.cpus, 1e-3) + 1e-9))


def workers_together(resources: Sequence[Resources], fixed: Sequence[int | None], cpus: float,
                     gpus: float, gpu_mem: float | None = None, *,
                     share_gpus: bool = False) -> list[int]:
    """Workers of each pool when all pools run at once: the CPU pools share the CPUs evenly;
    each GPU pool takes the GPUs (``share_gpus``: an even share of them, 0 where not even one
    worker fits: the caller then runs the pools one at a time)."""
    gpu_pools = sum(1 for r in resources if r.requires_gpu) or 1
    cpu_pools = (len(resources) - sum(1 for r in resources if r.requires_gpu)) or 1
    out = []
    for res, n in zip(resources, fixed, strict=True):
        if n:
            out.append(int(n))
        elif res.requires_gpu and share_gpus:
            out.append(int(gpus / gpu_pools / (res.gpu_fraction(gpu_mem) or 1.0) + 1e-9))
        else:  # a GPU pool's count does not depend on the CPUs
            out.append(workers_alone(res, None, cpus / cpu_pools, gpus, gpu_mem))
    return out


def fit_cpu_shares(cpus_per_worker: Sequence[float], workers: Sequence[int],
                   room: float) -> list[float]:
    """``num_cpus`` per worker of each pool: what it asks for, scaled down (never up) so that
    all pools together fit in ``room`` CPUs, rounded down to a thousandth (at least 0.001), so
    any number of pools can stream on a small machine."""
    want = sum(c * n for c, n in zip(cpus_per_worker, workers, strict=True))
    scale = min(1.0, room / want) if want > 0 else 1.0
    return [max(int(c * scale * 1000) / 1000, 0.001) for c in cpus_per_worker]
