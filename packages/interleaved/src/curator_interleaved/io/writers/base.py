"""BaseInterleavedWriter: what the interleaved writers share.

One file per task, named after the task id (deterministic: a re-run replaces its own file, resume
skips partitions already written), written atomically (a temporary name, renamed when whole), and
noted in the output directory's run manifest; the directory follows NeMo Curator's save modes
(:mod:`curator.output_dir`).

With ``materialize_on_write`` (default) image rows without bytes are fetched first. A row whose
bytes cannot be had is handled by ``on_materialize_error``: ``"reject"`` (default) sends it to the
rejected sink with its reason and writes the rest; ``"drop_sample"`` rejects its whole document;
``"warn"`` writes it without bytes (its ``materialize_error`` set); ``"error"`` fails the task
(kept whole by the executor). NeMo Curator's ``"drop_row"`` is ``"reject"``: nothing is dropped
without a record.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import pyarrow as pa
import pyarrow.compute as pc
from curator import FileGroupTask, ProcessingStage
from curator.errors import ConfigError
from curator.io import register_storage_options
from curator.output_dir import DEFAULT_MODE, ManagedOutput, SaveMode, check_mode

from curator_interleaved.tasks import InterleavedBatch
from curator_interleaved.utils.materialization import materialize_table
from curator_interleaved.utils.schema import align_table, reconcile_schema, resolve_schema
from curator_interleaved.utils.validation_utils import resolve_storage_options

__all__ = ["BaseInterleavedWriter", "ON_MATERIALIZE_ERROR"]

logger = logging.getLogger(__name__)

ON_MATERIALIZE_ERROR = ("reject", "drop_row", "drop_sample", "warn", "error")


@dataclass
class BaseInterleavedWriter(ManagedOutput, ProcessingStage[InterleavedBatch, FileGroupTask]):
    """Base of the interleaved writers (see the module doc). Subclasses implement
    :meth:`write_table`.

    Parameters:
        path: the output directory (local or fsspec URL).
        write_kwargs: ``storage_options`` (fsspec) for ``path`` and format options.
        materialize_on_write: fetch missing image bytes before writing.
        mode: save mode: ``"ignore"`` (default), ``"overwrite"``, ``"append"`` or ``"error"``.
        on_materialize_error: see the module doc.
        schema, schema_overrides: align the written table to this schema (default: user
            columns kept, reserved ones at their canonical types).
    """

    path: str = ""
    file_extension: str = ""
    write_kwargs: dict[str, Any] = field(default_factory=dict)
    materialize_on_write: bool = True
    name: str = "base_interleaved_writer"
    mode: SaveMode = DEFAULT_MODE
    on_materialize_error: Literal["reject", "drop_row", "drop_sample", "warn", "error"] = "reject"
    schema: pa.Schema | None = None
    schema_overrides: dict[str, pa.DataType] | None = None
    modality: ClassVar[str] = "interleaved"
    kind: ClassVar[str] = "writer"

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError(f"{self.name}: path (the output directory) is required")
        check_mode(self.mode, self.name)
        if self.on_materialize_error not in ON_MATERIALIZE_ERROR:
            raise ConfigError(f"{self.name}: on_materialize_error must be one of "
                              f"{ON_MATERIALIZE_ERROR}, got {self.on_materialize_error!r}")
        if self.schema is not None or self.schema_overrides is not None:
            self.schema = resolve_schema(self.schema, self.schema_overrides)
        self.write_kwargs = dict(self.write_kwargs or {})
        register_storage_options(self.path, self.storage_options or None)

    @property
    def storage_options(self) -> dict[str, Any]:
        return dict((self.write_kwargs or {}).get("storage_options") or {})

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    # -- materialisation -----------------------------------------------------------------------
    def _materialized(self, task: InterleavedBatch) -> pa.Table:
        table = task.to_pyarrow()
        if self.materialize_on_write and table.num_rows:
            with self._time_metric("materialize_fetch_binary_s"):
                table = materialize_table(
                    table, storage_options=resolve_storage_options(task, self.write_kwargs))
        if "materialize_error" not in table.column_names:
            return table
        errors = pc.is_valid(table["materialize_error"])
        n_err = int(pc.sum(errors).as_py() or 0)
        self._log_metric("materialize_errors", float(n_err))
        if n_err == 0 or self.on_materialize_error == "warn":
            return table
        bad = table.filter(errors)
        if self.on_materialize_error == "error":
            first = bad["materialize_error"][0].as_py()
            raise RuntimeError(f"{self.name}: Materialization failed ({n_err} errors). First: "
                               f"{first}. Set on_materialize_error='reject' to write the other "
                               f"rows and send these to the rejected sink")
        if self.on_materialize_error == "drop_sample":
            ids = pc.unique(bad["sample_id"])
            drop = pc.is_in(table["sample_id"], ids)
            for sid in ids.to_pylist():
                rows = bad.filter(pc.equal(bad["sample_id"], sid))
                self.reject(task, "image_unavailable", error=rows["materialize_error"][0].as_py(),
                            record={"sample_id": sid, "rows": int(pc.sum(pc.equal(
                                table["sample_id"], sid)).as_py())})
            return table.filter(pc.invert(drop))
        for rec in bad.drop_columns(["binary_content"]).to_pylist():
            self.reject(task, "image_unavailable", error=rec["materialize_error"], record=rec)
        return table.filter(pc.invert(errors))

    def _aligned(self, table: pa.Table) -> pa.Table:
        if self.schema is not None:
            return align_table(table, self.schema)
        target = reconcile_schema(table.schema)
        return table if target.equals(table.schema) else table.cast(target)

    def _align_output(self, df: Any) -> Any:
        """NeMo Curator's method: ``df`` (pandas) aligned to the writer's schema."""
        import pandas as pd

        table = self._aligned(pa.Table.from_pandas(df, preserve_index=False))
        return table.to_pandas(types_mapper=pd.ArrowDtype)

    @staticmethod
    def file_stem(task: InterleavedBatch) -> str:
        """The output file's name without extension: the task id (deterministic). A task built
        without an id is named by a hash of its ``source_files`` metadata, and one without
        those by a random UUID (NeMo Curator's fallback), so two such tasks never overwrite
        each other's file."""
        if task.task_id:
            return task.task_id
        files = task.metadata.get("source_files")
        if files:
            digest = hashlib.sha256(json.dumps([str(f) for f in files]).encode()).hexdigest()
            return digest[:32]
        logger.warning("task without task_id or source_files: naming its file by a random UUID")
        return uuid.uuid4().hex

    def _write_dataframe(self, df: Any, file_path: str, write_kwargs: dict[str, Any]) -> None:
        """NeMo Curator's abstract write method; Curator's writers implement
        :meth:`write_table`."""
        raise NotImplementedError(f"{type(self).__name__}: _write_dataframe is NeMo Curator's "
                                  f"hook; Curator's interleaved writers implement write_table")

    def write_table(self, table: pa.Table, file_path: str) -> None:
        """Write ``table`` to ``file_path`` atomically (format-specific)."""
        raise NotImplementedError(f"{type(self).__name__} must implement write_table")

    def process(self, task: InterleavedBatch) -> FileGroupTask:
        register_storage_options(self.path, self.storage_options or None)  # in this worker too
        table = self._aligned(self._materialized(task))
        out = self.output_file(f"{self.file_stem(task)}.{self.file_extension}")
        with self._time_metric(f"{self.file_extension}_write_s"):
            self.write_table(table, out)
        self._log_metrics({"rows_out": float(table.num_rows)})
        return FileGroupTask(task_id=task.task_id, dataset_name=task.dataset_name, data=[out],
                             metadata={**task.metadata, "format": self.file_extension,
                                       "num_rows": table.num_rows},
                             stage_perf=list(task.stage_perf))
