"""JSONL and Parquet readers: file partitioning, then reading each partition into a
DocumentBatch. Bad lines and unreadable files go to the rejected sink; the run goes on."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from curator import CompositeStage, FileGroupTask, ProcessingStage
from curator.dedup.id_generator import CURATOR_DEDUP_ID_STR
from curator.errors import ConfigError
from curator.io import get_fs, register_storage_options

from curator_text import _native
from curator_text.io.compressed import read_decompressed_range, stream_codec
from curator_text.io.partitioning import (
    BYTE_RANGE_KEY,
    ROW_GROUPS_KEY,
    ByteRangePartitioningStage,
    FilePartitioningStage,
    RowGroupPartitioningStage,
)
from curator_text.tasks import DocumentBatch

__all__ = ["JsonlReader", "ParquetReader", "JsonlReaderStage", "ParquetReaderStage"]

_BLOCK = 8 << 20
_READ_KWARGS = {"storage_options", "dtype_backend", "engine", "lines", "orient", "columns",
                "compression"}


def check_read_kwargs(name: str, read_kwargs: dict[str, Any] | None) -> None:
    """NeMo's ``read_kwargs`` (pandas/pyarrow reader options): the ones with a meaning here are
    accepted, any other is a ``ConfigError`` naming it (rather than being ignored)."""
    unknown = sorted(set(read_kwargs or {}) - _READ_KWARGS)
    if unknown:
        raise ConfigError(f"{name}: read_kwargs {unknown} are not supported (supported: "
                          f"{sorted(_READ_KWARGS)}; storage_options go to fsspec)")
    if (read_kwargs or {}).get("lines") is False or (read_kwargs or {}).get("orient") not in (
            None, "records"):
        raise ConfigError(f"{name}: read_kwargs lines=False / orient other than 'records' are "
                          f"not supported: input is JSON Lines of records")


@dataclass
class _ReaderStage(ProcessingStage[FileGroupTask, DocumentBatch]):
    """Reads every file of a FileGroupTask and concatenates them into one DocumentBatch."""

    fields: list[str] | None = None
    name: str = "reader"
    read_kwargs: dict[str, Any] | None = None
    _generate_ids: bool = False
    _assign_ids: bool = False
    modality = "text"

    def __post_init__(self) -> None:
        check_read_kwargs(self.name, self.read_kwargs)
        if self.fields is None and (self.read_kwargs or {}).get("columns"):
            self.fields = list(self.read_kwargs["columns"])
        if self._generate_ids and self._assign_ids:
            raise ConfigError(f"{self.name}: give _generate_ids or _assign_ids, not both")

    def inputs(self):
        return ["data"], []

    def outputs(self):
        cols = list(self.fields) if self.fields else ["*"]
        return ["data"], cols + ([CURATOR_DEDUP_ID_STR] if self._with_ids else [])

    @property
    def _with_ids(self) -> bool:
        return self._generate_ids or self._assign_ids

    @property
    def storage_options(self) -> dict[str, Any] | None:
        return (self.read_kwargs or {}).get("storage_options")

    def read_file(self, task: FileGroupTask, path: str) -> pa.Table | None:
        raise NotImplementedError

    def process(self, task: FileGroupTask) -> DocumentBatch:
        register_storage_options(task.data, self.storage_options)  # in this worker too
        tables = []
        for path in task.data:
            try:
                table = self.read_file(task, path)
            except Exception as exc:
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
        if self._with_ids:
            table = self._add_ids(task, table)
        return DocumentBatch(task_id=task.task_id, dataset_name=task.dataset_name, data=table,
                             metadata=dict(task.metadata), stage_perf=list(task.stage_perf))

    def _add_ids(self, task: FileGroupTask, table: pa.Table) -> pa.Table:
        """NeMo's ``_curator_dedup_id``: integers reserved for this task's files in the shared
        ID generator (``_generate_ids``), or those reserved earlier (``_assign_ids``)."""
        from curator.dedup.id_generator import get_id_generator_actor

        if CURATOR_DEDUP_ID_STR in table.column_names:
            return table  # ids already there (as NeMo: not generated again)
        try:
            gen = get_id_generator_actor()
        except ValueError:
            raise RuntimeError(f"{self.name}: _generate_ids/_assign_ids need the ID generator: "
                               f"call create_id_generator_actor() before the run") from None
        key = list(task.data)
        if task.metadata.get(BYTE_RANGE_KEY) or task.metadata.get(ROW_GROUPS_KEY):
            key.append(str(task.metadata.get(BYTE_RANGE_KEY) or task.metadata[ROW_GROUPS_KEY]))
        if self._generate_ids:
            first = gen.register_batch(key, table.num_rows)
        else:
            first, last = gen.get_batch_range(key)
            if last - first + 1 != table.num_rows:
                raise ValueError(f"{self.name}: {table.num_rows} rows in {task.data} but "
                                 f"{last - first + 1} ids were generated for them: the files "
                                 f"changed since their ids were generated")
        ids = pa.array(range(first, first + table.num_rows), pa.int64())
        return table.append_column(CURATOR_DEDUP_ID_STR, ids)

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
        import pyarrow.json as pj

        raw, offset = _read_range(path, task.metadata.get(BYTE_RANGE_KEY))
        if not raw or raw.isspace():  # (not strip(): that copies the block)
            return None
        table = read_jsonl_fast(raw)
        if table is not None:
            return table
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


def read_jsonl_fast(raw: bytes | bytearray | memoryview) -> pa.Table | None:
    """The JSON Lines ``raw`` as Arrow's JSON reader reads it, by one compiled pass
    (``_native.read_jsonl``: objects of strings, numbers, booleans and nulls; a column that may
    hold timestamps is typed by Arrow), or ``None`` where the result is not certain to be
    Arrow's (nested values, a type change, …: ask Arrow)."""
    parsed = _native.read_jsonl(raw)
    if parsed is None:
        return None
    rows, columns = parsed
    if rows and not columns:
        return None  # objects without keys: Arrow's own shape
    arrays = []
    for _name, kind, values, offsets, valid, maybe_timestamp in columns:
        mask = np.frombuffer(_owned(valid), dtype=np.uint8)
        nulls = rows - int(np.count_nonzero(mask))
        bitmap = pa.py_buffer(np.packbits(mask, bitorder="little")) if nulls else None
        if kind == "null":
            arrays.append(pa.nulls(rows))
        elif kind == "string":
            strings = pa.Array.from_buffers(pa.string(), rows, [
                bitmap, _owned(offsets), _owned(values)], null_count=nulls)
            arrays.append(_arrow_types(strings) if maybe_timestamp else strings)
        elif kind == "bool":
            bits = np.packbits(np.frombuffer(_owned(values), dtype=np.uint8), bitorder="little")
            arrays.append(pa.Array.from_buffers(pa.bool_(), rows, [bitmap, pa.py_buffer(bits)],
                                                null_count=nulls))
        else:
            arrays.append(pa.Array.from_buffers(pa.int64() if kind == "int64" else pa.float64(),
                                                rows, [bitmap, _owned(values)], null_count=nulls))
    return pa.Table.from_arrays(arrays, names=[c[0] for c in columns])


def _arrow_types(strings: pa.Array) -> pa.Array:
    """``strings`` as Arrow's JSON reader types them (timestamps where every value reads as
    one, else strings): that column alone read by Arrow, since its inference looks at nothing
    else."""
    import pyarrow.json as pj

    from curator_text.io.jsonl_encode import table_to_jsonl

    column = pj.read_json(pa.BufferReader(table_to_jsonl(pa.table({"v": strings}))),
                          read_options=pj.ReadOptions(block_size=_BLOCK, use_threads=False))
    return column["v"].combine_chunks()


def _owned(buffer: tuple[int, int, object]) -> pa.Buffer:
    """An Arrow buffer over memory the kernel handed over (address, length, owner)."""
    address, size, owner = buffer
    return pa.foreign_buffer(address, size, base=owner)


def _read_range(path: str, byte_range: list[int] | None) -> tuple[bytes | bytearray, int]:
    """The bytes of ``path`` (whole, or the lines *starting* in ``byte_range`` = [start, end):
    of the decompressed bytes for a compressed file) and the offset of the first returned byte.
    A line crossing ``end`` is read to its end; one crossing ``start`` belongs to the previous
    range."""
    if byte_range is not None and stream_codec(path) is not None:
        return read_decompressed_range(path, *byte_range)
    fs, p = get_fs(path)
    if byte_range is None:
        if p.lower().endswith((".zst", ".zstd")):  # Arrow's codec: no zstandard package needed
            with fs.open(p, "rb") as fh:
                return pa.CompressedInputStream(pa.PythonFile(fh, mode="r"), "zstd").read(), 0
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
        fh.seek(end - 1)
        stop = end - 1 + len(fh.readline())  # a line crossing ``end`` is read to its end
        buf = bytearray(stop - pos)  # one allocation: no copy to append that line's tail
        view, got = memoryview(buf), 0
        fh.seek(pos)
        while got < len(buf):
            n = fh.readinto(view[got:])
            if not n:
                break
            got += n
        view.release()
        del buf[got:]
        return buf, pos


@dataclass
class ParquetReaderStage(_ReaderStage):
    """Reads Parquet files (only ``fields`` when given); a block partition (metadata
    ``row_groups``) reads only its row groups."""

    name: str = "ParquetReaderStage"

    def read_file(self, task: FileGroupTask, path: str) -> pa.Table | None:
        import pyarrow.parquet as pq

        fs, p = get_fs(path)
        with fs.open(p, "rb") as fh:
            pf = pq.ParquetFile(fh)
            names = pf.schema_arrow.names
            cols = [f for f in self.fields if f in names] if self.fields else None
            groups = task.metadata.get(ROW_GROUPS_KEY)
            if groups is None:
                return pf.read(columns=cols)
            return pf.read_row_groups(range(*groups), columns=cols)


@dataclass
class _Reader(CompositeStage[FileGroupTask, DocumentBatch]):
    file_paths: str | list[str] = ""
    files_per_partition: int | None = None
    blocksize: int | str | None = None
    fields: list[str] | None = None
    file_extensions: list[str] | None = None
    limit: int | None = None
    name: str = "reader"
    read_kwargs: dict[str, Any] | None = None
    _generate_ids: bool = False
    _assign_ids: bool = False
    modality = "text"
    _extensions: ClassVar[tuple[str, ...]] = ()
    _partitioning: ClassVar[type[FilePartitioningStage]] = ByteRangePartitioningStage

    def __post_init__(self) -> None:
        if isinstance(self.fields, str):
            self.fields = [self.fields]
        if self.fields is None and (self.read_kwargs or {}).get("columns"):
            self.fields = list(self.read_kwargs["columns"])
        register_storage_options(self.file_paths, (self.read_kwargs or {}).get("storage_options"))
        self.decompose()  # validates the configuration before any data is read

    def _partitioner(self) -> FilePartitioningStage:
        return self._partitioning(
            file_paths=self.file_paths, files_per_partition=self.files_per_partition,
            blocksize=self.blocksize, limit=self.limit,
            file_extensions=self.file_extensions or list(self._extensions),
            storage_options=(self.read_kwargs or {}).get("storage_options"),
            name=f"{self.name}.partition")

    def _reader_options(self) -> dict[str, Any]:
        """What the reading stage takes from the composite (NeMo's reader parameters)."""
        return {"fields": self.fields, "read_kwargs": self.read_kwargs,
                "_generate_ids": self._generate_ids, "_assign_ids": self._assign_ids,
                "name": f"{self.name}.read"}


@dataclass
class JsonlReader(_Reader):
    """Reads JSONL files (plain or compressed) into DocumentBatches.

    Parameters:
        file_paths: a path, glob, directory or fsspec URL (or a list of them).
        files_per_partition / blocksize: how files are grouped into tasks (default one file
            each; with ``blocksize``, e.g. ``"64MB"``, small files are grouped up to that size).
            Whatever is given, an uncompressed file bigger than the block size (``blocksize``,
            else a fixed 4 MiB) is read as line-aligned byte-range blocks, one task each, so
            memory does not depend on file size; each block is written to its own file named
            ``{file stem}-{path hash}-{block index}``. A compressed file (.gz, .bz2, .zst,
            .lz4, .xz) bigger than the block size is split the same way in its decompressed
            bytes and each block is decompressed as a stream (never the whole file in memory).
        fields: columns to keep (default: all).
        file_extensions: endings to keep when listing directories (default .jsonl, .json, .gz …).
        limit: read only the first ``limit`` partitions.
        read_kwargs: NeMo Curator's reader options: ``storage_options`` (fsspec: credentials,
            endpoint) is used for listing and reading; ``dtype_backend``, ``engine``, ``lines``
            and ``orient`` are accepted (data is Arrow either way); ``columns`` selects columns
            as ``fields``; any other key is an error.
        _generate_ids: add ``_curator_dedup_id``, integer ids from the shared ID generator
            (:func:`curator.dedup.create_id_generator_actor` first), as NeMo Curator.
        _assign_ids: add the ids generated earlier for the same files.
    """

    name: str = "JsonlReader"
    _extensions: ClassVar[tuple[str, ...]] = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".jsonl.zst")

    def decompose(self) -> list[ProcessingStage]:
        return [self._partitioner(), JsonlReaderStage(**self._reader_options())]


@dataclass
class ParquetReader(_Reader):
    """Reads Parquet files into DocumentBatches (same parameters as :class:`JsonlReader`; a file
    bigger than the block size is read as runs of row groups of about that size, one task each)."""

    name: str = "ParquetReader"
    _extensions: ClassVar[tuple[str, ...]] = (".parquet",)
    _partitioning: ClassVar[type[FilePartitioningStage]] = RowGroupPartitioningStage

    def decompose(self) -> list[ProcessingStage]:
        return [self._partitioner(), ParquetReaderStage(**self._reader_options())]
