"""DocumentBatch: a batch of text documents, a ``pyarrow.Table`` or a pandas DataFrame."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from curator.tasks import Task

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DocumentBatch"]

# Curator's own packages: code in them reads ``batch.data`` as Arrow (it never pays for pandas).
_BUILTIN = frozenset({"curator", "curator_text", "curator_image", "curator_audio",
                      "curator_video", "curator_web"})


@dataclass
class DocumentBatch(Task["pa.Table | pd.DataFrame"]):
    """Documents, one row per document, held as given (as in NeMo Curator).

    A pandas DataFrame given to the constructor or assigned to ``data`` stays that DataFrame. A
    batch held as a ``pyarrow.Table`` (what Curator's readers and stages produce) shows user code
    a pandas DataFrame on the first read of ``batch.data``, built then and cached; from then on
    that frame is the batch's data, so in-place edits (``batch.data["n"] = ...``) count. Curator's
    own stages read :meth:`to_pyarrow` and never build a DataFrame. A list of dicts or a dict of
    columns is accepted too and stored as Arrow. That view is true when it has rows (``if
    batch.data:``), as the Arrow table NeMo Curator's readers hold.
    """

    def __post_init__(self) -> None:
        if "_table" not in self.__dict__:  # constructed without data
            self.data = None

    def _set_data(self, value: Any) -> None:
        d = self.__dict__
        d["_rows"] = None
        if isinstance(value, pa.Table):
            d["_table"], d["_frame"] = value, None
        elif _is_frame(value):
            d["_table"], d["_frame"] = None, value
        else:
            d["_table"], d["_frame"] = _to_arrow(value, d.get("task_id", "")), None

    # -- a selection of rows (Curator's filter stages: no copy of the table per filter) ----------
    def selection(self) -> tuple[pa.Table, np.ndarray | None]:
        """``(table, rows)``: the documents are ``table``'s ``rows`` (int64 indices, in order),
        or all of ``table`` when ``rows`` is ``None``. For Curator's own stages."""
        d = self.__dict__
        if d["_frame"] is not None:
            return self.to_pyarrow(), None
        return d["_table"], d.get("_rows")

    def with_selection(self, table: pa.Table, rows: np.ndarray | None) -> DocumentBatch:
        """A new batch of ``table``'s ``rows`` (see :meth:`selection`); they are taken out of
        ``table`` when anything reads the batch's data."""
        out = self.derive(table)
        out.__dict__["_rows"] = None if rows is None else np.asarray(rows, dtype=np.int64)
        return out

    def _materialize(self) -> None:
        d = self.__dict__
        rows = d.get("_rows")
        if rows is not None:
            d["_table"], d["_rows"] = d["_table"].take(rows), None

    def __getstate__(self) -> dict[str, Any]:  # only the selected rows cross a pipe (taken)
        self._materialize()
        return self.__dict__

    def _get_data(self) -> pa.Table | pd.DataFrame:
        self._materialize()
        d = self.__dict__
        if d["_frame"] is not None:
            if _builtin_caller():
                return self.to_pyarrow()
            return d["_frame"]
        if _builtin_caller():
            return d["_table"]
        from curator_text._frame import DocumentFrame

        # the user's view; it is the data from now on
        d["_frame"] = DocumentFrame(d["_table"].to_pandas(), copy=False)
        d["_table"] = None
        return d["_frame"]

    @property
    def num_items(self) -> int:
        d = self.__dict__
        if d.get("_rows") is not None:
            return len(d["_rows"])
        return len(d["_frame"]) if d["_frame"] is not None else d["_table"].num_rows

    def to_pyarrow(self) -> pa.Table:
        """The documents as a ``pyarrow.Table`` (no copy when held as Arrow; a DataFrame is
        converted on each call, without its index, so edits to it are always seen)."""
        self._materialize()
        frame = self.__dict__["_frame"]
        if frame is None:
            return self.__dict__["_table"]
        return pa.Table.from_pandas(frame, preserve_index=False)

    def to_pandas(self) -> pd.DataFrame:
        """The documents as a pandas DataFrame: the batch's own frame when it holds one, else a
        new frame converted from Arrow (as in NeMo Curator)."""
        self._materialize()
        frame = self.__dict__["_frame"]
        return frame if frame is not None else self.__dict__["_table"].to_pandas()

    def get_columns(self) -> list[str]:
        """The column names (NeMo Curator's method)."""
        frame = self.__dict__["_frame"]
        return [str(c) for c in frame.columns] if frame is not None else \
            self.__dict__["_table"].column_names

    @property
    def is_pandas(self) -> bool:
        """Whether the batch currently holds a pandas DataFrame (else a ``pyarrow.Table``)."""
        return self.__dict__["_frame"] is not None

    def validate(self) -> bool:
        return self.__dict__["_frame"] is not None or isinstance(self.__dict__["_table"], pa.Table)

    def _content_id(self) -> str:
        table = self.to_pyarrow()
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        digest = hashlib.blake2b(sink.getvalue().to_pybytes(), digest_size=8)
        digest.update(self.dataset_name.encode())
        return digest.hexdigest()


# ``data`` stays a dataclass field (constructor, ``fields()``, ``replace()``) backed by the
# property below; the class attribute is set after @dataclass so it is not taken as a default.
DocumentBatch.data = property(DocumentBatch._get_data, DocumentBatch._set_data,  # type: ignore
                              doc="The documents: a pandas DataFrame for user code, see the class.")


def _builtin_caller() -> bool:
    """Whether the code reading ``batch.data`` (two frames up) belongs to a Curator package."""
    name = sys._getframe(2).f_globals.get("__name__", "")
    return name.partition(".")[0] in _BUILTIN


def _is_frame(value: Any) -> bool:
    pd = sys.modules.get("pandas")  # a DataFrame can only exist once pandas is imported
    return pd is not None and isinstance(value, pd.DataFrame)


def _to_arrow(data: Any, task_id: str) -> pa.Table:
    if data is None:
        return pa.table({})
    if isinstance(data, list):
        return pa.Table.from_pylist(data)
    if isinstance(data, dict):
        return pa.table(data)
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    raise TypeError(f"DocumentBatch {task_id}: data must be a pyarrow.Table, a pandas DataFrame, "
                    f"a list of dicts or a dict of columns, got {type(data).__name__}")
