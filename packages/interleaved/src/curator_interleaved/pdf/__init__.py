"""PDFs: NeMo Curator's ``PDFPartitioningStage`` and ``PDFPreprocessStage`` (pages rendered
with pypdfium2), and a CPU reader of ordered text blocks and embedded images (``PDFReader``).
Nemotron-Parse inference is not offered (its model code is published only on a model hub)."""

from __future__ import annotations

from curator_interleaved.pdf.partitioning import PDFPartitioningStage
from curator_interleaved.pdf.preprocess import PDFPreprocessStage
from curator_interleaved.pdf.reader import PDFReader, PDFReaderStage

__all__ = ["PDFPartitioningStage", "PDFPreprocessStage", "PDFReader", "PDFReaderStage"]
