"""Core's own plugin: registers executors and modality-agnostic stages exactly as a third-party
plugin would."""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl


@hookimpl
def curator_register_executors(register: Register) -> None:
    from curator.executors.local import LocalExecutor

    register(LocalExecutor, name="local")
    # The Ray executors' modules import ray only when they run, so registering them is cheap.
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    register(RayDataExecutor, name="ray_data")
    register(RayActorPoolExecutor, name="ray_actor_pool")


@hookimpl
def curator_register_deduplicators(register: Register) -> None:
    """Modality-agnostic deduplication (exact by content hash, semantic over embeddings)."""
    from curator.dedup import ExactDeduplicationWorkflow, SemanticDeduplicationWorkflow
    from curator.dedup.exact import ExactDuplicatesStage, ExactHashStage
    from curator.dedup.semantic_workflow import AssignClustersStage, ClusterDedupStage
    from curator.dedup.workflow import RemoveDuplicatesStage

    for cls in (ExactDeduplicationWorkflow, SemanticDeduplicationWorkflow, ExactHashStage,
                ExactDuplicatesStage, AssignClustersStage, ClusterDedupStage,
                RemoveDuplicatesStage):
        register(cls)
