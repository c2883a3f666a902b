"""Curator: curate training data for AI models, on a laptop or a Ray cluster.

Public API::

    from curator import Pipeline, ProcessingStage, Resources, LocalExecutor, processing_stage

Every name is loaded on first use (module ``__getattr__``), so ``import curator`` and
``from curator import Pipeline, ProcessingStage, Resources`` load no fsspec, numpy, pyarrow,
ray or torch. To add a public name, add it to :data:`_EXPORTS` (name -> module); ``__all__``
follows.
"""

from __future__ import annotations

import os

from curator._lazy import lazy_exports

# Hugging Face's per-model progress bars ("Loading weights", "Writing model shards") would print
# for every model a stage loads, in every worker; Curator shows its own progress. Read when
# huggingface_hub / transformers are imported; HF_HUB_DISABLE_PROGRESS_BARS=0 brings them back.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # tasks, stages, resources, pipeline
    "Task": "curator.tasks", "FileGroupTask": "curator.tasks", "EmptyTask": "curator.tasks",
    "EMPTY_TASK": "curator.tasks", "StagePerf": "curator.tasks",
    "TaskPerfUtils": "curator.tasks", "stable_id": "curator.tasks",
    "Resources": "curator.resources",
    "ProcessingStage": "curator.stages.base", "CompositeStage": "curator.stages.base",
    "StageIO": "curator.stages.base", "get_stage_class": "curator.stages.base",
    "FunctionStage": "curator.stages.function", "processing_stage": "curator.stages.function",
    "FilterStage": "curator.stages.filter",
    "ensure_setup": "curator.stages.lifecycle", "release_stage": "curator.stages.lifecycle",
    "NodeInfo": "curator.stages.node_info", "WorkerMetadata": "curator.stages.node_info",
    "Pipeline": "curator.pipeline", "create_pipeline_from_yaml": "curator.spec",
    # executors and results
    "BaseExecutor": "curator.executors.base", "RunContext": "curator.executors.base",
    "RunResult": "curator.executors.base", "PipelineFailedError": "curator.errors",
    "LocalExecutor": "curator.executors.local",
    "RunStats": "curator.run.stats", "StageStats": "curator.run.stats",
    "RayDataExecutor": "curator.executors", "RayActorPoolExecutor": "curator.executors",
    "XennaExecutor": "curator.executors", "SlurmRayClient": "curator.executors",
    "RayClient": "curator.cluster.ray_client",
    "RejectedRecord": "curator.run.sink", "RejectedSink": "curator.run.sink",
    # output directories (save modes, locks)
    "ManagedOutput": "curator.output_dir", "OutputDirError": "curator.output_dir",
    "OutputDirLockedError": "curator.output_dir",
    # plugins
    "hookimpl": "curator.plugins.hookspecs", "hookspec": "curator.plugins.hookspecs",
    # errors
    "CuratorError": "curator.errors", "ConfigError": "curator.errors",
    "PipelineValidationError": "curator.errors", "PluginError": "curator.errors",
    "PluginConflictError": "curator.errors", "UnknownNameError": "curator.errors",
    "AmbiguousNameError": "curator.errors",
}

__all__ = [*_EXPORTS, "__version__"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

