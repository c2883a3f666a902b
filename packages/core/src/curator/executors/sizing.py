"""Worker sizing, one set of rules for every executor: how many workers a stage (or a fused
group of stages) gets, and what share of a CPU each takes when several pools must fit together.

A fixed count always wins (the executor's ``num_workers`` config, then the stage's own). Else a
CPU stage gets as many workers as its ``Resources.cpus`` fit, a GPU stage as many as its GPU
fraction fits; pools that run at the same time share the machine evenly first.
"""

from __future__ import annotations

from collections.abc import Sequence

from curator.resources import Resources

__all__ = ["workers_alone", "workers_together", "fit_cpu_shares"]


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
