"""The interleaved writers."""

from __future__ import annotations

from curator_interleaved.io.writers.obelics import InterleavedObelicsWriterStage
from curator_interleaved.io.writers.tabular import InterleavedParquetWriterStage
from curator_interleaved.io.writers.webdataset import InterleavedWebdatasetWriterStage

__all__ = ["InterleavedObelicsWriterStage", "InterleavedParquetWriterStage",
           "InterleavedWebdatasetWriterStage"]
