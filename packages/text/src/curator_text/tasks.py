"""DocumentBatch: a batch of text documents held as a ``pyarrow.Table``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
from curator.tasks import Task

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DocumentBatch"]


@dataclass
class DocumentBatch(Task[pa.Table]):
    """Documents as an Arrow table (one row per document). ``data`` may also be given as a
    pandas DataFrame; it is converted to Arrow on creation."""

    def __post_init__(self) -> None:
        if not isinstance(self.data, pa.Table):
            try:
                import pandas as pd  # noqa: PLC0415
            except ImportError:  # pragma: no cover
                pd = None
            if pd is not None and isinstance(self.data, pd.DataFrame):
                self.data = pa.Table.from_pandas(self.data, preserve_index=False)
            elif isinstance(self.data, list):
                self.data = pa.Table.from_pylist(self.data)
            elif isinstance(self.data, dict):
                self.data = pa.table(self.data)
            else:
                raise TypeError(f"DocumentBatch {self.task_id}: data must be a pyarrow.Table, a "
                                f"pandas DataFrame, a list of dicts or a dict of columns, got "
                                f"{type(self.data).__name__}")

    @property
    def num_items(self) -> int:
        return self.data.num_rows

    def to_pyarrow(self) -> pa.Table:
        return self.data

    def to_pandas(self) -> pd.DataFrame:
        return self.data.to_pandas()

    def validate(self) -> bool:
        return isinstance(self.data, pa.Table)
