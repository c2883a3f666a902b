"""JSONL and Parquet writers: atomic, one file per task named after its task_id (or per source
file name with ``write_to_filename``); the output directory follows a save mode
(:mod:`curator.output_dir`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from curator import FileGroupTask, ProcessingStage
from curator.errors import ConfigError
from curator.io import atomic_write, file_stem, register_storage_options
from curator.output_dir import DEFAULT_MODE, ManagedOutput, SaveMode, check_mode

from curator_text.filters._vec import pc
from curator_text.io.jsonl_encode import jsonl_chunks, table_to_jsonl
from curator_text.tasks import DocumentBatch

__all__ = ["JsonlWriter", "ParquetWriter"]


@dataclass
class _Writer(ManagedOutput, ProcessingStage[DocumentBatch, FileGroupTask]):
    path: str = ""
    fields: list[str] | None = None
    write_to_filename: bool | str = False
    mode: SaveMode = DEFAULT_MODE
    name: str = "writer"
    write_kwargs: dict[str, Any] | None = None
    modality = "text"
    extension: ClassVar[str] = ""
    #: ``write_kwargs`` keys this writer accepts besides ``storage_options``
    write_keys: ClassVar[frozenset[str]] = frozenset()

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError(f"{self.name}: path (the output directory) is required")
        if isinstance(self.fields, str):
            self.fields = [self.fields]
        check_mode(self.mode, self.name)
        unknown = sorted(set(self.write_kwargs or {}) - self.write_keys - {"storage_options"})
        if unknown:
            raise ConfigError(f"{self.name}: write_kwargs {unknown} are not supported "
                              f"(supported: {sorted(self.write_keys | {'storage_options'})})")
        register_storage_options(self.path, self.storage_options)

    @property
    def storage_options(self) -> dict[str, Any] | None:
        """fsspec options for ``path`` (``write_kwargs={"storage_options": ...}``)."""
        return (self.write_kwargs or {}).get("storage_options")

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

    def write_table(self, table: pa.Table, path: str, rows: np.ndarray | None = None) -> None:
        """Write ``table`` (only its ``rows``, in order, when given) to ``path``."""
        raise NotImplementedError

    def process(self, task: DocumentBatch) -> FileGroupTask:
        register_storage_options(self.path, self.storage_options)  # in this worker too
        if not self.write_to_filename:  # the kept rows of a filtered batch, written as they are
            table, rows = task.selection()
            out = self.output_file(f"{task.task_id}{self.extension}")
            self.write_table(self._select(table), out, rows)
            n_rows = table.num_rows if rows is None else len(rows)
            return FileGroupTask(task_id=task.task_id, dataset_name=task.dataset_name,
                                 data=[out], metadata={**task.metadata, "num_rows": n_rows},
                                 stage_perf=list(task.stage_perf))
        table = task.to_pyarrow()
        written: list[str] = []
        if self.write_to_filename:
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
        mode: NeMo Curator's save modes: ``"ignore"`` (default: write into the directory,
            replacing same-named files), ``"overwrite"`` (first delete the files earlier Curator
            runs wrote there; other files stay), ``"append"`` (keep earlier files; a partition
            written again replaces its own file) or ``"error"`` (refuse a directory holding
            other files); see :mod:`curator.output_dir`.
        write_kwargs: NeMo Curator's writer options: ``storage_options`` (fsspec: credentials,
            endpoint) for everything written under ``path``; ``force_ascii=True`` escapes
            non-ASCII characters (default ``False``: UTF-8, as NeMo); ``lines``, ``orient`` and
            ``index`` are accepted with their JSON Lines values. ParquetWriter also passes
            ``compression``, ``row_group_size`` … to ``pyarrow.parquet.write_table``. Any other
            key is an error.
    """

    name: str = "JsonlWriter"
    extension: ClassVar[str] = ".jsonl"
    write_keys: ClassVar[frozenset[str]] = frozenset({"force_ascii", "lines", "orient", "index"})

    def __post_init__(self) -> None:
        super().__post_init__()
        kw = self.write_kwargs or {}
        if kw.get("lines") is False or kw.get("orient") not in (None, "records"):
            raise ConfigError(f"{self.name}: write_kwargs lines=False / orient other than "
                              f"'records' are not supported: output is JSON Lines of records")

    def write_table(self, table: pa.Table, path: str, rows: np.ndarray | None = None) -> None:
        if (self.write_kwargs or {}).get("force_ascii"):  # pandas' \uXXXX escapes
            chunks = [_ascii_json(table_to_jsonl(table if rows is None else table.take(rows)))]
        else:
            chunks = jsonl_chunks(table, rows)
        with atomic_write(path, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)


@dataclass
class ParquetWriter(_Writer):
    """Writes each DocumentBatch to ``{path}/{task_id}.parquet`` atomically (same parameters as
    :class:`JsonlWriter`)."""

    name: str = "ParquetWriter"
    extension: ClassVar[str] = ".parquet"
    write_keys: ClassVar[frozenset[str]] = frozenset({
        "index", "engine", "compression", "compression_level", "row_group_size",
        "use_dictionary", "write_statistics", "data_page_size", "version",
        "use_byte_stream_split", "coerce_timestamps", "allow_truncated_timestamps"})

    def write_table(self, table: pa.Table, path: str, rows: np.ndarray | None = None) -> None:
        import pyarrow.parquet as pq

        if rows is not None:
            table = table.take(rows)

        options = {k: v for k, v in (self.write_kwargs or {}).items()
                   if k not in ("storage_options", "index", "engine")}
        with atomic_write(path, "wb") as fh:
            pq.write_table(table, fh, **options)


def _ascii_json(data: bytes) -> bytes:
    """JSON text with every non-ASCII character escaped (``\\u00e9``, surrogate pairs above
    U+FFFF), as pandas' ``to_json(force_ascii=True)``; they occur only inside strings."""
    import json
    import re

    text = data.decode("utf-8")
    return re.sub(r"[^\x00-\x7f]+", lambda m: json.dumps(m.group())[1:-1], text).encode()
