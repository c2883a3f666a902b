"""BaseInterleavedReader: what every interleaved reader shares (schema alignment, splitting a
partition's rows into batches by document, the output tasks' ids and metadata)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator import FileGroupTask, ProcessingStage

from curator_interleaved.tasks import InterleavedBatch
from curator_interleaved.utils.schema import align_interleaved_table, resolve_schema

__all__ = ["BaseInterleavedReader", "split_table_by_group"]


def split_table_by_group(table: pa.Table, column: str, max_batch_bytes: int | None = None,
                         max_batch_rows: int | None = None) -> list[pa.Table]:
    """``table`` cut into consecutive slices of at most ``max_batch_bytes`` / ``max_batch_rows``
    (when given) that never split a run of equal ``column`` values (one document stays in one
    batch; a single document bigger than the limit is a batch of its own). Always at least one
    slice."""
    n = table.num_rows
    if n == 0 or (max_batch_bytes is None and max_batch_rows is None):
        return [table]
    values = table[column].combine_chunks()
    if n > 1:
        change = pc.not_equal(values.slice(1), values.slice(0, n - 1))
        starts = np.concatenate([[0], np.flatnonzero(change.fill_null(True).to_numpy(
            zero_copy_only=False)) + 1])
    else:
        starts = np.array([0])
    bounds = [*starts.tolist(), n]
    per_row = table.nbytes / n if max_batch_bytes else 0.0

    def too_big(rows: int) -> bool:
        return (max_batch_rows is not None and rows > max_batch_rows) or (
            max_batch_bytes is not None and rows * per_row > max_batch_bytes)

    out: list[pa.Table] = []
    begin = 0
    for k in range(len(bounds) - 1):
        g_start, g_end = bounds[k], bounds[k + 1]
        if g_start > begin and too_big(g_end - begin):
            out.append(table.slice(begin, g_start - begin))
            begin = g_start
    out.append(table.slice(begin, n - begin))
    return out


@dataclass
class BaseInterleavedReader(ProcessingStage[FileGroupTask, InterleavedBatch]):
    """Base of the interleaved reader stages.

    Parameters:
        read_kwargs: ``storage_options`` (fsspec) for the input files.
        schema: align every output table exactly to this schema (missing columns null, extra
            dropped). Default: keep user columns, reserved ones at their canonical types.
        schema_overrides: add or change field types relative to ``INTERLEAVED_SCHEMA`` (strict
            alignment, as ``schema``).
    """

    read_kwargs: dict[str, Any] = field(default_factory=dict)
    schema: pa.Schema | None = None
    schema_overrides: dict[str, pa.DataType] | None = None
    name: str = "base_interleaved_reader"
    modality: ClassVar[str] = "interleaved"
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        if self.schema is not None or self.schema_overrides is not None:
            self.schema = resolve_schema(self.schema, self.schema_overrides)
        self.read_kwargs = dict(self.read_kwargs or {})

    @property
    def _storage_options(self) -> dict[str, Any]:
        opts = (self.read_kwargs or {}).get("storage_options")
        return opts if isinstance(opts, dict) else {}

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], ["sample_id", "position", "modality"]

    def _align_output(self, table: pa.Table) -> pa.Table:
        return align_interleaved_table(table, self.schema)

    def _batches(self, task: FileGroupTask, table: pa.Table, max_batch_bytes: int | None,
                 max_batch_rows: int | None = None) -> InterleavedBatch | list[InterleavedBatch]:
        """The output tasks of one partition: one batch, or several named
        ``{task_id}_{k:05d}`` when the limits split it (never inside a document)."""
        splits = split_table_by_group(table, "sample_id", max_batch_bytes, max_batch_rows)
        meta = dict(task.metadata)
        meta.setdefault("source_files", list(task.data))
        if self._storage_options:
            meta["source_storage_options"] = self._storage_options
        if len(splits) == 1:
            return InterleavedBatch(task_id=task.task_id, dataset_name=task.dataset_name,
                                    data=splits[0], metadata=meta,
                                    stage_perf=list(task.stage_perf))
        return [InterleavedBatch(task_id=f"{task.task_id}_{k:05d}",
                                 dataset_name=task.dataset_name, data=split,
                                 metadata=dict(meta), stage_perf=list(task.stage_perf))
                for k, split in enumerate(splits)]
