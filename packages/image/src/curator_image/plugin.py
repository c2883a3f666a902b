"""The curator-image plugin: registers its stages through Curator's hooks.

Importing this module is cheap: the stage modules import torch, transformers, webdataset and
PIL only inside ``setup()`` and functions.
"""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl

__all__ = ["curator_register_readers", "curator_register_writers", "curator_register_filters",
           "curator_register_embedders", "curator_register_deduplicators"]


@hookimpl
def curator_register_readers(register: Register) -> None:
    from curator_image.io.reader import (
        ImageReaderStage,
        WebDatasetReaderStage,
        WebDatasetShardPartitionStage,
    )

    register(ImageReaderStage, modality="image")
    register(WebDatasetShardPartitionStage, modality="image")
    register(WebDatasetReaderStage, modality="image")


@hookimpl
def curator_register_writers(register: Register) -> None:
    from curator_image.io.writer import ImageWriterStage

    register(ImageWriterStage, modality="image")


@hookimpl
def curator_register_filters(register: Register) -> None:
    from curator_image.filters.score import ImageAestheticFilterStage, ImageNSFWFilterStage

    register(ImageAestheticFilterStage, modality="image")
    register(ImageNSFWFilterStage, modality="image")


@hookimpl
def curator_register_embedders(register: Register) -> None:
    from curator_image.stages.embedding import ImageEmbeddingStage

    register(ImageEmbeddingStage, modality="image")


@hookimpl
def curator_register_deduplicators(register: Register) -> None:
    from curator_image.dedup.removal import ImageDuplicateRemovalStage
    from curator_image.dedup.workflow import ImageSemanticDeduplicationWorkflow

    register(ImageDuplicateRemovalStage, modality="image")
    register(ImageSemanticDeduplicationWorkflow, modality="image")
