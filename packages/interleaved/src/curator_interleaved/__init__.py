"""curator-interleaved: interleaved image-text documents for Curator.

One row per segment (:class:`InterleavedBatch`, NeMo Curator's schema): readers for MINT-1T
WebDataset shards, interleaved Parquet, OBELICS-layout Parquet, Lance datasets and PDFs; lazy
image materialisation; aspect-ratio, blur, QR-code, image-to-text and CLIP-score filters;
Parquet and WebDataset writers. Every name is imported on first use
(:func:`curator._lazy.lazy_exports`): heavy libraries load only when used.
"""

from curator._lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(["InterleavedImageDuplicateRemovalStage", "InterleavedImageEmbeddingStage",
                     "find_image_duplicates"], "curator_interleaved.dedup"),
    **dict.fromkeys(["InterleavedBlurFilterStage", "InterleavedCLIPScoreFilterStage",
                     "InterleavedImageToTextRatioFilterStage", "InterleavedQRCodeFilterStage"],
                    "curator_interleaved.filter"),
    **dict.fromkeys(["InterleavedObelicsReader", "InterleavedParquetReader",
                     "InterleavedWebdatasetReader"], "curator_interleaved.io.reader"),
    **dict.fromkeys(["InterleavedObelicsReaderStage", "InterleavedParquetReaderStage",
                     "InterleavedWebdatasetReaderStage"], "curator_interleaved.io.readers"),
    **dict.fromkeys(["InterleavedObelicsWriterStage", "InterleavedParquetWriterStage",
                     "InterleavedWebdatasetWriterStage"], "curator_interleaved.io.writers"),
    **dict.fromkeys(["BaseInterleavedAnnotatorStage", "BaseInterleavedFilterStage",
                     "InterleavedAspectRatioFilterStage"], "curator_interleaved.stages"),
    **dict.fromkeys(["INTERLEAVED_SCHEMA", "RESERVED_COLUMNS", "InterleavedBatch"],
                    "curator_interleaved.tasks"),
    "materialize_task_binary_content": "curator_interleaved.utils.materialization",
    **dict.fromkeys(["InterleavedLanceReader", "InterleavedLanceReaderStage"],
                    "curator_interleaved.lance.reader"),
    **dict.fromkeys(["PDFPartitioningStage", "PDFPreprocessStage", "PDFReader",
                     "PDFReaderStage"], "curator_interleaved.pdf"),
}

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
