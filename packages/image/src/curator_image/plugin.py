"""The curator-image plugin: registers its stages through Curator's single ``curator_register``
hook (each stage's kind comes from its class).

Importing this module is cheap: the stage modules import torch, transformers, webdataset and
PIL only inside ``setup()`` and functions.
"""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl
from curator.plugins.migration import MigrationRules

__all__ = ["curator_migrate_rules", "curator_register"]


@hookimpl
def curator_register(register: Register) -> None:
    from curator_image.dedup.removal import ImageDuplicateRemovalStage, ImageDuplicatesRemovalStage
    from curator_image.dedup.workflow import ImageSemanticDeduplicationWorkflow
    from curator_image.filters.score import ImageAestheticFilterStage, ImageNSFWFilterStage
    from curator_image.io.convert import ConvertImageBatchToDocumentBatchStage
    from curator_image.io.reader import (
        ImageReaderStage,
        WebDatasetReaderStage,
        WebDatasetShardPartitionStage,
    )
    from curator_image.io.writer import ImageWriterStage
    from curator_image.stages.embedding import ImageEmbeddingStage

    for cls in (ImageReaderStage, WebDatasetReaderStage, ImageWriterStage, ImageAestheticFilterStage, ImageNSFWFilterStage,
                ImageEmbeddingStage, ImageDuplicateRemovalStage, ImageDuplicatesRemovalStage,
                ConvertImageBatchToDocumentBatchStage):
        register(cls, modality="image")
    register(WebDatasetShardPartitionStage, modality="image", kind="reader")  # lists shards
    register(ImageSemanticDeduplicationWorkflow, modality="image", kind="deduplicator")
    from curator_image.tasks import ImageBatch

    register(ImageBatch, modality="image", kind="task")  # stored as its image files + JSON


@hookimpl
def curator_migrate_rules() -> MigrationRules:
    from curator_image.migration import MIGRATION_RULES

    return MIGRATION_RULES
