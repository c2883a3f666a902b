"""DocumentModifier and the Modify stage that applies modifiers to columns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from curator import ProcessingStage
from curator.errors import ConfigError
from curator.stages.lifecycle import ensure_setup, overrides

from curator_text.tasks import DocumentBatch

__all__ = ["DocumentModifier", "Modify"]


class DocumentModifier:
    """Base of text modifiers: ``modify_document(text) -> text`` (or
    ``modify_document(**columns)`` when :class:`Modify` gives it several input fields).
    Override ``modify_batch`` to transform a whole Arrow column at once (``vectorized = True``).
    """

    vectorized: bool = False

    @property
    def name(self) -> str:
        """The modifier's name (default: its class name), as in NeMo Curator."""
        return self.__dict__.get("_name") or type(self).__name__

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    def setup(self) -> None:
        """Load resources once per worker."""

    def modify_document(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement modify_document")

    def modify_batch(self, texts: pa.Array) -> pa.Array:
        return pa.array([self.modify_document(t) for t in texts.to_pylist()], pa.string())

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@dataclass
class Modify(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Applies modifiers (DocumentModifiers or plain functions), in order, to columns.

    Parameters (NeMo Curator's):
        modifier_fn: a modifier, a function, or a list of them.
        input_fields: ``"text"`` (one column for every modifier), a list with one column per
            modifier, or a list of lists (several columns per modifier: the modifier is then
            called as ``modify_document(**{column: value})`` per row).
        output_fields: ``None`` (write back into the single input column), one name for all,
            or a list with one name (or ``None``) per modifier.
        text_field: Curator's older spelling of a single ``input_fields`` column.

    Null values in a text column are modified as ``""``.
    """

    modifier_fn: Any = None
    input_fields: str | list[str] | list[list[str]] = "text"
    output_fields: str | list[str | None] | None = None
    name: str = ""
    text_field: str | None = None
    modality = "text"
    kind = "modifier"

    def __post_init__(self) -> None:
        if self.text_field is not None:
            self.input_fields = self.text_field
        mods = self.modifier_fn if isinstance(self.modifier_fn, list | tuple) else [
            self.modifier_fn]
        if not mods:
            raise ConfigError("Modify: modifier_fn is an empty list; give at least one modifier")
        for f in mods:
            if not (isinstance(f, DocumentModifier) or callable(f)):
                raise TypeError(f"Modify: modifier_fn must be a DocumentModifier or a callable, "
                                f"got {type(f).__name__}")
        self._mods: list[DocumentModifier | Callable] = list(mods)
        self._inputs = _input_fields(self.input_fields, len(mods))
        self._outputs = _output_fields(self.output_fields, self._inputs)
        if not self.name or self.name == type(self).__name__:
            names = [_modifier_name(m) for m in mods]
            self.name = names[0] if len(names) == 1 else "modifier_chain_of_" + "_".join(names)
        if not all(isinstance(m, DocumentModifier) and m.vectorized for m in mods):
            self.worker_mode = "process"

    def inputs(self):
        return ["data"], sorted({c for cols in self._inputs for c in cols})

    def outputs(self):
        return ["data"], sorted(set(self._outputs))

    @property
    def has_worker_state(self) -> bool:
        return overrides(self, Modify, "setup", "teardown") or any(
            isinstance(m, DocumentModifier) and overrides(m, DocumentModifier, "setup")
            for m in self._mods)

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        for m in self._mods:
            if isinstance(m, DocumentModifier):
                ensure_setup(m)

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        self._modifier_counts()  # what a failed attempt counted is not this batch's
        for mod, ins, out in zip(self._mods, self._inputs, self._outputs, strict=True):
            missing = [c for c in ins if c not in table.column_names]
            if missing:
                raise KeyError(f"{self.name}: input field(s) {missing} not in columns "
                               f"{table.column_names}")
            col = _apply(mod, table, ins)
            if out in table.column_names:
                table = table.set_column(table.column_names.index(out), out, col)
            else:
                table = table.append_column(out, col)
        for name, counts in self._modifier_counts():
            self.publish_counts(name, counts)  # summed there
        return task.derive(table)

    def _modifier_counts(self) -> list[tuple[str, dict[str, int]]]:
        """The counters the modifiers kept since the last call (their ``drain_counts``, e.g.
        ``PiiModifier``'s entities)."""
        return [item for m in self._mods
                for item in (getattr(m, "drain_counts", dict)() or {}).items()]


def _apply(mod: DocumentModifier | Callable, table: pa.Table, ins: list[str]) -> pa.Array:
    fn = mod.modify_document if isinstance(mod, DocumentModifier) else mod
    if len(ins) > 1:
        rows = table.select(ins).to_pylist()
        return pa.array([fn(**r) for r in rows])
    col = table[ins[0]].combine_chunks()
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or \
            pa.types.is_null(col.type):
        col = pc.fill_null(col.cast(pa.string()), "")
        if isinstance(mod, DocumentModifier):
            return mod.modify_batch(col)
    return pa.array([fn(v) for v in col.to_pylist()])


def _modifier_name(m: DocumentModifier | Callable) -> str:
    return m.name if isinstance(m, DocumentModifier) else getattr(m, "__name__", type(m).__name__)


def _input_fields(fields: Any, n: int) -> list[list[str]]:
    """One list of input columns per modifier (NeMo Curator's rules)."""
    if isinstance(fields, str):
        return [[fields] for _ in range(n)]
    if isinstance(fields, list | tuple) and fields and all(isinstance(x, str) for x in fields):
        if len(fields) == 1:
            return [[fields[0]] for _ in range(n)]
        if len(fields) == n:
            return [[f] for f in fields]
        raise ValueError(f"Modify: {len(fields)} input_fields for {n} modifiers; give 1 or one "
                         f"per modifier (a list of lists for several columns per modifier)")
    if isinstance(fields, list | tuple) and fields and all(isinstance(x, list | tuple)
                                                           for x in fields):
        if len(fields) == 1:
            return [list(fields[0]) for _ in range(n)]
        if len(fields) == n:
            return [list(x) for x in fields]
        raise ValueError(f"Modify: {len(fields)} input field groups for {n} modifiers; give 1 "
                         f"or one per modifier")
    raise TypeError(f"Modify: input_fields must be a str, a list of str or a list of lists, "
                    f"got {fields!r}")


def _output_fields(fields: Any, inputs: list[list[str]]) -> list[str]:
    """One output column per modifier (NeMo Curator's rules)."""
    def in_place(ins: list[str]) -> str:
        if len(ins) == 1:
            return ins[0]
        raise ValueError(f"Modify: a modifier reading several fields {ins} needs an explicit "
                         f"output field (output_fields=...)")

    n = len(inputs)
    if fields is None:
        return [in_place(ins) for ins in inputs]
    if isinstance(fields, str):
        return [fields] * n
    if isinstance(fields, list | tuple):
        if len(fields) == 1:
            return [in_place(ins) if fields[0] is None else fields[0] for ins in inputs]
        if len(fields) == n:
            return [in_place(ins) if f is None else f for f, ins in zip(fields, inputs,
                                                                           strict=True)]
        raise ValueError(f"Modify: {len(fields)} output_fields for {n} modifiers; give 1 or one "
                         f"per modifier")
    raise TypeError(f"Modify: output_fields must be None, a str or a list, got {fields!r}")
