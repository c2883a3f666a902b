"""FilePartitioningStage: lists input files and groups them into partitions (FileGroupTasks).

The source stage of every file reader (text, image, audio, video); modality packages subclass it
to change the file extensions or the task-id format, and readers that can read part of a file
(JSONL byte ranges, Parquet row groups, …) subclass it to split big files into blocks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from curator.errors import ConfigError
from curator.io import file_stem, list_files, register_storage_options
from curator.run.stats import INPUT_BYTES_COUNTER, SOURCE_BYTES_KEY
from curator.stages.base import ProcessingStage
from curator.tasks import EmptyTask, FileGroupTask, stable_id

__all__ = ["BLOCK_INDEX_KEY", "BLOCK_SIZE_KEY", "DEFAULT_BLOCK_SIZE", "FilePartitioningStage",
           "INPUT_BYTES_COUNTER", "SOURCE_BYTES_KEY", "block_task_id"]

#: Bytes per block of a big file when the user gives no ``blocksize``. Fixed, not sized from the
#: machine: block boundaries, and so partition ids, output names, resume and append, depend on
#: the file alone. 4 MiB: the CPU per document of the text pipeline is the same at 4, 8 and 16 MiB
#: while its peak memory grows with the block (363, 399, 487 MB with two workers).
DEFAULT_BLOCK_SIZE = 4 * 2**20
#: metadata of a block partition: its index in the file (absent on whole-file partitions)
BLOCK_INDEX_KEY = "block_index"
#: metadata of every partition of a splitting partitioner: the block size in effect (recorded
#: in the checkpoint, see :meth:`curator.run.tracker.CheckpointStore.check_block_size`)
BLOCK_SIZE_KEY = "block_size"


def block_task_id(path: str, index: int) -> str:
    """The id (and output file stem) of block ``index`` of ``path``: the file's stem, a short hash
    of its full path (two inputs with one name never share an output), the block index."""
    return f"{file_stem(path)}-{stable_id(path, length=8)}-{index:05d}"


@dataclass
class FilePartitioningStage(ProcessingStage[EmptyTask, FileGroupTask]):
    """Expands ``file_paths`` (files, directories, globs, fsspec URLs) and groups the files into
    partitions of ``files_per_partition`` files or about ``blocksize`` bytes (e.g. ``"64MB"``).
    Each partition's ``task_id`` is derived from its file paths, so it is the same on every run.

    A subclass whose reader can read part of a file sets ``default_block_size`` and implements
    :meth:`blocks`: a file bigger than the block size (``blocksize`` when given, else
    ``default_block_size``) then becomes several partitions, one per block (task id
    :func:`block_task_id`), whatever ``files_per_partition`` says; smaller files are grouped as
    usual and keep their ids.

    Parameters:
        file_paths: a path, glob, directory or list of them.
        files_per_partition: files per partition (default 1 when neither option is given).
        blocksize: target bytes per partition (int or a string like ``"128MB"``).
        file_extensions: keep only these endings when listing directories and globs.
        storage_options: fsspec options for ``file_paths`` (credentials, endpoint; NeMo
            Curator's parameter), used for every read of these files.
    """

    file_paths: str | list[str] = ""
    path_params: ClassVar[tuple[str, ...]] = ("file_paths",)  # resolved on the driver
    files_per_partition: int | None = None
    blocksize: int | str | None = None
    file_extensions: list[str] | None = None
    name: str = "FilePartitioningStage"
    limit: int | None = None
    dataset_name: str = field(default="")
    storage_options: dict[str, Any] | None = None

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

    default_block_size: ClassVar[int | None] = None
    """Bytes per block of a big file without ``blocksize``; ``None``: files are never split."""

    stream_chunk: ClassVar[int] = 1024
    """Partitions handed on at a time by :meth:`process_stream`."""

    def process(self, task: EmptyTask) -> list[FileGroupTask]:
        parts = list(self.iter_partitions())
        self._publish_listed(parts, done=True)
        return parts

    def _publish_listed(self, parts: list[FileGroupTask], done: bool) -> None:
        self.publish_counts(INPUT_BYTES_COUNTER, {
            "listed": sum(p.metadata.get(SOURCE_BYTES_KEY, 0) for p in parts),
            "listing_done": int(done)})

    def process_stream(self, task: EmptyTask) -> Iterator[list[FileGroupTask]]:
        """The partitions in chunks of ``stream_chunk`` as the listing goes (one chunk held back,
        so the last one can say the listing is complete)."""
        held: list[FileGroupTask] | None = None
        chunk: list[FileGroupTask] = []
        for part in self.iter_partitions():
            chunk.append(part)
            if len(chunk) >= self.stream_chunk:
                if held is not None:
                    self._publish_listed(held, done=False)
                    yield held
                held, chunk = chunk, []
        if held is not None:
            self._publish_listed(held, done=not chunk)
            yield held
        if chunk or held is None:  # an empty listing still says it is complete
            self._publish_listed(chunk, done=True)
            if chunk:
                yield chunk

    def iter_partitions(self) -> Iterator[FileGroupTask]:
        """Yield the partitions one by one as they are formed (sizes come from the batched
        listing of :func:`curator.io.list_files`, not one filesystem call per file)."""
        n = 0
        register_storage_options(self.file_paths, self.storage_options)
        for group, size in self._group(list_files(self.file_paths, self.file_extensions)):
            for task in self.tasks_for(group, size):
                if self.limit is not None and n >= self.limit:
                    return
                n += 1
                yield task

    def block_size(self) -> int | None:
        """Bytes per block of a big file (``None``: this partitioner does not split files)."""
        if self.default_block_size is None:
            return None
        return _parse_size(self.blocksize) if self.blocksize is not None else self.default_block_size

    def splittable(self, path: str) -> bool:
        """Whether ``path`` can be read in blocks (e.g. not a compressed stream)."""
        return True

    def blocks(self, path: str, size: int, block_size: int) -> list[dict]:
        """The metadata that tells the reader which part of ``path`` each block is (what it
        needs besides the path), in file order; one entry or none: the file is read whole."""
        return []

    def _splits(self, path: str, size: int) -> bool:
        limit = self.block_size()
        return bool(limit) and size > limit and self.splittable(path)

    def tasks_for(self, group: list[str], size: int) -> Iterator[FileGroupTask]:
        """The partitions of one group of files of ``size`` bytes in all: one, or one per block
        of a file bigger than the block size."""
        limit = self.block_size()
        extra = {BLOCK_SIZE_KEY: limit} if limit else {}
        if len(group) == 1 and self._splits(group[0], size):
            path = group[0]
            specs = self.blocks(path, size, limit or 0)
            if len(specs) > 1:
                for index, spec in enumerate(specs):
                    share = size // len(specs) + (index < size % len(specs))
                    yield FileGroupTask(
                        task_id=block_task_id(path, index), dataset_name=self.dataset_name_for(group),
                        data=[path], metadata={"source_files": [path], BLOCK_INDEX_KEY: index,
                                               SOURCE_BYTES_KEY: share, **extra, **spec})
                return
        yield FileGroupTask(task_id=self.task_id_for(group),
                            dataset_name=self.dataset_name_for(group), data=group,
                            metadata={"source_files": list(group), SOURCE_BYTES_KEY: size,
                                      **extra})

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
            if self._splits(f, s):  # a big file is its own partition(s), never grouped
                if cur:
                    yield cur, size
                    cur, size = [], 0
                yield [f], s
                continue
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
