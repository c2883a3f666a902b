"""curator-image: image curation stages for Curator.

WebDataset reader and writer, CLIP embeddings, aesthetic and NSFW filters, exact and semantic
deduplication. Heavy libraries (torch, transformers, webdataset, PIL) load only when used.
"""

from __future__ import annotations

from curator_image.dedup.duplicates import DuplicateReport, find_image_duplicates
from curator_image.dedup.removal import ImageDuplicateRemovalStage, ImageDuplicatesRemovalStage
from curator_image.dedup.workflow import ImageDedupResult, ImageSemanticDeduplicationWorkflow
from curator_image.filters.score import (
                                         ImageAestheticFilterStage,
                                         ImageNSFWFilterStage,
                                         ImageScoreFilterStage,
)
from curator_image.io.convert import ConvertImageBatchToDocumentBatchStage
from curator_image.io.reader import (
                                         ImageReaderStage,
                                         WebDatasetReaderStage,
                                         WebDatasetShardPartitionStage,
)
from curator_image.io.writer import ImageWriterStage
from curator_image.models.aesthetic import AestheticScorer, NSFWScorer
from curator_image.models.clip import ClipImageEmbedder
from curator_image.stages.embedding import ImageEmbeddingStage
from curator_image.tasks import ImageBatch, ImageObject

__all__ = [
    "ImageBatch", "ImageObject",
    "ImageReaderStage", "WebDatasetShardPartitionStage", "WebDatasetReaderStage",
    "ImageEmbeddingStage", "ImageScoreFilterStage", "ImageAestheticFilterStage",
    "ImageNSFWFilterStage", "ImageWriterStage",
    "ImageDuplicateRemovalStage", "ImageDuplicatesRemovalStage",
    "ConvertImageBatchToDocumentBatchStage", "ImageSemanticDeduplicationWorkflow", "ImageDedupResult",
    "DuplicateReport", "find_image_duplicates",
    "ClipImageEmbedder", "AestheticScorer", "NSFWScorer",
]
