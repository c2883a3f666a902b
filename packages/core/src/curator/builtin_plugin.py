"""Core's own plugin: registers executors and modality-agnostic stages exactly as a third-party
plugin would (with the single ``curator_register`` hook; kinds come from the classes)."""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl

__all__ = ["curator_register"]


@hookimpl
def curator_register(register: Register) -> None:
    # The Ray executors' modules import ray only when they run, so registering them is cheap.
    from curator.dedup import ExactDeduplicationWorkflow, SemanticDeduplicationWorkflow
    from curator.dedup.exact import ExactDuplicatesStage, ExactHashStage
    from curator.dedup.semantic_stage import SemanticDeduplicationStage
    from curator.dedup.semantic_workflow import AssignClustersStage, ClusterDedupStage
    from curator.dedup.workflow import RemoveDuplicatesStage
    from curator.executors.local import LocalExecutor
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor
    from curator.executors.xenna import XennaExecutor
    from curator.stages.file_partitioning import FilePartitioningStage

    register(LocalExecutor, name="local")
    register(RayDataExecutor, name="ray_data")
    register(RayActorPoolExecutor, name="ray_actor_pool")
    register(XennaExecutor, name="xenna")  # needs curator-core[xenna] only when it runs
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
