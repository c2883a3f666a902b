"""The stage every FineWeb (datatrove) filter shares: decide per document, keep or remove it
with one of the filter's reasons (datatrove's names), count removals per reason in the run
report (counter ``filter_reasons``), and with ``split=True`` send each removed document to the
rejected sink with its reason."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator.stages.filter import FILTERED, FilterStage

from curator_text.filters.base import _set, _texts
from curator_text.tasks import DocumentBatch

__all__ = ["DatatroveFilter", "REASONS_COUNTER"]

REASONS_COUNTER = "filter_reasons"
"""The stage counter of removed documents by reason (``result.stats.stages[i].counters``)."""


class DatatroveFilter(FilterStage[DocumentBatch]):
    """Base of the FineWeb filters. Subclasses list their ``reasons`` and implement
    :meth:`decide`: one code per document (0: keep, ``i``: removed for ``reasons[i - 1]``) and
    optionally the new texts of the documents (filters that edit, e.g. C4's line removal)."""

    modality: ClassVar[str] = "text"
    reasons: ClassVar[tuple[str, ...]] = ()
    text_field: str = "text"
    split: bool = False
    name: str = ""

    def _init_name(self) -> None:
        if not self.name:
            self.name = type(self).__name__

    def inputs(self):
        return ["data"], [self.text_field]

    def outputs(self):
        return ["data"], []

    def column(self, table: pa.Table) -> pa.Array:
        """The column :meth:`decide` reads (default: ``text_field``, nulls as empty text)."""
        return _texts(table, self.text_field, self.name)

    def decide(self, texts: pa.Array) -> tuple[np.ndarray, pa.Array | None]:
        raise NotImplementedError(f"{type(self).__name__} must implement decide")

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        if table.num_rows == 0:
            return task
        codes, new_texts = self.decide(self.column(table))
        codes = np.asarray(codes)
        removed = codes != 0
        if removed.any():
            counts = np.bincount(codes[removed], minlength=len(self.reasons) + 1)
            self.publish_counts(REASONS_COUNTER, {
                self.reasons[i - 1]: int(c) for i, c in enumerate(counts) if i and c})
            if self.split:
                self._reject(task, table, codes, removed)
        if new_texts is not None:
            table = _set(table, self.text_field, new_texts)
        if removed.any():
            table = table.filter(pa.array(~removed))
        return task.derive(table)

    def _reject(self, task: DocumentBatch, table: pa.Table, codes: np.ndarray,
                removed: np.ndarray) -> None:
        rows = table.filter(pa.array(removed)).to_pylist()
        for row, code in zip(rows, codes[removed].tolist(), strict=True):
            reason = self.reasons[code - 1]
            self.reject(task, reason, kind=FILTERED,
                        record={**row, "filter": self.name, "score": reason})


def char_lengths(texts: pa.Array) -> np.ndarray:
    return pc.utf8_length(texts).to_numpy(zero_copy_only=False).astype(np.int64)
