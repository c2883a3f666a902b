"""Segmented files: the sort-based shuffle of the deduplication workflows.

A writer (one task of a map phase) writes ONE file holding all its rows, grouped by the reader
(hash partition, input file, bucket …) each row goes to: one Arrow IPC record batch per
non-empty segment, the segment ids and row counts kept in the schema's metadata (read with the
footer). A reader opens every writer's file and reads only its own batch. A shuffle of ``M``
writers into ``R`` readers makes ``M`` files instead of ``M x R``, so the number of files on
disk grows linearly with the data (the reads stay ``M x R``, each a small seek).

Files are written atomically (:func:`~curator.io.atomic_write`), buffers compressed with zstd.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from curator.io import atomic_write, expand_paths, get_fs

__all__ = ["SEGMENTS_EXT", "Segment", "write_segments", "find_segments", "read_segment",
           "segment_files"]

#: the extension of a segmented file
SEGMENTS_EXT = ".arrow"
_IDS, _ROWS = b"curator.segments", b"curator.segment_rows"
_OPTIONS = pa.ipc.IpcWriteOptions(compression="zstd")


def _encode(values: np.ndarray) -> bytes:
    return base64.b64encode(np.ascontiguousarray(values, dtype="<i8").tobytes())


def _decode(raw: bytes) -> np.ndarray:
    return np.frombuffer(base64.b64decode(raw), dtype="<i8")


def write_segments(table: pa.Table, segment: np.ndarray, path: str) -> int:
    """Write ``table`` to ``path``, its rows grouped by ``segment`` (an integer per row; rows
    keep their order within a segment). An empty table makes a file with no segments (a
    finished writer with nothing to pass on). Returns the number of segments written."""
    segment = np.asarray(segment, dtype=np.int64)
    if len(segment) != table.num_rows:
        raise ValueError(f"write_segments: {len(segment)} segment ids for {table.num_rows} rows")
    order = np.argsort(segment, kind="stable")
    seg = segment[order]
    starts = (np.flatnonzero(np.concatenate(([True], seg[1:] != seg[:-1]))) if len(seg)
              else np.empty(0, np.int64))
    ends = np.append(starts[1:], len(seg)) if len(seg) else starts
    # contiguous once: a take from a chunked table concatenates its chunks on every call
    table = table.combine_chunks()
    schema = table.schema.with_metadata({**(table.schema.metadata or {}),
                                         _IDS: _encode(seg[starts]),
                                         _ROWS: _encode(ends - starts)})
    with atomic_write(path, "wb") as fh, pa.ipc.new_file(fh, schema, options=_OPTIONS) as out:
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            # one segment's rows copied at a time, not a sorted copy of the whole table
            rows = table.take(pa.array(order[s:e])).combine_chunks()
            out.write_batch(rows.to_batches()[0].replace_schema_metadata(schema.metadata))
    return len(starts)


def _open(path: str) -> pa.ipc.RecordBatchFileReader:
    fs, p = get_fs(path)
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    source = pa.memory_map(p) if "file" in protocols else fs.open(p, "rb")
    return pa.ipc.open_file(source)


@dataclass(frozen=True)
class Segment:
    """One segment of one segmented file (found by :func:`find_segments`, read on demand)."""

    path: str
    id: int
    num_rows: int
    batch: int

    def read(self, columns: Sequence[str] | None = None) -> pa.Table:
        batch = _open(self.path).get_batch(self.batch)
        if columns is not None:
            batch = batch.select(list(columns))
        return pa.Table.from_batches([batch])


def find_segments(paths: Iterable[str], lo: int, hi: int | None = None) -> list[Segment]:
    """The segments ``lo <= id < hi`` (``hi`` default ``lo + 1``) of the segmented files
    ``paths``, file by file, then by id; only the files' footers are read."""
    hi = lo + 1 if hi is None else hi
    out: list[Segment] = []
    for path in paths:
        meta = _open(path).schema.metadata or {}
        ids, rows = _decode(meta.get(_IDS, b"")), _decode(meta.get(_ROWS, b""))
        a, b = np.searchsorted(ids, [lo, hi])
        out += [Segment(path, int(ids[k]), int(rows[k]), k) for k in range(int(a), int(b))]
    return out


def read_segment(paths: Iterable[str], segment: int, columns: Sequence[str] | None = None
                 ) -> pa.Table | None:
    """Segment ``segment`` of every file of ``paths`` as one table (``None`` when no file has
    it); each file is opened once."""
    tables = []
    for path in paths:
        reader = _open(path)
        ids = _decode((reader.schema.metadata or {}).get(_IDS, b""))
        k = int(np.searchsorted(ids, segment))
        if k < len(ids) and ids[k] == segment:
            batch = reader.get_batch(k)
            tables.append(pa.Table.from_batches(
                [batch.select(list(columns)) if columns is not None else batch]))
    return pa.concat_tables(tables, promote_options="default") if tables else None


def segment_files(directory: str) -> list[str]:
    """The segmented files directly under ``directory`` (sorted; none when it does not exist)."""
    try:
        found = expand_paths(directory, [SEGMENTS_EXT])
    except FileNotFoundError:
        return []
    base = directory.rstrip("/") + "/"
    return [f for f in found if "/" not in f[len(base):]] if all(
        f.startswith(base) for f in found) else found
