"""DocumentModifier and the Modify stage that applies modifiers to columns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from curator import ProcessingStage
from curator.errors import ConfigError
from curator.params import ParameterTypeError, init_signature, typed_new
from curator.stages.lifecycle import ensure_setup, overrides

from curator_text.tasks import DocumentBatch

__all__ = ["DocumentModifier", "Modify"]


class DocumentModifier:
    """Base of text modifiers: ``modify_document(text) -> text`` (or
    ``modify_document(**columns)`` when :class:`Modify` gives it several input fields).
    Override ``modify_batch`` to transform a whole Arrow column at once (``vectorized = True``).
    """

    vectorized: bool = False

    __new__, __signature__ = typed_new, init_signature  # types checked as in specs

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
        return _column([self.modify_document(t) for t in texts.to_pylist()])

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
    input_fields: str | list[str] | list[list[str]] | None = "text"
    output_fields: str | list[str | None] | None = None
    name: str = ""
    text_field: str | None = None
    modality = "text"
    kind = "modifier"

    def __post_init__(self) -> None:
        if self.text_field is not None:
            self.input_fields = self.text_field
        if self.input_fields is None:
            raise ConfigError("Input field cannot be None")
        # NeMo Curator's attributes: modifier_fn as a list, one column list and one output per
        # modifier in _input_fields / _output_fields
        self.modifier_fn = _normalize_modifiers(self.modifier_fn)
        self._input_fields = _normalize_input_fields(self.input_fields, self.modifier_fn)
        self._output_fields = _normalize_output_fields(self.output_fields, self._input_fields,
                                                       self.modifier_fn)
        if not self.name or self.name == type(self).__name__:
            names = [_modifier_name(m) for m in self.modifier_fn]
            self.name = names[0] if len(names) == 1 else "modifier_chain_of_" + "_".join(names)
        if not all(isinstance(m, DocumentModifier) and m.vectorized for m in self.modifier_fn):
            self.worker_mode = "process"

    def inputs(self):
        return ["data"], sorted({c for cols in self._input_fields for c in cols})

    def outputs(self):
        return ["data"], sorted(set(self._output_fields))

    @property
    def has_worker_state(self) -> bool:
        return overrides(self, Modify, "setup", "teardown") or any(
            isinstance(m, DocumentModifier) and overrides(m, DocumentModifier, "setup")
            for m in self.modifier_fn)

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        for m in self.modifier_fn:
            if isinstance(m, DocumentModifier):
                ensure_setup(m)

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        self._modifier_counts()  # what a failed attempt counted is not this batch's
        for mod, ins, out in zip(self.modifier_fn, self._input_fields, self._output_fields,
                                 strict=True):
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
        return [item for m in self.modifier_fn
                for item in (getattr(m, "drain_counts", dict)() or {}).items()]


def _apply(mod: DocumentModifier | Callable, table: pa.Table, ins: list[str]) -> pa.Array:
    fn = mod.modify_document if isinstance(mod, DocumentModifier) else mod
    if len(ins) > 1:
        rows = table.select(ins).to_pylist()
        return _column([fn(**r) for r in rows])
    col = table[ins[0]].combine_chunks()
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or \
            pa.types.is_null(col.type):
        col = pc.fill_null(col.cast(pa.string()), "")
        if isinstance(mod, DocumentModifier):
            return mod.modify_batch(col)
    return _column([fn(v) for v in col.to_pylist()])


def _column(values: list[Any]) -> pa.Array:
    """A modifier's results as a column: strings stay ``string`` (also when empty or all null);
    any other type (ints, lists, dicts) keeps its own type, as NeMo Curator's pandas ``apply``."""
    if all(v is None or isinstance(v, str) for v in values):
        return pa.array(values, pa.string())
    return pa.array(values)


def _modifier_name(m: DocumentModifier | Callable) -> str:
    return m.name if isinstance(m, DocumentModifier) else getattr(m, "__name__", type(m).__name__)


def _normalize_modifiers(modifier_fn: Any) -> list[DocumentModifier | Callable]:
    """``modifier_fn`` as a non-empty list of modifiers (NeMo Curator's rules and messages)."""
    mods = list(modifier_fn) if isinstance(modifier_fn, list | tuple) else [modifier_fn]
    if not mods:
        raise ConfigError("modifier_fn list cannot be empty")
    if any(not (isinstance(m, DocumentModifier) or callable(m)) for m in mods):
        raise ParameterTypeError("Each modifier must be a DocumentModifier or callable")
    return mods


def _normalize_input_fields(fields: Any, modifiers: list[Any]) -> list[list[str]]:
    """One list of input columns per modifier (NeMo Curator's rules, signature and messages)."""
    n = len(modifiers)
    if isinstance(fields, str):
        return [[fields] for _ in range(n)]
    if isinstance(fields, list | tuple) and all(isinstance(x, str) for x in fields):
        if len(fields) == 1:
            return [[fields[0]] for _ in range(n)]
        if len(fields) == n:
            return [[f] for f in fields]
        raise ConfigError(f"Number of input fields ({len(fields)}) must be 1 or equal to number "
                          f"of modifiers ({n}). For multi-input per modifier, pass a list of "
                          f"lists.")
    if isinstance(fields, list | tuple) and all(isinstance(x, list | tuple) for x in fields):
        if len(fields) == 1:
            return [list(fields[0]) for _ in range(n)]
        if len(fields) == n:
            return [list(x) for x in fields]
        raise ConfigError(f"Number of input field groups ({len(fields)}) must be 1 or equal to "
                          f"number of modifiers ({n})")
    raise ParameterTypeError("input_fields must be str, list[str], or list[list[str]]")


def _normalize_output_fields(fields: Any, inputs: list[list[str]],
                             modifiers: list[Any]) -> list[str]:
    """One output column per modifier (NeMo Curator's rules, signature and messages)."""
    def in_place(ins: list[str]) -> str:
        if len(ins) == 1:
            return ins[0]
        raise ConfigError("Implicit in-place (None) not allowed for a modifier with multiple "
                          "input fields. Provide an explicit output column.")

    n = len(modifiers)
    if fields is None:
        if all(len(ins) == 1 for ins in inputs):
            return [ins[0] for ins in inputs]
        raise ConfigError("output_fields must be provided when any modifier has multiple input "
                          "fields. Provide a single name to reuse or a list[str] with one name "
                          "per modifier.")
    if isinstance(fields, str):
        return [fields] * n
    if isinstance(fields, list | tuple):
        if len(fields) == 1:
            return [in_place(ins) if fields[0] is None else fields[0] for ins in inputs]
        if len(fields) == n:
            return [in_place(ins) if f is None else f for f, ins in zip(fields, inputs,
                                                                           strict=True)]
        raise ConfigError(f"Number of output fields ({len(fields)}) must be 1 or equal to number "
                          f"of modifiers ({n})")
    raise ParameterTypeError("output_field must be str, list[str | None], or None")
