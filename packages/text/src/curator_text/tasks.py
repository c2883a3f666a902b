"""DocumentBatch: a batch of text documents held as a ``pyarrow.Table``."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from curator.tasks import Task

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DocumentBatch"]


@dataclass
class DocumentBatch(Task[pa.Table]):
    """Documents as an Arrow table (one row per document).

    ``data`` may be given (or later assigned) as a pandas DataFrame, a list of dicts or a dict of
    columns; it is converted to a ``pyarrow.Table`` at once, so ``batch.data`` is always Arrow.
    NeMo Curator's constructor works unchanged:
    ``DocumentBatch(data=df, dataset_name="d", _metadata=..., _stage_perf=...)``.
    """

    def __post_init__(self) -> None:
        self.data = self.data  # __setattr__ converts

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "data" and not isinstance(value, pa.Table):
            value = _to_arrow(value, getattr(self, "task_id", ""))
        object.__setattr__(self, name, value)

    @property
    def num_items(self) -> int:
        return self.data.num_rows

    def to_pyarrow(self) -> pa.Table:
        return self.data

    def to_pandas(self) -> pd.DataFrame:
        return self.data.to_pandas()

    def get_columns(self) -> list[str]:
        """The column names (NeMo Curator's method)."""
        return self.data.column_names

    def validate(self) -> bool:
        return isinstance(self.data, pa.Table)

    def _content_id(self) -> str:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, self.data.schema) as writer:
            writer.write_table(self.data)
        digest = hashlib.blake2b(sink.getvalue().to_pybytes(), digest_size=8)
        digest.update(self.dataset_name.encode())
        return digest.hexdigest()


def _to_arrow(data: Any, task_id: str) -> pa.Table:
    try:
        import pandas as pd  # noqa: PLC0415
    except ImportError:  # pragma: no cover
        pd = None
    if pd is not None and isinstance(data, pd.DataFrame):
        return pa.Table.from_pandas(data, preserve_index=False)
    if isinstance(data, list):
        return pa.Table.from_pylist(data)
    if isinstance(data, dict):
        return pa.table(data)
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    raise TypeError(f"DocumentBatch {task_id}: data must be a pyarrow.Table, a pandas DataFrame, "
                    f"a list of dicts or a dict of columns, got {type(data).__name__}")
