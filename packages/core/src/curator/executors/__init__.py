"""Executors: the same pipeline runs on any of them."""

from curator.executors.base import BaseExecutor, invoke_stage
from curator.executors.local import LocalExecutor
from curator.run.context import RunContext
from curator.run.outcome import StageCall
from curator.run.result import RunResult
from curator.run.stats import RunStats, StageStats

__all__ = ["BaseExecutor", "LocalExecutor", "RunContext", "RunResult", "RunStats", "StageStats",
           "StageCall", "invoke_stage", "RayDataExecutor", "RayActorPoolExecutor", "XennaExecutor",
           "SlurmRayClient"]


def __getattr__(name: str):  # Ray executors import ray only when asked for
    if name == "RayDataExecutor":
        from curator.executors.ray_data import RayDataExecutor

        return RayDataExecutor
    if name == "RayActorPoolExecutor":
        from curator.executors.ray_actor_pool import RayActorPoolExecutor

        return RayActorPoolExecutor
    if name == "XennaExecutor":
        from curator.executors.xenna import XennaExecutor

        return XennaExecutor
    if name == "SlurmRayClient":
        from curator.cluster.slurm import SlurmRayClient

        return SlurmRayClient
    raise AttributeError(name)
