"""InterleavedLanceReader: a Lance dataset in the interleaved row layout -> InterleavedBatch.

Partitioning and scanning are curator-text's Lance stages (``curator_text.io.lance``); this
reader aligns each scan to the interleaved schema, rejects documents whose reading order is
unknown (as the Parquet reader does) and splits a partition into batches by document.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from curator import CompositeStage, EmptyTask, ProcessingStage
from curator.errors import ConfigError
from curator_text.io.lance import LancePartitioningStage, LanceReaderStage, LanceReadTask

from curator_interleaved.io.readers.base import split_table_by_group
from curator_interleaved.io.readers.parquet import reject_unordered_samples
from curator_interleaved.tasks import InterleavedBatch
from curator_interleaved.utils.schema import align_interleaved_table

__all__ = ["InterleavedLanceReader", "InterleavedLanceReaderStage"]


def _positive(name: str, value: int | None) -> None:
    if value is not None and value <= 0:
        raise ConfigError(f"{name} must be > 0, got {value}")


@dataclass
class InterleavedLanceReaderStage(LanceReaderStage):
    """Reads the fragments of a ``LanceReadTask`` into :class:`InterleavedBatch` es.

    Parameters:
        fields: columns to read; must include the required ``sample_id``, ``position``,
            ``modality``.
        max_batch_bytes, max_batch_rows: split a partition into batches (never inside a
            document).
        read_kwargs, include_lance_metadata: as ``curator_text.io.lance.LanceReaderStage``.
    """

    max_batch_bytes: int | None = None
    max_batch_rows: int | None = None
    name: str = "interleaved_lance_reader"
    modality: ClassVar[str] = "interleaved"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.fields is not None:
            missing = sorted(InterleavedBatch.REQUIRED_COLUMNS - set(self.fields))
            if missing:
                raise ValueError(f"Interleaved Lance fields omit required columns: {missing}")
        _positive("max_batch_bytes", self.max_batch_bytes)
        _positive("max_batch_rows", self.max_batch_rows)

    def process(self, task: LanceReadTask) -> InterleavedBatch | list[InterleavedBatch]:
        started = time.perf_counter()
        table, meta = self.read_table(task, self.fields)
        table = reject_unordered_samples(self, task, table, source=task.path)  # type: ignore[arg-type]
        table = align_interleaved_table(table)
        splits = split_table_by_group(table, "sample_id", self.max_batch_bytes,
                                      self.max_batch_rows)
        if len(splits) == 1:
            out: list[InterleavedBatch] = [InterleavedBatch(
                task_id=task.task_id, dataset_name=task.dataset_name, data=splits[0],
                metadata=meta, stage_perf=list(task.stage_perf))]
        else:
            out = [InterleavedBatch(task_id=f"{task.task_id}_{k:05d}",
                                    dataset_name=task.dataset_name, data=s, metadata=dict(meta),
                                    stage_perf=list(task.stage_perf))
                   for k, s in enumerate(splits)]
        self._log_metrics({"reader_process_seconds": time.perf_counter() - started,
                           "reader_output_splits": float(len(out)),
                           "reader_output_rows": float(table.num_rows)})
        return out if len(out) > 1 else out[0]


@dataclass
class InterleavedLanceReader(CompositeStage[EmptyTask, InterleavedBatch]):
    """Reads an interleaved Lance dataset: ``LancePartitioningStage`` +
    :class:`InterleavedLanceReaderStage` (see them for the parameters)."""

    path: str = ""
    fragments_per_partition: int = 1
    fields: list[str] | None = None
    max_batch_bytes: int | None = None
    max_batch_rows: int | None = None
    read_kwargs: dict[str, Any] | None = field(default=None)
    include_lance_metadata: bool = True
    fragment_ids: list[int] | None = None
    name: str = "interleaved_lance_reader"
    modality: ClassVar[str] = "interleaved"
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError(f"{self.name}: path (the Lance dataset) is required")
        self.read_kwargs = dict(self.read_kwargs or {})

    def decompose(self) -> list[ProcessingStage]:
        return [LancePartitioningStage(path=self.path,
                                       fragments_per_partition=self.fragments_per_partition,
                                       fragment_ids=self.fragment_ids,
                                       read_kwargs=self.read_kwargs),
                InterleavedLanceReaderStage(fields=self.fields,
                                            max_batch_bytes=self.max_batch_bytes,
                                            max_batch_rows=self.max_batch_rows,
                                            read_kwargs=self.read_kwargs,
                                            include_lance_metadata=self.include_lance_metadata)]
