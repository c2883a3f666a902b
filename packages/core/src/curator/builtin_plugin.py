"""Core's own plugin: registers executors and modality-agnostic stages exactly as a third-party
plugin would (with the single ``curator_register`` hook; kinds come from the classes)."""

from __future__ import annotations

from curator.executors import BUILTIN_EXECUTORS, builtin_executor
from curator.plugins.hookspecs import Register, hookimpl
from curator.plugins.migration import CORE_MODULES, MigrationRules

__all__ = ["CORE_MIGRATION_RULES", "curator_register", "curator_migrate_rules"]

_CORE = CORE_MODULES

CORE_MIGRATION_RULES = MigrationRules(
    modules=(
        ("nemo_curator.stages.deduplication", ("curator.dedup", *_CORE)),
        ("nemo_curator.stages.file_partitioning", ("curator.stages", *_CORE)),
        ("nemo_curator.stages", ("curator", "curator.stages", *_CORE[2:])),
        ("nemo_curator.tasks", ("curator", "curator.tasks")),
        ("nemo_curator.config.run", ("curator.spec", "curator")),
        ("nemo_curator.utils", ("curator.utils", "curator.tasks", "curator")),
        ("nemo_curator", _CORE),
    ),
    renames={
        "nemo_curator.backends.ray_data.RayDataExecutor": ("curator", "RayDataExecutor"),
        "nemo_curator.backends.experimental.ray_data.RayDataExecutor": ("curator",
                                                                        "RayDataExecutor"),
        "nemo_curator.utils.performance_utils.StagePerfStats": ("curator.tasks", "StagePerf"),
    },
    shim={
        "nemo_curator.tasks": ("curator.tasks",),
        "nemo_curator.tasks.tasks": ("curator.tasks",),
        "nemo_curator.tasks.file_group": ("curator.tasks",),
        "nemo_curator.tasks.utils": ("curator.tasks",),
        "nemo_curator.stages.base": ("curator.stages.base",),
        "nemo_curator.stages.resources": ("curator.resources",),
        "nemo_curator.stages.function_decorators": ("curator.stages.function",),
        "nemo_curator.pipeline": ("curator.pipeline",),
        "nemo_curator.pipeline.pipeline": ("curator.pipeline",),
        "nemo_curator.backends.xenna": ("curator.executors.xenna",),
        "nemo_curator.utils.performance_utils": ("curator.tasks",),
    },
)
"""Core's own NeMo mappings; each modality package declares its own the same way."""


@hookimpl
def curator_migrate_rules() -> MigrationRules:
    return CORE_MIGRATION_RULES


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
