"""Executors: the same pipeline runs on any of them."""

import importlib

from curator.executors.base import BaseExecutor, invoke_stage
from curator.executors.local import LocalExecutor
from curator.run.context import RunContext
from curator.run.outcome import StageCall
from curator.run.result import RunResult
from curator.run.stats import RunStats, StageStats

__all__ = ["BaseExecutor", "LocalExecutor", "RunContext", "RunResult", "RunStats", "StageStats",
           "StageCall", "invoke_stage", "RayDataExecutor", "RayActorPoolExecutor", "XennaExecutor",
           "SlurmRayClient", "BUILTIN_EXECUTORS", "builtin_executor"]

#: Core's executors, registered by its plugin: name -> "module:class". Their modules import ray
#: only when they run, so registering them is cheap.
BUILTIN_EXECUTORS = {
    "local": "curator.executors.local:LocalExecutor",
    "ray_data": "curator.executors.ray_data:RayDataExecutor",
    "ray_actor_pool": "curator.executors.ray_actor_pool:RayActorPoolExecutor",
    "xenna": "curator.executors.xenna:XennaExecutor",  # needs curator-core[xenna] only to run
}


def builtin_executor(name: str) -> type | None:
    """The class of core's executor ``name`` (``None`` for any other name)."""
    if name not in BUILTIN_EXECUTORS:
        return None
    module, cls = BUILTIN_EXECUTORS[name].split(":")
    return getattr(importlib.import_module(module), cls)


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
