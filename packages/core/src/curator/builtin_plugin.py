"""Core's own plugin: registers executors and modality-agnostic stages exactly as a third-party
plugin would (with the single ``curator_register`` hook; kinds come from the classes)."""

from __future__ import annotations

from curator.executors import BUILTIN_EXECUTORS, builtin_executor
from curator.plugins.hookspecs import Register, hookimpl

__all__ = ["curator_register"]


@hookimpl
def curator_register(register: Register) -> None:
    from curator.dedup import ExactDeduplicationWorkflow, SemanticDeduplicationWorkflow
    from curator.dedup.exact import ExactDuplicatesStage, ExactHashStage
    from curator.dedup.semantic_stage import SemanticDeduplicationStage
    from curator.dedup.semantic_workflow import AssignClustersStage, ClusterDedupStage
    from curator.dedup.workflow import RemoveDuplicatesStage
    from curator.stages.file_partitioning import FilePartitioningStage

    for name in BUILTIN_EXECUTORS:
        register(builtin_executor(name), name=name)
    register(FilePartitioningStage)
    # Task classes: failed tasks and dedup caches are stored as data and rebuilt through these.
    from curator.tasks import EmptyTask, FileGroupTask, Task

    for task_cls in (Task, FileGroupTask, EmptyTask):
        register(task_cls, kind="task")
    # Modality-agnostic deduplication (exact by content hash, semantic over embeddings).
    for cls in (ExactDeduplicationWorkflow, SemanticDeduplicationWorkflow, ExactHashStage,
                ExactDuplicatesStage, AssignClustersStage, ClusterDedupStage,
                RemoveDuplicatesStage, SemanticDeduplicationStage):
        register(cls, kind="deduplicator")
