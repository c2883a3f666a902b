"""DocumentFilter (the scoring/keeping logic) and the stages that apply it: ScoreFilter,
Score and Filter. Filters score a whole column at once through ``score_batch`` (vectorised with
``pyarrow.compute`` where possible) and decide with ``keep_batch``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from curator.errors import ConfigError
from curator.params import init_signature, typed_new
from curator.stages.filter import FilterStage, numeric_bounds, reject_filtered
from curator.stages.lifecycle import ensure_setup, overrides

from curator_text.filters._vec import TextView, np_bool, pc, text_view, to_arrow, to_numpy
from curator_text.tasks import DocumentBatch

__all__ = ["DocumentFilter", "FunctionFilter", "ScoreFilter", "Score", "Filter"]


class DocumentFilter:
    """Base of all document filters: ``score_document(text) -> score`` and
    ``keep_document(score) -> bool``. Override ``score_batch`` / ``keep_batch`` to work on a whole
    Arrow column at once. ``vectorized = False`` marks pure-Python filters (run in processes)."""

    vectorized: ClassVar[bool] = False

    __new__, __signature__ = typed_new, init_signature  # types checked as in specs

    def __init__(self) -> None:
        self._name = type(self).__name__

    @property
    def name(self) -> str:
        return getattr(self, "_name", type(self).__name__)

    # Pre-split sentences / paragraphs and pre-computed n-grams a caller may set (NeMo
    # Curator's attributes; unused here).
    sentences: list | None = None
    paragraphs: list | None = None
    ngrams: dict | None = None

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


def _view_scorer(flt: DocumentFilter) -> Callable[[TextView], np.ndarray] | None:
    """The compiled scoring of a built-in filter over a :class:`TextView` (a selection of a
    batch's rows: no copy), or ``None`` (a subclass, a per-document filter: it gets a table)."""
    scorer = type(flt).__dict__.get("_score_view")
    return scorer.__get__(flt) if scorer is not None and flt.vectorized else None


def _as_array(values: Any) -> pa.Array:
    return to_arrow(values)


def _texts(table: pa.Table, field: str, stage: str) -> pa.Array:
    if field not in table.column_names:
        raise KeyError(f"{stage}: text_field {field!r} not in columns {table.column_names}")
    col = table[field]
    if not pa.types.is_string(col.type) and not pa.types.is_large_string(col.type):
        col = col.cast(pa.string())
    if col.null_count:
        col = pc.fill_null(col, "")
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()  # one chunk: no copy


class FunctionFilter(DocumentFilter):
    """A plain function as a filter: ``score_fn(text) -> score`` (for :class:`Score`) or
    ``keep_fn(value) -> bool`` (for :class:`Filter`)."""

    def __init__(self, score_fn: Callable[[Any], Any] | None = None,
                 keep_fn: Callable[[Any], bool] | None = None) -> None:
        super().__init__()
        self._score_fn, self._keep_fn = score_fn, keep_fn
        self._name = getattr(score_fn or keep_fn, "__name__", "function")

    def score_document(self, text: str) -> Any:
        return self._score_fn(text)

    def keep_document(self, score: Any) -> bool:
        return bool(self._keep_fn(score)) if self._keep_fn is not None else True


@dataclass
class _Step:
    filter: DocumentFilter
    field: str
    score_field: str | None
    invert: bool


def _as_list(value: Any, n: int, what: str, stage: str, kind: type) -> list:
    """NeMo Curator's rules: one value is used for every filter; a list needs one per filter."""
    if isinstance(value, list):
        if len(value) == 1:
            value = value * n
        if len(value) != n:
            raise ConfigError(f"{stage}: {what} has {len(value)} entries for {n} filters; give "
                             f"one per filter or a single {kind.__name__}")
        return value
    if isinstance(value, kind) or value is None:
        return [value] * n
    raise TypeError(f"{stage}: {what} must be a {kind.__name__} or a list of them, got "
                    f"{type(value).__name__}")


_LOAD_HOOKS = ("load_model", "load_tokenizer")
"""NeMo Curator's loading hooks of a filter, called once per worker after its ``setup``."""


class _FilterStage(FilterStage[DocumentBatch]):
    """Core's filter contract (:class:`curator.stages.filter.FilterStage`) on whole Arrow columns:
    applies a chain of ``_Step``s in order, score (optionally stored) then keep, and sends removed
    documents to the sink through the shared ``reject_filtered`` with ``split=True``. Set by the
    dataclasses below through ``_init_steps``."""

    modality = "text"
    _score: ClassVar[bool] = True
    _filter: ClassVar[bool] = True
    split: bool = False

    def _init_steps(self, filters: Any, fields: Any, score_fields: Any, invert: Any,
                    wrap: Callable[[Callable], DocumentFilter] | None, what: str) -> None:
        stage = type(self).__name__
        many = isinstance(filters, list)
        items = filters if many else [filters]
        if not items:
            raise ConfigError(f"{stage}: {what} is an empty list")
        objs = []
        for f in items:
            if not isinstance(f, DocumentFilter):
                if wrap is None or not callable(f):
                    kinds = "a DocumentFilter" + (" or a function" if wrap else "")
                    raise TypeError(f"{stage}: {what} must be {kinds} (or a list of them), got "
                                    f"{type(f).__name__}")
                f = wrap(f)
            objs.append(f)
        n = len(objs)
        if many and n > 1 and (isinstance(score_fields, str) or (
                isinstance(score_fields, list) and len(score_fields) == 1)):
            raise ConfigError(f"{stage}: score_field must be a list with one name per filter "
                             f"when {what} is a list")
        if not many and isinstance(score_fields, list) and len(score_fields) > 1:
            raise ConfigError(f"{stage}: {len(score_fields)} score fields for one filter")
        fields = _as_list(fields, n, "the input field", stage, str)
        score_fields = _as_list(score_fields, n, "score_field", stage, str)
        inverts = _as_list(invert, n, "invert", stage, bool)
        self._steps = [_Step(*x) for x in zip(objs, fields, score_fields, inverts, strict=True)]
        if not self.name or self.name == stage:
            self.name = f"{stage}[{','.join(f.name for f in objs)}]"
        if not all(f.vectorized for f in objs):
            self.worker_mode = "process"
            self.batch_size = max(self.batch_size, 1)

    def inputs(self):
        return ["data"], list(dict.fromkeys(s.field for s in self._steps))

    def outputs(self):
        cols = [s.score_field for s in self._steps if s.score_field] if self._score else []
        return ["data"], cols

    def setup_on_node(self, node_info: dict[str, Any] | None = None,
                      worker_metadata: dict[str, Any] | None = None) -> None:
        for step in self._steps:  # NeMo Curator's hook for filters that fetch a model
            if hasattr(step.filter, "model_check_or_download"):
                step.filter.model_check_or_download()

    @property
    def has_worker_state(self) -> bool:
        return overrides(self, _FilterStage, "setup", "teardown") or any(
            overrides(s.filter, DocumentFilter, "setup")
            or any(hasattr(s.filter, hook) for hook in _LOAD_HOOKS) for s in self._steps)

    def ray_stage_spec(self) -> dict[str, Any]:
        """NeMo Curator's: ``is_actor_stage`` when a filter loads a model or tokenizer."""
        return {"is_actor_stage": self.has_worker_state}

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        for step in self._steps:
            ensure_setup(step.filter)
            for hook in _LOAD_HOOKS:
                if hasattr(step.filter, hook):
                    getattr(step.filter, hook)()

    def process(self, task: DocumentBatch) -> DocumentBatch | None:
        # the kept documents are a selection of the batch's rows: a chain of filters scores and
        # narrows it without copying the table, which is taken once, by whatever reads it
        table, rows = task.selection()
        for step in self._steps:
            if (table.num_rows if rows is None else len(rows)) == 0:
                break
            table, rows = self._apply(task, table, rows, step)
        return task.with_selection(table, rows)

    def _apply(self, task: DocumentBatch, table: pa.Table, rows: np.ndarray | None,
               step: _Step) -> tuple[pa.Table, np.ndarray | None]:
        flt = step.filter
        view = _view_scorer(flt) if self._score and not (self.split or step.score_field) else None
        if rows is not None and view is None:  # this step needs the selected rows as a table
            table, rows = table.take(to_arrow(rows)), None
        if view is not None:
            scores = _as_array(view(text_view(_texts(table, step.field, self.name), rows)))
            keep = _as_array(flt.keep_batch(scores))
            if step.invert:
                keep = pc.invert(keep)
            self._sketch(flt, scores)
            mask = np_bool(keep)
            if mask.all():
                return table, rows
            return table, (np.arange(table.num_rows) if rows is None else rows)[mask]
        return self._apply_table(task, table, step), None

    def _apply_table(self, task: DocumentBatch, table: pa.Table, step: _Step) -> pa.Table:
        flt = step.filter
        if self._score:
            texts = _texts(table, step.field, self.name)
            scores, extras = flt.score_batch_with_extras(texts)
            scores = _as_array(scores)
            for col, values in extras.items():
                table = _set(table, col, _as_array(values))
            if step.score_field:
                table = _set(table, step.score_field, scores)
            self._sketch(flt, scores)
        else:
            if step.field not in table.column_names:
                raise KeyError(f"{self.name}: field {step.field!r} not in columns "
                               f"{table.column_names}")
            scores = table[step.field].combine_chunks()
        if not self._filter:
            return table
        keep = _as_array(flt.keep_batch(scores))
        if step.invert:
            keep = pc.invert(keep)
        if keep.null_count:
            keep = to_arrow(np_bool(keep))
        if self.split:
            self._reject_dropped(task, table, flt, scores, keep)
        if pc.all(keep).as_py():
            return table
        return table.filter(keep)

    def _sketch(self, flt: DocumentFilter, scores: pa.Array) -> None:
        """Publish numeric scores to the filter's histogram for the run report."""
        if pa.types.is_integer(scores.type) or pa.types.is_floating(scores.type):
            self.publish_scores(flt.name, to_numpy(scores),
                                numeric_bounds(flt))

    def _reject_dropped(self, task: DocumentBatch, table: pa.Table, flt: DocumentFilter,
                        scores: pa.Array, keep: pa.Array) -> None:
        dropped = pc.invert(keep)
        rows = table.filter(dropped).to_pylist()
        for row, score in zip(rows, scores.filter(dropped).to_pylist(), strict=True):
            reject_filtered(self, task, row, flt.name, score)


@dataclass
class ScoreFilter(_FilterStage):
    """Scores each document with ``filter_obj``, optionally stores the score in ``score_field``,
    and keeps the documents it accepts (``invert=True`` keeps the others). With a list of
    filters they run in order (a chain); ``text_field``, ``score_field`` and ``invert`` then
    take one value for all or a list with one per filter (``score_field`` must be a list).

    Parameters:
        filter_obj: a :class:`DocumentFilter` or a list of them.
        text_field: the column(s) to score (default ``"text"``).
        score_field: column(s) for the score (default: not stored).
        invert: keep the documents the filter rejects.
        split: instead of dropping, send removed documents to the rejected sink
            (``kind="filtered"``) with the filter's name and score.
    """

    filter_obj: DocumentFilter | list[DocumentFilter] | None = None
    text_field: str | list[str] = "text"
    score_field: str | list[str] | None = None
    invert: bool | list[bool] = False
    split: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        self._init_steps(self.filter_obj, self.text_field, self.score_field, self.invert,
                         None, "filter_obj")


@dataclass
class Score(_FilterStage):
    """Adds the score of ``score_fn`` (a :class:`DocumentFilter`, a function ``text -> score``
    or a list of them) as ``score_field`` (one name per filter) without dropping anything.
    ``filter_obj``: this project's earlier name for ``score_fn``."""

    score_fn: Callable[[str], Any] | DocumentFilter | list | None = None
    score_field: str | list[str] | None = None
    text_field: str | list[str] = "text"
    name: str = ""
    filter_obj: DocumentFilter | None = None
    _filter: ClassVar[bool] = False

    def __post_init__(self) -> None:
        fn = self.score_fn if self.score_fn is not None else self.filter_obj
        if not self.score_field:
            raise ConfigError(f"{type(self).__name__}: score_field is required")
        self._init_steps(fn, self.text_field, self.score_field, False,
                         lambda f: FunctionFilter(score_fn=f), "score_fn")


@dataclass
class Filter(_FilterStage):
    """Keeps documents whose existing ``filter_field`` column passes ``filter_fn`` (a
    :class:`DocumentFilter`'s ``keep_document``, a function ``value -> bool``, or a list of them
    with one field each). ``filter_obj``/``score_field``: this project's earlier names.

    Parameters:
        invert: keep the documents the filter rejects (one value or one per filter).
        split: send removed documents to the rejected sink instead of dropping them.
    """

    filter_fn: Callable[[Any], bool] | DocumentFilter | list | None = None
    filter_field: str | list[str] | None = None
    invert: bool | list[bool] = False
    split: bool = False
    name: str = ""
    filter_obj: DocumentFilter | None = None
    score_field: str | None = None
    _score: ClassVar[bool] = False

    def __post_init__(self) -> None:
        fn = self.filter_fn if self.filter_fn is not None else self.filter_obj
        field = self.filter_field or self.score_field or "score"
        if isinstance(fn, list) and len(fn) > 1 and not (
                isinstance(field, list) and len(field) > 1):
            raise ConfigError(f"{type(self).__name__}: filter_field must be a list with one "
                             "column per filter when filter_fn is a list")
        self._init_steps(fn, field, None, self.invert, lambda f: FunctionFilter(keep_fn=f),
                         "filter_fn")


def _set(table: pa.Table, col: str, values: pa.Array) -> pa.Table:
    if col in table.column_names:
        return table.set_column(table.column_names.index(col), col, values)
    return table.append_column(col, values)
