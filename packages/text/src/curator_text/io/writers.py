"""JSONL and Parquet writers: atomic, one file per task named after its task_id (or per source
file name with ``write_to_filename``); the output directory follows a save mode
(:mod:`curator.output_dir`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from curator import FileGroupTask, ProcessingStage
from curator.errors import ConfigError
from curator.io import atomic_write, file_stem
from curator.output_dir import ManagedOutput, SaveMode, check_mode

from curator_text.io.jsonl_encode import jsonl_view
from curator_text.tasks import DocumentBatch

__all__ = ["JsonlWriter", "ParquetWriter"]


@dataclass
class _Writer(ManagedOutput, ProcessingStage[DocumentBatch, FileGroupTask]):
    path: str = ""
    fields: list[str] | None = None
    write_to_filename: bool | str = False
    mode: SaveMode = "error"
    name: str = "writer"
    modality = "text"
    extension: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError(f"{self.name}: path (the output directory) is required")
        if isinstance(self.fields, str):
            self.fields = [self.fields]
        check_mode(self.mode, self.name)

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
        if not self.writes_output:  # mode="ignore" and the directory held another run's files
            pass
        elif self.write_to_filename:
            col = self.filename_field
            if col not in table.column_names:
                raise ValueError(f"{self.name}: write_to_filename needs a {col!r} column")
            # rows are grouped by output name (two sources with one name share a file); rows
            # without a name go to the task's own file
            stems = pa.array([task.task_id if n is None else file_stem(n) or task.task_id
                              for n in table[col].to_pylist()], pa.string())
            for stem in sorted(set(stems.to_pylist())):
                part = table.filter(pc.equal(stems, stem))
                out = self.output_file(f"{stem}{self.extension}")
                self.write_table(self._select(part, drop=col), out)
                written.append(out)
        else:
            out = self.output_file(f"{task.task_id}{self.extension}")
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
            named here) instead of by task id (rows without one: by task id): the source's base name minus its extension
            (``part.a.jsonl`` -> ``part.a.jsonl``, ``docs.json.gz`` -> ``docs.jsonl``).
        mode: what to do when ``path`` holds another run's files: ``"error"`` (default),
            ``"overwrite"``, ``"append"`` or ``"ignore"`` (see :mod:`curator.output_dir`).
    """

    name: str = "JsonlWriter"
    extension: ClassVar[str] = ".jsonl"

    def write_table(self, table: pa.Table, path: str) -> None:
        with atomic_write(path, "wb") as fh:
            fh.write(jsonl_view(table))


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
