"""DocumentFilter (the scoring/keeping logic) and the stages that apply it: ScoreFilter,
Score and Filter. Filters score a whole column at once through ``score_batch`` (vectorised with
``pyarrow.compute`` where possible) and decide with ``keep_batch``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator import ProcessingStage

from curator_text.tasks import DocumentBatch

__all__ = ["DocumentFilter", "ScoreFilter", "Score", "Filter"]


class DocumentFilter:
    """Base of all document filters: ``score_document(text) -> score`` and
    ``keep_document(score) -> bool``. Override ``score_batch`` / ``keep_batch`` to work on a whole
    Arrow column at once. ``vectorized = False`` marks pure-Python filters (run in processes)."""

    vectorized: ClassVar[bool] = False

    def __init__(self) -> None:
        self._name = type(self).__name__

    @property
    def name(self) -> str:
        return getattr(self, "_name", type(self).__name__)

    def setup(self) -> None:
        """Load models or resources (called once per worker by the stage)."""

    def score_document(self, text: str) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement score_document")

    def keep_document(self, score: Any) -> bool:
        raise NotImplementedError(f"{type(self).__name__} must implement keep_document")

    def score_batch(self, texts: pa.ChunkedArray | pa.Array) -> pa.Array | np.ndarray | list:
        """Scores of a column of texts (nulls count as empty text)."""
        return [self.score_document(t if t is not None else "") for t in texts.to_pylist()]

    def score_batch_with_extras(self, texts: pa.ChunkedArray | pa.Array
                                ) -> tuple[Any, dict[str, Any]]:
        """Scores plus extra columns to add (e.g. a label); default: no extras."""
        return self.score_batch(texts), {}

    def keep_batch(self, scores: pa.Array) -> pa.Array | np.ndarray:
        """A boolean mask of the documents to keep."""
        return np.fromiter((bool(self.keep_document(s)) for s in scores.to_pylist()), bool,
                           count=len(scores))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _as_array(values: Any) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    if isinstance(values, pa.Array):
        return values
    return pa.array(values)


def _texts(table: pa.Table, field: str, stage: str) -> pa.Array:
    if field not in table.column_names:
        raise KeyError(f"{stage}: text_field {field!r} not in columns {table.column_names}")
    col = table[field]
    if not pa.types.is_string(col.type) and not pa.types.is_large_string(col.type):
        col = col.cast(pa.string())
    if col.null_count:
        col = pc.fill_null(col, "")
    return col.combine_chunks()


@dataclass
class ScoreFilter(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Scores each document with ``filter_obj``, optionally stores the score in ``score_field``,
    and keeps the documents it accepts (``invert=True`` keeps the others).

    Parameters:
        filter_obj: a :class:`DocumentFilter`.
        text_field: the column to score (default ``"text"``).
        score_field: column for the score (default: not stored).
        invert: keep the documents the filter rejects.
        split: instead of dropping, send removed documents to the rejected sink
            (``kind="filtered"``) with the filter's name and score.
    """

    filter_obj: DocumentFilter | None = None
    text_field: str = "text"
    score_field: str | None = None
    invert: bool = False
    split: bool = False
    name: str = ""
    modality = "text"
    kind = "filter"
    _score: ClassVar[bool] = True
    _filter: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not isinstance(self.filter_obj, DocumentFilter):
            raise TypeError(f"{type(self).__name__}: filter_obj must be a DocumentFilter, got "
                            f"{type(self.filter_obj).__name__}")
        if not self.name or self.name == type(self).__name__:
            self.name = f"{type(self).__name__}[{self.filter_obj.name}]"
        if not self.filter_obj.vectorized:
            self.worker_mode = "process"
            self.batch_size = max(self.batch_size, 1)

    def inputs(self):
        return ["data"], [self.text_field]

    def outputs(self):
        cols = [self.score_field] if self.score_field and self._score else []
        return ["data"], cols

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        self.filter_obj.setup()

    def process(self, task: DocumentBatch) -> DocumentBatch | None:
        table = task.to_pyarrow()
        if table.num_rows == 0:
            return task
        texts = _texts(table, self.text_field, self.name)
        scores, extras = self.filter_obj.score_batch_with_extras(texts)
        scores = _as_array(scores)
        if self._score:
            for col, values in extras.items():
                table = _set(table, col, _as_array(values))
            if self.score_field:
                table = _set(table, self.score_field, scores)
        if not self._filter:
            return task.derive(table)
        keep = _as_array(self.filter_obj.keep_batch(scores))
        if self.invert:
            keep = pc.invert(keep)
        keep = pc.fill_null(keep, False)
        if self.split:
            self._reject_dropped(task, table, scores, keep)
        if pc.all(keep).as_py():
            return task.derive(table)
        return task.derive(table.filter(keep))

    def _reject_dropped(self, task: DocumentBatch, table: pa.Table, scores: pa.Array,
                        keep: pa.Array) -> None:
        dropped = pc.invert(keep)
        rows = table.filter(dropped).to_pylist()
        for row, score in zip(rows, scores.filter(dropped).to_pylist(), strict=True):
            self.reject(task, f"filtered by {self.filter_obj.name}", kind="filtered",
                        record={**row, "filter": self.filter_obj.name, "score": score})


def _set(table: pa.Table, col: str, values: pa.Array) -> pa.Table:
    if col in table.column_names:
        return table.set_column(table.column_names.index(col), col, values)
    return table.append_column(col, values)


@dataclass
class Score(ScoreFilter):
    """Adds the score of ``filter_obj`` (``score_fn``) as ``score_field`` without dropping."""

    score_field: str | None = "score"
    _filter: ClassVar[bool] = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.score_field:
            raise ValueError(f"{self.name}: score_field is required")


@dataclass
class Filter(ScoreFilter):
    """Keeps documents whose existing ``score_field`` column ``filter_obj.keep_batch`` accepts."""

    score_field: str | None = "score"
    _score: ClassVar[bool] = False

    def inputs(self):
        return ["data"], [self.score_field]

    def process(self, task: DocumentBatch) -> DocumentBatch | None:
        table = task.to_pyarrow()
        if table.num_rows == 0:
            return task
        if self.score_field not in table.column_names:
            raise KeyError(f"{self.name}: score_field {self.score_field!r} not in columns")
        scores = table[self.score_field].combine_chunks()
        keep = pc.fill_null(_as_array(self.filter_obj.keep_batch(scores)), False)
        if self.invert:
            keep = pc.invert(keep)
        if self.split:
            self._reject_dropped(task, table, scores, keep)
        return task.derive(table.filter(keep))
