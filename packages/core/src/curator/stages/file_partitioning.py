"""FilePartitioningStage: lists input files and groups them into partitions (FileGroupTasks).

The source stage of every file reader (text, image, audio, video); modality packages subclass it
to change the file extensions or the task-id format."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from curator.errors import ConfigError
from curator.io import list_files
from curator.stages.base import ProcessingStage
from curator.tasks import EmptyTask, FileGroupTask, stable_id

__all__ = ["FilePartitioningStage"]


@dataclass
class FilePartitioningStage(ProcessingStage[EmptyTask, FileGroupTask]):
    """Expands ``file_paths`` (files, directories, globs, fsspec URLs) and groups the files into
    partitions of ``files_per_partition`` files or about ``blocksize`` bytes (e.g. ``"64MB"``).
    Each partition's ``task_id`` is derived from its file paths, so it is the same on every run.

    Parameters:
        file_paths: a path, glob, directory or list of them.
        files_per_partition: files per partition (default 1 when neither option is given).
        blocksize: target bytes per partition (int or a string like ``"128MB"``).
        file_extensions: keep only these endings when listing directories and globs.
    """

    file_paths: str | list[str] = ""
    path_params: ClassVar[tuple[str, ...]] = ("file_paths",)  # resolved on the driver
    files_per_partition: int | None = None
    blocksize: int | str | None = None
    file_extensions: list[str] | None = None
    name: str = "FilePartitioningStage"
    limit: int | None = None
    dataset_name: str = field(default="")

    def __post_init__(self) -> None:
        if not self.file_paths:
            raise ConfigError(f"{self.name}: file_paths is required (a path, glob or directory)")
        if self.files_per_partition is not None and self.blocksize is not None:
            raise ConfigError(f"{self.name}: give files_per_partition or blocksize, not both")
        if self.files_per_partition is not None and int(self.files_per_partition) < 1:
            raise ConfigError(f"{self.name}: files_per_partition must be >= 1")
        if self.blocksize is not None and _parse_size(self.blocksize) < 1:
            raise ConfigError(f"{self.name}: blocksize must be positive, got {self.blocksize!r}")

    @property
    def is_source(self) -> bool:
        return True

    def outputs(self):
        return ["data"], []

    stream_chunk: ClassVar[int] = 1024
    """Partitions handed on at a time by :meth:`process_stream`."""

    def process(self, task: EmptyTask) -> list[FileGroupTask]:
        return list(self.iter_partitions())

    def process_stream(self, task: EmptyTask) -> Iterator[list[FileGroupTask]]:
        """The partitions in chunks of ``stream_chunk`` as the listing goes."""
        chunk: list[FileGroupTask] = []
        for part in self.iter_partitions():
            chunk.append(part)
            if len(chunk) >= self.stream_chunk:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    def iter_partitions(self) -> Iterator[FileGroupTask]:
        """Yield the partitions one by one as they are formed (sizes come from the batched
        listing of :func:`curator.io.list_files`, not one filesystem call per file)."""
        n = 0
        for group, size in self._group(list_files(self.file_paths, self.file_extensions)):
            for task in self.tasks_for(group, size):
                if self.limit is not None and n >= self.limit:
                    return
                n += 1
                yield task

    def tasks_for(self, group: list[str], size: int) -> Iterator[FileGroupTask]:
        """The partitions of one group of files of ``size`` bytes in all (default: one)."""
        yield FileGroupTask(task_id=self.task_id_for(group),
                            dataset_name=self.dataset_name_for(group), data=group,
                            metadata={"source_files": list(group)})

    def task_id_for(self, group: list[str]) -> str:
        """The deterministic id of a partition (default: a hash of its paths)."""
        return stable_id(*group)

    def dataset_name_for(self, group: list[str]) -> str:
        return self.dataset_name or "dataset"

    def _group(self, files: Iterable[tuple[str, int]]) -> Iterator[tuple[list[str], int]]:
        """Group ``(path, size)`` pairs into partitions, yielding each (with its total size) as
        soon as it is full."""
        per_group = int(self.files_per_partition or 1) if self.blocksize is None else None
        limit = _parse_size(self.blocksize) if self.blocksize is not None else 0
        cur: list[str] = []
        size = 0
        for f, s in files:
            if cur and (len(cur) >= per_group if per_group else size + s > limit):
                yield cur, size
                cur, size = [], 0
            cur.append(f)
            size += s
        if cur:
            yield cur, size


_UNITS = {"": 1, "B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "KIB": 1024,
          "MIB": 1024**2, "GIB": 1024**3, "K": 1000, "M": 1000**2, "G": 1000**3}


def _parse_size(value: int | str) -> int:
    if isinstance(value, int):
        return value
    s = str(value).strip().upper().replace(" ", "")
    num = s.rstrip("KMGIB")
    unit = s[len(num):]
    if unit not in _UNITS:
        raise ValueError(f"blocksize {value!r}: unknown unit (use B, KB, MB, GB)")
    return int(float(num) * _UNITS[unit])
