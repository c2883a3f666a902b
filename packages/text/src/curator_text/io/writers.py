"""JSONL and Parquet writers: atomic, one file per task named after its task_id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from curator import FileGroupTask, ProcessingStage
from curator.io import atomic_write, join_path

from curator_text.io.jsonl_encode import table_to_jsonl
from curator_text.tasks import DocumentBatch

__all__ = ["JsonlWriter", "ParquetWriter"]


@dataclass
class _Writer(ProcessingStage[DocumentBatch, FileGroupTask]):
    path: str = ""
    fields: list[str] | None = None
    write_to_filename: bool | str = False
    name: str = "writer"
    modality = "text"
    extension: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if not self.path:
            raise ValueError(f"{self.name}: path (the output directory) is required")
        if isinstance(self.fields, str):
            self.fields = [self.fields]

    @property
    def filename_field(self) -> str:
        return self.write_to_filename if isinstance(self.write_to_filename, str) else "file_name"

    def inputs(self):
        cols = list(self.fields or [])
        if self.write_to_filename:
            cols.append(self.filename_field)
        return ["data"], cols

    def outputs(self):
        return ["data"], []

    def write_table(self, table: pa.Table, path: str) -> None:
        raise NotImplementedError

    def process(self, task: DocumentBatch) -> FileGroupTask:
        table = task.to_pyarrow()
        written: list[str] = []
        if self.write_to_filename:
            col = self.filename_field
            if col not in table.column_names:
                raise ValueError(f"{self.name}: write_to_filename needs a {col!r} column")
            for fname in sorted(set(table[col].to_pylist()) - {None}):
                part = table.filter(pc.equal(table[col], fname))
                base = str(fname).rsplit("/", 1)[-1]
                stem = base.split(".")[0] or task.task_id
                out = join_path(self.path, f"{stem}{self.extension}")
                self.write_table(self._select(part, drop=col), out)
                written.append(out)
        else:
            out = join_path(self.path, f"{task.task_id}{self.extension}")
            self.write_table(self._select(table), out)
            written.append(out)
        return FileGroupTask(task_id=task.task_id, dataset_name=task.dataset_name, data=written,
                             metadata={**task.metadata, "num_rows": table.num_rows},
                             stage_perf=list(task.stage_perf))

    def _select(self, table: pa.Table, drop: str | None = None) -> pa.Table:
        if self.fields:
            return table.select(list(self.fields))
        if drop and drop in table.column_names:
            return table.drop_columns([drop])
        return table


@dataclass
class JsonlWriter(_Writer):
    """Writes each DocumentBatch to ``{path}/{task_id}.jsonl`` atomically (a re-run overwrites).

    Parameters:
        path: output directory (local or fsspec URL).
        fields: columns to write (default: all).
        write_to_filename: write rows to files named by their ``file_name`` column (or the column
            named here) instead of by task id.
    """

    name: str = "JsonlWriter"
    extension: ClassVar[str] = ".jsonl"

    def write_table(self, table: pa.Table, path: str) -> None:
        with atomic_write(path, "wb") as fh:
            fh.write(table_to_jsonl(table))


@dataclass
class ParquetWriter(_Writer):
    """Writes each DocumentBatch to ``{path}/{task_id}.parquet`` atomically (same parameters as
    :class:`JsonlWriter`)."""

    name: str = "ParquetWriter"
    extension: ClassVar[str] = ".parquet"

    def write_table(self, table: pa.Table, path: str) -> None:
        import pyarrow.parquet as pq  # noqa: PLC0415

        with atomic_write(path, "wb") as fh:
            pq.write_table(table, fh)
