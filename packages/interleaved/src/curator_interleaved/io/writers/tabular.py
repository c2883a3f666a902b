"""InterleavedParquetWriterStage: interleaved rows -> one Parquet file per task."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from curator.io import atomic_write

from curator_interleaved.io.writers.base import BaseInterleavedWriter

__all__ = ["InterleavedParquetWriterStage"]

_PARQUET_KEYS = frozenset({"compression", "compression_level", "row_group_size", "use_dictionary",
                           "write_statistics", "data_page_size", "version"})


@dataclass
class InterleavedParquetWriterStage(BaseInterleavedWriter):
    """Writes each :class:`~curator_interleaved.tasks.InterleavedBatch` as
    ``{path}/{task_id}.parquet`` in the interleaved row layout (every column, image bytes
    fetched first unless ``materialize_on_write=False``); read back with
    :class:`~curator_interleaved.io.reader.InterleavedParquetReader`. See
    :class:`~curator_interleaved.io.writers.base.BaseInterleavedWriter` for the parameters,
    naming, save modes and materialisation errors. ``write_kwargs`` also takes
    ``pyarrow.parquet.write_table`` options (``compression`` default snappy,
    ``row_group_size`` default 128000)."""

    file_extension: str = "parquet"
    name: str = "interleaved_parquet_writer"

    def write_table(self, table: pa.Table, file_path: str) -> None:
        import pyarrow.parquet as pq

        options = {k: v for k, v in self.write_kwargs.items() if k in _PARQUET_KEYS}
        options.setdefault("compression", "snappy")
        options.setdefault("row_group_size", 128_000)
        with atomic_write(file_path, "wb") as fh:
            pq.write_table(table, fh, **options)
