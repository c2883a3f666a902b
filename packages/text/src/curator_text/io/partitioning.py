"""File partitioning for text readers. FilePartitioningStage lives in core (shared by every
modality) and is re-exported here; ByteRangePartitioningStage adds byte-range blocks of big
uncompressed line-delimited files, so a reader's memory does not depend on file size."""

from __future__ import annotations

from dataclasses import dataclass

from curator import FileGroupTask
from curator.io import get_fs
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

    def process(self, task) -> list[FileGroupTask]:
        tasks = super().process(task)
        if self.blocksize is None:
            return tasks
        limit = _parse_size(self.blocksize)
        out: list[FileGroupTask] = []
        for t in tasks:
            size = _size(t.data[0]) if len(t.data) == 1 else 0
            path = t.data[0]
            if size <= limit or path.lower().endswith(_COMPRESSED):
                out.append(t)
                continue
            for start in range(0, size, limit):
                end = min(start + limit, size)
                out.append(FileGroupTask(
                    task_id=stable_id(path, f"{start}-{end}"), dataset_name=t.dataset_name,
                    data=[path], metadata={"source_files": [path], BYTE_RANGE_KEY: [start, end]}))
        if self.limit is not None:
            out = out[: self.limit]
        return out


def _size(path: str) -> int:
    try:
        fs, p = get_fs(path)
        return int(fs.size(p) or 0)
    except Exception:  # noqa: BLE001 - an unreadable file is reported by the reader
        return 0
