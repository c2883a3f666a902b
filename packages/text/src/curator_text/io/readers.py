"""JSONL and Parquet readers: file partitioning, then reading each partition into a
DocumentBatch. Bad lines and unreadable files go to the rejected sink; the run goes on."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
from curator import CompositeStage, FileGroupTask, ProcessingStage
from curator.io import get_fs

from curator_text.io.partitioning import BYTE_RANGE_KEY, ByteRangePartitioningStage
from curator_text.tasks import DocumentBatch

__all__ = ["JsonlReader", "ParquetReader", "JsonlReaderStage", "ParquetReaderStage"]

_BLOCK = 8 << 20


@dataclass
class _ReaderStage(ProcessingStage[FileGroupTask, DocumentBatch]):
    """Reads every file of a FileGroupTask and concatenates them into one DocumentBatch."""

    fields: list[str] | None = None
    name: str = "reader"
    modality = "text"

    def inputs(self):
        return ["data"], []

    def outputs(self):
        return ["data"], list(self.fields) if self.fields else ["*"]

    def read_file(self, task: FileGroupTask, path: str) -> pa.Table | None:
        raise NotImplementedError

    def process(self, task: FileGroupTask) -> DocumentBatch:
        tables = []
        for path in task.data:
            try:
                table = self.read_file(task, path)
            except Exception as exc:  # noqa: BLE001 - a bad file is reported, the run goes on
                self.reject(task, "file could not be read", error=exc, source=path, kind="file",
                            record={"file": path})
                continue
            if table is not None:
                tables.append(self._select(table))
        if not tables:
            table = pa.table({f: pa.array([], pa.string()) for f in (self.fields or [])})
        elif len(tables) == 1:
            table = tables[0]
        else:
            table = pa.concat_tables(tables, promote_options="permissive")
        return DocumentBatch(task_id=task.task_id, dataset_name=task.dataset_name, data=table,
                             metadata=dict(task.metadata), stage_perf=list(task.stage_perf))

    def _select(self, table: pa.Table) -> pa.Table:
        if not self.fields:
            return table
        cols = []
        for f in self.fields:
            cols.append(table[f] if f in table.column_names
                        else pa.nulls(table.num_rows, pa.string()))
        return pa.table(cols, names=list(self.fields))


@dataclass
class JsonlReaderStage(_ReaderStage):
    """Reads JSONL files with Arrow's parallel JSON parser; a file that fails to parse is re-read
    line by line so each malformed line is rejected with its file and line number and the rest
    of the file is kept."""

    name: str = "JsonlReaderStage"

    def read_file(self, task: FileGroupTask, path: str) -> pa.Table | None:
        import pyarrow.json as pj  # noqa: PLC0415

        raw, offset = _read_range(path, task.metadata.get(BYTE_RANGE_KEY))
        if not raw or raw.isspace():  # (not strip(): that copies the block)
            return None
        try:
            return pj.read_json(pa.BufferReader(raw), read_options=pj.ReadOptions(
                block_size=_BLOCK, use_threads=False))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return self._read_lines(task, path, raw, offset)

    def _read_lines(self, task: FileGroupTask, path: str, raw: bytes,
                    offset: int = 0) -> pa.Table | None:
        rows = []
        pos = offset
        for lineno, line in enumerate(raw.split(b"\n"), start=1):
            at, pos = pos, pos + len(line) + 1
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise ValueError(f"expected a JSON object, got {type(row).__name__}")
            except ValueError as exc:
                where = f"{path}:{lineno}" if offset == 0 else f"{path} at byte {at}"
                record = {"file": path, "line": lineno, "byte_offset": at,
                          "text": line[:1000].decode("utf-8", "replace")}
                if offset:  # line numbers of a block are not known without reading the file
                    del record["line"]
                self.reject(task, f"malformed JSON at {where}", error=exc, source=path,
                            record=record)
                continue
            rows.append(row)
        return pa.Table.from_pylist(rows) if rows else None


def _read_range(path: str, byte_range: list[int] | None) -> tuple[bytes, int]:
    """The bytes of ``path`` (whole, or the lines *starting* in ``byte_range`` = [start, end)) and
    the offset of the first returned byte. A line crossing ``end`` is read to its end; one
    crossing ``start`` belongs to the previous range."""
    fs, p = get_fs(path)
    if byte_range is None:
        with fs.open(p, "rb", compression="infer") as fh:
            return fh.read(), 0
    start, end = byte_range
    with fs.open(p, "rb") as fh:
        pos = 0
        if start > 0:
            fh.seek(start - 1)
            pos = start - 1 + len(fh.readline())  # skip the tail of the previous range's line
        if pos >= end:
            return b"", pos
        fh.seek(pos)
        data = fh.read(end - pos)
        if data and not data.endswith(b"\n"):
            data += fh.readline()
        return data, pos


@dataclass
class ParquetReaderStage(_ReaderStage):
    """Reads Parquet files (only ``fields`` when given)."""

    name: str = "ParquetReaderStage"

    def read_file(self, task: FileGroupTask, path: str) -> pa.Table | None:
        import pyarrow.parquet as pq  # noqa: PLC0415

        fs, p = get_fs(path)
        with fs.open(p, "rb") as fh:
            schema = pq.read_schema(fh)
            cols = [f for f in self.fields if f in schema.names] if self.fields else None
            fh.seek(0)
            return pq.read_table(fh, columns=cols)


@dataclass
class _Reader(CompositeStage[FileGroupTask, DocumentBatch]):
    file_paths: str | list[str] = ""
    files_per_partition: int | None = None
    blocksize: int | str | None = None
    fields: list[str] | None = None
    file_extensions: list[str] | None = None
    limit: int | None = None
    name: str = "reader"
    modality = "text"
    _extensions: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        if isinstance(self.fields, str):
            self.fields = [self.fields]
        self.decompose()  # validates the configuration before any data is read

    def _partitioner(self) -> ByteRangePartitioningStage:
        return ByteRangePartitioningStage(
            file_paths=self.file_paths, files_per_partition=self.files_per_partition,
            blocksize=self.blocksize, limit=self.limit,
            file_extensions=self.file_extensions or list(self._extensions),
            name=f"{self.name}.partition")


@dataclass
class JsonlReader(_Reader):
    """Reads JSONL files (plain or compressed) into DocumentBatches.

    Parameters:
        file_paths: a path, glob, directory or fsspec URL (or a list of them).
        files_per_partition / blocksize: how files are grouped into tasks (default one file each);
            with ``blocksize`` (e.g. ``"64MB"``) small files are grouped up to that size and an
            uncompressed file bigger than it is read as byte-range blocks of that size, one task
            each, so memory does not depend on file size.
        fields: columns to keep (default: all).
        file_extensions: endings to keep when listing directories (default .jsonl, .json, .gz …).
        limit: read only the first ``limit`` partitions.
    """

    name: str = "JsonlReader"
    _extensions: ClassVar[tuple[str, ...]] = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".jsonl.zst")

    def decompose(self) -> list[ProcessingStage]:
        return [self._partitioner(), JsonlReaderStage(fields=self.fields,
                                                      name=f"{self.name}.read")]


@dataclass
class ParquetReader(_Reader):
    """Reads Parquet files into DocumentBatches (same parameters as :class:`JsonlReader`)."""

    name: str = "ParquetReader"
    _extensions: ClassVar[tuple[str, ...]] = (".parquet",)

    def decompose(self) -> list[ProcessingStage]:
        return [self._partitioner(), ParquetReaderStage(fields=self.fields,
                                                        name=f"{self.name}.read")]
