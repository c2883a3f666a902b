"""InterleavedParquetReaderStage: Parquet files already in the interleaved row layout (what
:class:`~curator_interleaved.io.writers.tabular.InterleavedParquetWriterStage` writes).

Every column is read unless ``fields`` names the user columns to keep (reserved columns are
always read; a named field absent from a file is null). A document with a segment lacking a
``position``, ``modality`` or ``sample_id`` cannot be put in order: it goes to the rejected sink
whole, with its reason, and the other documents are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator import FileGroupTask

from curator_interleaved.io.readers.base import BaseInterleavedReader
from curator_interleaved.tasks import INTERLEAVED_SCHEMA, RESERVED_COLUMNS, InterleavedBatch

__all__ = ["InterleavedParquetReaderStage", "reject_unordered_samples"]


def reject_unordered_samples(stage: BaseInterleavedReader, task: FileGroupTask,
                             table: pa.Table, source: str = "") -> pa.Table:
    """``table`` without the documents that have a row lacking ``sample_id``, ``position`` or
    ``modality``; each such document (or id-less row) goes to ``stage``'s rejected sink."""
    if table.num_rows == 0:
        return table
    bad = pc.is_null(table["sample_id"])
    for col in ("position", "modality"):
        bad = pc.or_(bad, pc.is_null(table[col]))
    if not pc.any(bad).as_py():
        return table
    bad_np = bad.to_numpy(zero_copy_only=False)
    ids = table["sample_id"].to_pylist()
    bad_ids = {ids[i] for i in np.flatnonzero(bad_np) if ids[i] is not None}
    for i in np.flatnonzero(bad_np):
        if ids[i] is None:
            stage.reject(task, "segment_without_sample_id", source=source,
                         record={k: v for k, v in table.slice(int(i), 1).to_pylist()[0].items()
                                 if k != "binary_content"})
    for sid in sorted(bad_ids):
        rows = pc.sum(pc.equal(table["sample_id"], sid)).as_py()
        stage.reject(task, "segments_without_position", source=source,
                     record={"sample_id": sid, "rows": rows},
                     error="the document has segments without a position or modality: its "
                           "reading order is unknown")
    drop = pc.or_(bad, pc.is_in(table["sample_id"], pa.array(sorted(bad_ids), pa.string())))
    return table.filter(pc.invert(pc.fill_null(drop, True)))


@dataclass
class InterleavedParquetReaderStage(BaseInterleavedReader):
    """Reads interleaved-layout Parquet files into an :class:`InterleavedBatch` per partition
    (see the module doc).

    Parameters:
        fields: user columns to read besides the reserved ones (default: all columns).
        max_batch_bytes: split a partition's rows into batches of about this size (never inside
            a document).
        read_kwargs, schema, schema_overrides: see :class:`BaseInterleavedReader`.
    """

    fields: tuple[str, ...] | None = None
    max_batch_bytes: int | None = None
    name: str = "interleaved_parquet_reader"

    def _columns_to_read(self, file_schema: pa.Schema) -> list[str] | None:
        if self.fields is None:
            return None
        have = set(file_schema.names)
        cols = [c for c in INTERLEAVED_SCHEMA.names if c in have]
        cols += [f for f in self.fields if f in have and f not in RESERVED_COLUMNS]
        return cols

    def _null_fill_missing_columns(self, table: pa.Table) -> pa.Table:
        have = set(table.column_names)
        for f in INTERLEAVED_SCHEMA:
            if f.name not in have:
                table = table.append_column(f, pa.nulls(table.num_rows, f.type))
        for name in self.fields or ():
            if name not in have and name not in RESERVED_COLUMNS:
                table = table.append_column(pa.field(name, pa.null()),
                                            pa.nulls(table.num_rows, pa.null()))
        return table

    def process(self, task: FileGroupTask) -> InterleavedBatch | list[InterleavedBatch]:
        import fsspec
        import pyarrow.parquet as pq

        tables = []
        for path in task.data:
            fs, inner = fsspec.core.url_to_fs(str(path), **self._storage_options)
            with fs.open(inner, "rb") as fh:
                pf = pq.ParquetFile(fh)
                table = pf.read(columns=self._columns_to_read(pf.schema_arrow))
            table = self._null_fill_missing_columns(table)
            tables.append(reject_unordered_samples(self, task, table, source=str(path)))
        if tables:
            combined = pa.concat_tables(tables, promote_options="default")
            combined = self._align_output(combined)
        else:
            combined = (self.schema or INTERLEAVED_SCHEMA).empty_table()
        return self._batches(task, combined, self.max_batch_bytes)
