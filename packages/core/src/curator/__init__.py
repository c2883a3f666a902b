"""Curator: curate training data for AI models, on a laptop or a Ray cluster.

Public API::

    from curator import Pipeline, ProcessingStage, Resources, LocalExecutor, processing_stage
"""

from __future__ import annotations

from curator.errors import (
    ConfigError,
    CuratorError,
    PipelineValidationError,
    PluginConflictError,
    PluginError,
    UnknownNameError,
)
from curator.executors.base import BaseExecutor, RunContext, RunResult
from curator.executors.local import LocalExecutor
from curator.executors.stats import RunStats, StageStats
from curator.pipeline import Pipeline
from curator.plugins.hookspecs import hookimpl, hookspec
from curator.rejected import RejectedRecord, RejectedSink
from curator.resources import Resources
from curator.stages.base import CompositeStage, ProcessingStage
from curator.stages.function import FunctionStage, processing_stage
from curator.tasks import EMPTY_TASK, EmptyTask, FileGroupTask, StagePerf, Task, stable_id

__version__ = "0.1.0"

__all__ = [
    "Task", "FileGroupTask", "EmptyTask", "EMPTY_TASK", "StagePerf", "stable_id",
    "Resources", "ProcessingStage", "CompositeStage", "FunctionStage", "processing_stage",
    "Pipeline", "BaseExecutor", "LocalExecutor", "RunContext", "RunResult", "RunStats",
    "StageStats", "RayDataExecutor", "RayActorPoolExecutor", "RayClient",
    "RejectedRecord", "RejectedSink", "hookimpl", "hookspec",
    "CuratorError", "ConfigError", "PipelineValidationError", "PluginError",
    "PluginConflictError", "UnknownNameError", "__version__",
]


def __getattr__(name: str):  # Ray is imported only when a Ray executor is asked for
    if name in ("RayDataExecutor", "RayActorPoolExecutor"):
        from curator import executors

        return getattr(executors, name)
    if name == "RayClient":
        from curator.executors.ray_client import RayClient

        return RayClient
    raise AttributeError(f"module 'curator' has no attribute {name!r}")
