"""The curator-interleaved plugin: registers its stages through Curator's ``curator_register``
hook and its NeMo Curator mappings through ``curator_migrate_rules``.

Importing this module is cheap: stage modules are imported inside the hooks, and those import
lance, pypdfium2, OpenCV, torch and transformers only when a stage runs.
"""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl

__all__ = ["curator_migrate_rules", "curator_register"]


@hookimpl
def curator_register(register: Register) -> None:
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
    from curator_interleaved.io.writers import (
        InterleavedObelicsWriterStage,
        InterleavedParquetWriterStage,
        InterleavedWebdatasetWriterStage,
    )
    from curator_interleaved.lance.reader import InterleavedLanceReader
    from curator_interleaved.pdf import PDFPartitioningStage, PDFPreprocessStage, PDFReader
    from curator_interleaved.stages import InterleavedAspectRatioFilterStage
    from curator_interleaved.tasks import InterleavedBatch

    for cls in (InterleavedWebdatasetReader, InterleavedParquetReader, InterleavedObelicsReader,
                InterleavedLanceReader, PDFReader):
        register(cls, modality="interleaved", kind="reader")
    for cls in (InterleavedParquetWriterStage, InterleavedWebdatasetWriterStage,
                InterleavedObelicsWriterStage):
        register(cls, modality="interleaved", kind="writer")
    for cls in (InterleavedAspectRatioFilterStage, InterleavedBlurFilterStage,
                InterleavedQRCodeFilterStage, InterleavedImageToTextRatioFilterStage,
                InterleavedCLIPScoreFilterStage):
        register(cls, modality="interleaved", kind="filter")
    from curator_interleaved.dedup import (
        InterleavedImageDuplicateRemovalStage,
        InterleavedImageEmbeddingStage,
    )

    register(InterleavedImageDuplicateRemovalStage, modality="interleaved", kind="filter")
    register(InterleavedImageEmbeddingStage, modality="interleaved", kind="embedder")
    register(PDFPartitioningStage, modality="interleaved", kind="reader")
    register(PDFPreprocessStage, modality="interleaved")
    register(InterleavedBatch, modality="interleaved", kind="task")


@hookimpl
def curator_migrate_rules():
    from curator_interleaved.migration import MIGRATION_RULES

    return MIGRATION_RULES
