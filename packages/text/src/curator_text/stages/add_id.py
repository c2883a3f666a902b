"""AddId: gives every document a stable id from its source partition and row."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from curator import ProcessingStage

from curator_text.tasks import DocumentBatch

__all__ = ["AddId"]


@dataclass
class AddId(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Adds ``id_field`` = ``"{id_prefix or task_id}_{row}"`` (row numbered from
    ``start_index``). Task ids come from the source files, so ids are the same on every run.
    ``overwrite=False`` raises if the column already exists."""

    id_field: str = "id"
    id_prefix: str | None = None
    start_index: int = 0
    overwrite: bool = False
    name: str = "AddId"
    modality = "text"

    def outputs(self):
        return ["data"], [self.id_field]

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        if self.id_field in table.column_names:
            if not self.overwrite:
                raise ValueError(f"{self.name}: column {self.id_field!r} exists; set "
                                 f"overwrite=True to replace it")
            table = table.drop_columns([self.id_field])
        prefix = f"{self.id_prefix}_{task.task_id}" if self.id_prefix else task.task_id
        ids = pa.array([f"{prefix}_{i}" for i in range(self.start_index,
                                                       self.start_index + table.num_rows)])
        return task.derive(table.append_column(self.id_field, ids))
