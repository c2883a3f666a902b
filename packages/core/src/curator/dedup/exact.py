"""Exact deduplication: records whose content column is byte-for-byte identical.

Map: each input file's content is hashed (MD5) and the hashes are shuffled into
``num_partitions`` hash partitions (one segmented file per input file, a segment per partition:
:mod:`curator.dedup.segments`). Reduce: each
partition groups equal hashes and keeps the first record in input order (lowest file, then row),
reporting the others by their id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from curator.dedup.hashing import hash_column
from curator.dedup.io import read_table, write_parquet
from curator.dedup.memory import releases_memory
from curator.dedup.segments import SEGMENTS_EXT, read_segment, segment_files, write_segments
from curator.dedup.workflow import (
    DeduplicationWorkflow,
    done,
    group_size_counts,
    id_columns,
    task_ids,
    write_by_file,
)
from curator.io import join_path
from curator.run.stats import DEDUP_GROUP_SIZES
from curator.stages.base import ProcessingStage
from curator.tasks import FileGroupTask, Task

__all__ = ["ExactDeduplicationWorkflow", "ExactHashStage", "ExactDuplicatesStage",
           "group_first"]


def group_first(keys: np.ndarray, order_cols: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows that repeat an earlier key: ``(duplicate_rows, kept_row_of_each)``.

    ``keys`` is ``(N, K)``; within a group the row first by ``order_cols`` is kept.
    """
    if len(keys) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    order = np.lexsort(tuple(reversed(order_cols)) + tuple(keys[:, k] for k in
                                                            reversed(range(keys.shape[1]))))
    sk = keys[order]
    same = np.concatenate(([False], (sk[1:] == sk[:-1]).all(axis=1)))
    group_start = np.maximum.accumulate(np.where(~same, np.arange(len(sk)), 0))
    return order[same], order[group_start[same]]


class ExactHashStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """Hash one input file's content column and write the hashes into hash partitions.

    Parameters: text_field (the content column), id_field, cache_dir, num_partitions.
    """

    name = "ExactHash"

    def __init__(self, text_field: str, id_field: str, cache_dir: str, num_partitions: int) -> None:
        self.text_field, self.id_field = text_field, id_field
        self.cache_dir, self.num_partitions = cache_dir, num_partitions

    @releases_memory
    def process(self, task: FileGroupTask) -> FileGroupTask:
        i = int(task.metadata["file_index"])
        out = join_path(self.cache_dir, f"f{i:05d}{SEGMENTS_EXT}")
        if done(out):
            return task
        table = read_table(task.data[0], [*id_columns(task, self.id_field), self.text_field],
                           on_bad=lambda line, n, err: self.reject(
                               task, "malformed JSON line", record={"line": line,
                                                                    "line_number": n}, error=err))
        hashes, valid = hash_column(table.column(self.text_field))
        rows = np.flatnonzero(valid)
        part = (hashes[rows, 1] % np.uint64(self.num_partitions)).astype(np.int64)
        ids = task_ids(task, table, self.id_field)
        write_segments(pa.table({"h1": hashes[rows, 0], "h2": hashes[rows, 1],
                                 "file": np.full(len(rows), i, np.int32), "row": rows,
                                 "id": ids.take(pa.array(rows))}), part, out)
        return task


class ExactDuplicatesStage(ProcessingStage[Task, Task]):
    """Group one hash partition by hash; write the ids of all but the first of each group."""

    name = "ExactDuplicates"

    def __init__(self, cache_dir: str, duplicates_dir: str, by_file_dir: str | None = None) -> None:
        self.cache_dir, self.duplicates_dir, self.by_file_dir = cache_dir, duplicates_dir, by_file_dir

    @releases_memory
    def process(self, task: Task) -> Task:
        p = int(task.metadata["partition_index"])
        out = join_path(self.duplicates_dir, f"exact_p{p:05d}.parquet")
        if done(out):
            kept = read_table(out, ["duplicate_of"]).column("duplicate_of")
            task.metadata["duplicates"] = len(kept)
            self.publish_counts(DEDUP_GROUP_SIZES, group_size_counts(kept.to_numpy()))
            return task
        t = read_segment(segment_files(self.cache_dir), p)
        if t is None:
            task.metadata["duplicates"] = 0
            return task
        keys = np.stack([t.column("h1").to_numpy(), t.column("h2").to_numpy()], axis=1)
        dup, kept = group_first(keys, [t.column("file").to_numpy(), t.column("row").to_numpy()])
        ids = t.column("id")
        if self.by_file_dir:
            write_by_file(self.by_file_dir, ids.take(dup), t.column("file").to_numpy()[dup],
                          f"p{p:05d}")
        write_parquet(pa.table({"id": ids.take(dup), "duplicate_of": ids.take(kept)}), out)
        task.metadata["duplicates"] = len(dup)
        self.publish_counts(DEDUP_GROUP_SIZES, group_size_counts(kept))
        return task


class ExactDeduplicationWorkflow(DeduplicationWorkflow):
    """Find (and optionally remove) records whose ``text_field`` is identical.

    One record of each group is kept: the first in input order (sorted file names, then row).
    Duplicate ids are written to ``output_path/duplicates/*.parquet`` (columns ``id`` and
    ``duplicate_of``), with the values of the user's ``id_field``.

    Parameters (besides those of :class:`DeduplicationWorkflow`):
        text_field: the column compared (any type; strings and binaries are hashed as bytes).
        num_partitions: hash partitions of the shuffle (default: one per input file, at most
            twice the cores and 64, or one per 256 MiB of input when that is more).
    """

    name = "exact_dedup"
    id_generator_prefix = "exact"
    cache_subdir = "exact"
    writes_by_file = True
    duplicates_glob = "exact_p*.parquet"

    def __init__(self, input_path: str | Sequence[str], output_path: str, *,
                 text_field: str = "text", num_partitions: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(input_path, output_path, **kwargs)
        if num_partitions is not None and int(num_partitions) < 1:
            raise ValueError(f"ExactDeduplicationWorkflow: num_partitions must be >= 1, got "
                             f"{num_partitions!r}")
        self.text_field = text_field
        self.num_partitions = num_partitions

    def identify(self, files: list[str]) -> int:
        parts = self.shuffle_partitions(files)
        cache = join_path(self.cache_path, "exact", f"hashes_{parts}")
        self.run_stage(ExactHashStage(self.text_field, self.id_field, cache, parts),
                       self.file_tasks(files))
        out = self.run_stage(ExactDuplicatesStage(cache, self.duplicates_path, self.by_file_dir),
                             self.partition_tasks(parts))
        return sum(int(t.metadata.get("duplicates", 0)) for t in out)
