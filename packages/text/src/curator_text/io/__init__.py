"""Readers, writers and file partitioning for text (imported on first use: a JSONL pipeline
does not load Lance)."""

from curator._lazy import lazy_exports

_EXPORTS = {
    "FilePartitioningStage": "curator_text.io.partitioning",
    **dict.fromkeys(["LanceReader", "LanceWriter", "commit_lance_checkpoint"],
                    "curator_text.io.lance"),
    **dict.fromkeys(["JsonlReader", "JsonlReaderStage", "ParquetReader", "ParquetReaderStage"],
                    "curator_text.io.readers"),
    **dict.fromkeys(["JsonlWriter", "ParquetWriter"], "curator_text.io.writers"),
}

__all__ = ["FilePartitioningStage", "JsonlReader", "JsonlReaderStage", "ParquetReader",
           "ParquetReaderStage", "JsonlWriter", "ParquetWriter", "LanceReader", "LanceWriter",
           "commit_lance_checkpoint"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
