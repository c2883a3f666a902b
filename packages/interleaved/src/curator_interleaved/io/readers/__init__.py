"""The interleaved reader stages (each reads one partition of files)."""

from __future__ import annotations

from curator_interleaved.io.readers.obelics import InterleavedObelicsReaderStage
from curator_interleaved.io.readers.parquet import InterleavedParquetReaderStage
from curator_interleaved.io.readers.webdataset import InterleavedWebdatasetReaderStage

__all__ = ["InterleavedObelicsReaderStage", "InterleavedParquetReaderStage",
           "InterleavedWebdatasetReaderStage"]
