"""DocumentModifier and the Modify stage that applies modifiers to a text column."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from curator import ProcessingStage

from curator_text.tasks import DocumentBatch

__all__ = ["DocumentModifier", "Modify"]


class DocumentModifier:
    """Base of text modifiers: ``modify_document(text) -> text``. Override ``modify_batch`` to
    transform a whole Arrow column at once (``vectorized = True``)."""

    vectorized: bool = False

    def setup(self) -> None:
        """Load resources once per worker."""

    def modify_document(self, text: str) -> str:
        raise NotImplementedError(f"{type(self).__name__} must implement modify_document")

    def modify_batch(self, texts: pa.Array) -> pa.Array:
        return pa.array([self.modify_document(t) for t in texts.to_pylist()], pa.string())

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _Fn(DocumentModifier):
    def __init__(self, fn: Callable[[str], str]) -> None:
        self._fn = fn

    def modify_document(self, text: str) -> str:
        return self._fn(text)


@dataclass
class Modify(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Applies ``modifier_fn`` (a DocumentModifier, a ``str -> str`` function, or a list of
    them, in order) to ``text_field``.

    Parameters:
        modifier_fn: the modifier(s).
        text_field: the column to modify (default ``"text"``); a list pairs with a list of
            modifiers.
    """

    modifier_fn: Any = None
    text_field: str = "text"
    name: str = ""
    modality = "text"
    kind = "modifier"

    def __post_init__(self) -> None:
        fns = self.modifier_fn if isinstance(self.modifier_fn, list | tuple) else [
            self.modifier_fn]
        mods = []
        for f in fns:
            if isinstance(f, DocumentModifier):
                mods.append(f)
            elif callable(f):
                mods.append(_Fn(f))
            else:
                raise TypeError(f"Modify: modifier_fn must be a DocumentModifier or a callable, "
                                f"got {type(f).__name__}")
        self._mods = mods
        if not self.name or self.name == type(self).__name__:
            self.name = "Modify[" + ",".join(type(m).__name__ for m in mods) + "]"
        if not all(m.vectorized for m in mods):
            self.worker_mode = "process"

    def inputs(self):
        return ["data"], [self.text_field]

    def outputs(self):
        return ["data"], [self.text_field]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        for m in self._mods:
            m.setup()

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        if self.text_field not in table.column_names:
            raise KeyError(f"{self.name}: text_field {self.text_field!r} not in columns "
                           f"{table.column_names}")
        col = pc.fill_null(table[self.text_field].combine_chunks(), "")
        for m in self._mods:
            col = m.modify_batch(col)
        idx = table.column_names.index(self.text_field)
        return task.derive(table.set_column(idx, self.text_field, col))
