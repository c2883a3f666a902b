"""Readers, writers and file partitioning for text."""

from curator_text.io.lance import LanceReader, LanceWriter, commit_lance_checkpoint
from curator_text.io.partitioning import FilePartitioningStage
from curator_text.io.readers import JsonlReader, JsonlReaderStage, ParquetReader, ParquetReaderStage
from curator_text.io.writers import JsonlWriter, ParquetWriter

__all__ = ["FilePartitioningStage", "JsonlReader", "JsonlReaderStage", "ParquetReader",
           "ParquetReaderStage", "JsonlWriter", "ParquetWriter", "LanceReader", "LanceWriter",
           "commit_lance_checkpoint"]
