"""AddId: gives every document an id from its task id and row, as NeMo Curator does."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from curator import ProcessingStage

from curator_text.tasks import DocumentBatch

__all__ = ["AddId"]


@dataclass
class AddId(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Adds ``id_field`` = ``"{id_prefix}_{task_id}_{row}"`` (``"{task_id}_{row}"`` without a
    prefix), rows numbered from ``start_index`` (0, as NeMo Curator). Task ids come from the
    source files, so ids are the same on every run.

    Parameters:
        id_field: the column to write (NeMo Curator requires it; default ``"id"``).
        id_prefix: put before the task id.
        overwrite: replace an existing ``id_field`` column (else a ``ValueError``).
        start_index: the first row number (a Curator addition).
    """

    id_field: str = "id"
    id_prefix: str | None = None
    overwrite: bool = False
    start_index: int = 0
    name: str = "add_id"
    modality = "text"

    def inputs(self):
        return ["data"], []

    def outputs(self):
        return ["data"], [self.id_field]

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        if self.id_field in table.column_names:
            if not self.overwrite:
                # NeMo Curator's message, which users' code matches
                raise ValueError(f"Column '{self.id_field}' already exists. Set overwrite=True "
                                 f"to replace it.")
            table = table.drop_columns([self.id_field])
        prefix = f"{self.id_prefix}_{task.task_id}" if self.id_prefix else task.task_id
        ids = pa.array([f"{prefix}_{i}" for i in range(self.start_index,
                                                       self.start_index + table.num_rows)],
                       pa.string())
        return task.derive(table.append_column(self.id_field, ids))
