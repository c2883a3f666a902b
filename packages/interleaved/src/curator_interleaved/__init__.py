"""curator-interleaved: interleaved image-text documents for Curator.

One row per segment (:class:`InterleavedBatch`, NeMo Curator's schema): readers for MINT-1T
WebDataset shards, interleaved Parquet, OBELICS-layout Parquet, Lance datasets and PDFs; lazy
image materialisation; aspect-ratio, blur, QR-code, image-to-text and CLIP-score filters;
Parquet and WebDataset writers. Heavy libraries load only when used.
"""

from __future__ import annotations

from curator_interleaved.dedup import (
    InterleavedImageDuplicateRemovalStage,
    InterleavedImageEmbeddingStage,
    find_image_duplicates,
)
from curator_interleaved.filter import (
    InterleavedBlurFilterStage,
    InterleavedCLIPScoreFilterStage,
    InterleavedImageToTextRatioFilterStage,
    InterleavedQRCodeFilterStage,
)
from curator_interleaved.io.reader import (
    InterleavedObelicsReader,
    InterleavedParquetReader,
    InterleavedWebdatasetReader,
)
from curator_interleaved.io.readers import (
    InterleavedObelicsReaderStage,
    InterleavedParquetReaderStage,
    InterleavedWebdatasetReaderStage,
)
from curator_interleaved.io.writers import (
    InterleavedObelicsWriterStage,
    InterleavedParquetWriterStage,
    InterleavedWebdatasetWriterStage,
)
from curator_interleaved.stages import (
    BaseInterleavedAnnotatorStage,
    BaseInterleavedFilterStage,
    InterleavedAspectRatioFilterStage,
)
from curator_interleaved.tasks import INTERLEAVED_SCHEMA, RESERVED_COLUMNS, InterleavedBatch
from curator_interleaved.utils.materialization import materialize_task_binary_content

__all__ = [
    "INTERLEAVED_SCHEMA", "RESERVED_COLUMNS", "InterleavedBatch",
    "BaseInterleavedAnnotatorStage", "BaseInterleavedFilterStage",
    "InterleavedAspectRatioFilterStage", "InterleavedBlurFilterStage",
    "InterleavedQRCodeFilterStage", "InterleavedImageToTextRatioFilterStage",
    "InterleavedCLIPScoreFilterStage",
    "InterleavedWebdatasetReader", "InterleavedParquetReader", "InterleavedObelicsReader",
    "InterleavedWebdatasetReaderStage", "InterleavedParquetReaderStage",
    "InterleavedObelicsReaderStage", "InterleavedLanceReader", "InterleavedLanceReaderStage",
    "InterleavedParquetWriterStage", "InterleavedWebdatasetWriterStage",
    "InterleavedObelicsWriterStage", "PDFPartitioningStage", "PDFPreprocessStage", "PDFReader", "PDFReaderStage",
    "materialize_task_binary_content", "InterleavedImageDuplicateRemovalStage",
    "InterleavedImageEmbeddingStage", "find_image_duplicates",
]

_LAZY = {"InterleavedLanceReader": "curator_interleaved.lance.reader",
         "InterleavedLanceReaderStage": "curator_interleaved.lance.reader",
         "PDFPartitioningStage": "curator_interleaved.pdf",
         "PDFPreprocessStage": "curator_interleaved.pdf",
         "PDFReader": "curator_interleaved.pdf",
         "PDFReaderStage": "curator_interleaved.pdf"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
