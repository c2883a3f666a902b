"""File partitioning for text readers. FilePartitioningStage lives in core (shared by every
modality) and is re-exported here; ByteRangePartitioningStage adds byte-range blocks of big
uncompressed line-delimited files, so a reader's memory does not depend on file size."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from curator import FileGroupTask
from curator.stages.file_partitioning import FilePartitioningStage, _parse_size
from curator.tasks import stable_id

__all__ = ["BYTE_RANGE_KEY", "ByteRangePartitioningStage", "FilePartitioningStage"]

#: metadata key of a block partition: ``[start, end)`` byte offsets in its single file
BYTE_RANGE_KEY = "byte_range"
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zstd", ".lz4", ".snappy", ".zip")


@dataclass
class ByteRangePartitioningStage(FilePartitioningStage):
    """Like FilePartitioningStage, but with ``blocksize`` an uncompressed file bigger than
    ``blocksize`` becomes several partitions, one per byte range ``[start, end)`` (metadata
    ``byte_range``; task id = hash of path and range, stable across runs). A reader of a range
    reads the lines that *start* inside it, so a line crossing a boundary is read once. Smaller
    files are grouped as before (same task ids)."""

    name: str = "ByteRangePartitioningStage"

    def tasks_for(self, group: list[str], size: int) -> Iterator[FileGroupTask]:
        path = group[0]
        limit = _parse_size(self.blocksize) if self.blocksize is not None else 0
        if not limit or len(group) > 1 or size <= limit or path.lower().endswith(_COMPRESSED):
            yield from super().tasks_for(group, size)
            return
        for start in range(0, size, limit):  # sizes come from the source listing
            end = min(start + limit, size)
            yield FileGroupTask(
                task_id=stable_id(path, f"{start}-{end}"), dataset_name=self.dataset_name_for(group),
                data=[path], metadata={"source_files": [path], BYTE_RANGE_KEY: [start, end]})
