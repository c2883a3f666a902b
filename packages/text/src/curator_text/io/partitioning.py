"""File partitioning for text readers. FilePartitioningStage lives in core (shared by every
modality) and is re-exported here; the subclasses here split a big file into blocks so a reader's
memory does not depend on file size: uncompressed JSONL into line-aligned byte ranges, Parquet
into runs of row groups. Both split by default (``DEFAULT_BLOCK_SIZE``, or ``blocksize``), also
when ``files_per_partition`` is given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from curator.stages.file_partitioning import DEFAULT_BLOCK_SIZE, FilePartitioningStage

from curator_text.io.compressed import iter_blocks, stream_codec

__all__ = ["BYTE_RANGE_KEY", "ROW_GROUPS_KEY", "ByteRangePartitioningStage",
           "FilePartitioningStage", "RowGroupPartitioningStage"]

#: metadata key of a JSONL block: ``[start, end)`` byte offsets in its single file
BYTE_RANGE_KEY = "byte_range"
#: metadata key of a Parquet block: ``[first, last)`` row-group indices in its single file
ROW_GROUPS_KEY = "row_groups"
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zstd", ".lz4", ".snappy", ".zip")


@dataclass
class ByteRangePartitioningStage(FilePartitioningStage):
    """An uncompressed file bigger than the block size becomes one partition per byte range
    ``[start, end)`` (metadata ``byte_range``). The ranges come from the file size alone, so they
    are the same on every machine. A reader of a range reads the lines that *start* inside it,
    so a line crossing a boundary is read once. A compressed file (.gz, .bz2, .zst, .lz4, .xz)
    bigger than the block size is split the same way in its *decompressed* bytes (their size is
    measured by decompressing it once here; see :mod:`curator_text.io.compressed`); .zip and
    .snappy files are read whole."""

    name: str = "ByteRangePartitioningStage"
    default_block_size: ClassVar[int | None] = DEFAULT_BLOCK_SIZE

    def splittable(self, path: str) -> bool:
        return not path.lower().endswith(_COMPRESSED) or stream_codec(path) is not None

    def blocks(self, path: str, size: int, block_size: int) -> list[dict]:
        if stream_codec(path) is not None:  # ranges of the decompressed bytes: measured once
            return [{BYTE_RANGE_KEY: [start, end]} for start, end in iter_blocks(path, block_size)]
        return [{BYTE_RANGE_KEY: [start, min(start + block_size, size)]}
                for start in range(0, size, block_size)]  # sizes come from the source listing


@dataclass
class RowGroupPartitioningStage(FilePartitioningStage):
    """A Parquet file bigger than the block size becomes one partition per run of consecutive
    row groups of about the block size (compressed bytes, from the file's footer; metadata
    ``row_groups``). A file of one row group is read whole."""

    name: str = "RowGroupPartitioningStage"
    default_block_size: ClassVar[int | None] = DEFAULT_BLOCK_SIZE

    def blocks(self, path: str, size: int, block_size: int) -> list[dict]:
        import pyarrow.parquet as pq
        from curator.io import get_fs

        fs, p = get_fs(path)
        with fs.open(p, "rb") as fh:
            meta = pq.ParquetFile(fh).metadata
        out: list[dict] = []
        first, acc = 0, 0
        for i in range(meta.num_row_groups):
            rg = meta.row_group(i)
            acc += sum(rg.column(c).total_compressed_size for c in range(rg.num_columns))
            if acc >= block_size or i == meta.num_row_groups - 1:
                out.append({ROW_GROUPS_KEY: [first, i + 1]})
                first, acc = i + 1, 0
        return out
