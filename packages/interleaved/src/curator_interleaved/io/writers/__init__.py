"""The interleaved writers."""

from __future__ import annotations

from curator_interleaved.io.writers.tabular import InterleavedParquetWriterStage
from curator_interleaved.io.writers.webdataset import InterleavedWebdatasetWriterStage

__all__ = ["InterleavedParquetWriterStage", "InterleavedWebdatasetWriterStage"]
