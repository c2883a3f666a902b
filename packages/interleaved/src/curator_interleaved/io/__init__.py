"""Interleaved readers and writers (NeMo Curator's ``stages.interleaved.io``)."""

from __future__ import annotations

from curator_interleaved.io.reader import (
    InterleavedObelicsReader,
    InterleavedParquetReader,
    InterleavedWebdatasetReader,
)
from curator_interleaved.io.writers.obelics import InterleavedObelicsWriterStage
from curator_interleaved.io.writers.tabular import InterleavedParquetWriterStage
from curator_interleaved.io.writers.webdataset import InterleavedWebdatasetWriterStage

__all__ = ["InterleavedLanceReader", "InterleavedObelicsReader", "InterleavedObelicsWriterStage",
           "InterleavedParquetReader",
           "InterleavedParquetWriterStage", "InterleavedWebdatasetReader",
           "InterleavedWebdatasetWriterStage"]


def __getattr__(name: str) -> object:
    if name == "InterleavedLanceReader":  # imports lance only when asked for
        from curator_interleaved.lance.reader import InterleavedLanceReader

        return InterleavedLanceReader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
