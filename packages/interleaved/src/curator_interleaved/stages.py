"""Base stages for interleaved annotators and filters, and the aspect-ratio filter.

A filter decides per row (an image) or per document (a ratio over the whole sample); what it
removes is dropped, or with ``split=True`` sent to the rejected sink as every Curator filter does
(kind ``"filtered"``, the row's columns and its score). What a filter cannot judge is never
dropped silently: an image whose bytes cannot be fetched (``materialize_error``) or do not decode,
and an invalid row (unknown modality, a content row without a position), each goes to the sink
as a bad record with its reason, whatever ``split`` says; the rest of the document is kept.

After filtering the surviving content rows of each document are renumbered ``0..n-1`` in their
order, and a document left with no content loses its metadata row too (NeMo Curator's rules).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from curator import ProcessingStage
from curator.stages.filter import reject_filtered

from curator_interleaved.tasks import InterleavedBatch
from curator_interleaved.utils.materialization import fetch_bytes, replace_rows
from curator_interleaved.utils.schema import align_interleaved_table
from curator_interleaved.utils.validation_utils import resolve_storage_options

__all__ = ["BaseInterleavedAnnotatorStage", "BaseInterleavedFilterStage",
           "InterleavedAspectRatioFilterStage"]

_ALLOWED_MODALITIES = ("text", "image", "metadata")


@dataclass
class BaseInterleavedAnnotatorStage(ProcessingStage[InterleavedBatch, InterleavedBatch]):
    """Base of stages that transform an :class:`InterleavedBatch` as a pandas DataFrame:
    implement :meth:`annotate` (NeMo Curator's contract)."""

    name: str = "base_interleaved_annotator"
    modality: ClassVar[str] = "interleaved"

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    @abstractmethod
    def annotate(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.DataFrame:
        """The transformed rows."""

    #: whether ``annotate`` sees ``binary_content`` in its frame (user subclasses: yes, as in
    #: NeMo Curator). Curator's own filters read bytes through :meth:`iter_materialized_bytes`
    #: and leave them in Arrow, so image bytes never make a pandas round trip.
    binary_in_frame: ClassVar[bool] = True

    def process(self, task: InterleavedBatch) -> InterleavedBatch:
        arrow = isinstance(task.data, pa.Table)
        table = task.to_pyarrow() if arrow else None
        if arrow:
            done = self._process_table(task, table)
            if done is not None:
                return done
        lean = arrow and not self.binary_in_frame and "binary_content" in table.column_names
        if lean:
            self.__dict__["_binary"] = table["binary_content"]
            df = table.drop_columns(["binary_content"]).to_pandas(types_mapper=pd.ArrowDtype)
        else:
            df = task.to_pandas().copy()
        if df.empty:
            self.__dict__.pop("_binary", None)
            return task
        self.__dict__["_fetched"] = {}
        try:
            out = self._annotated(task, df, table if lean else None)
        finally:
            binary = self.__dict__.pop("_binary", None)
        fetched: dict[Any, bytes] = self.__dict__.pop("_fetched", {})
        if isinstance(out, tuple):  # rows picked from the Arrow table (a filter)
            picked, rows = out
            if "binary_content" in picked.column_names and fetched:
                picked = _with_fetched(picked, picked.column_names.index("binary_content"),
                                       rows, fetched)
            return task.derive(align_interleaved_table(picked))  # type: ignore[return-value]
        if not arrow:
            return task.derive(out.reset_index(drop=True))  # type: ignore[return-value]
        result = pa.Table.from_pandas(out, preserve_index=False)
        rows = np.asarray(out.index, dtype=np.int64)
        if lean:
            kept = _take_rows(binary, rows)
            at = table.schema.get_field_index("binary_content")
            result = result.add_column(min(at, result.num_columns),
                                       pa.field("binary_content", pa.large_binary()), kept)
        if fetched and "binary_content" in result.column_names:
            # bytes fetched for this stage stay with their rows: later stages and the writer
            # do not read them again
            result = _with_fetched(result, result.column_names.index("binary_content"), rows,
                                   fetched)
        return task.derive(align_interleaved_table(result))  # type: ignore[return-value]

    def _process_table(self, task: InterleavedBatch, table: pa.Table) -> InterleavedBatch | None:
        """The output batch computed on the Arrow table alone (no pandas frame), or ``None``:
        the stage needs its frame."""
        return None

    def _annotated(self, task: InterleavedBatch, df: pd.DataFrame, table: pa.Table | None
                   ) -> pd.DataFrame | tuple[pa.Table, np.ndarray]:
        """The stage's output: :meth:`annotate`'s frame, or (a filter with a lean frame) the
        rows it keeps taken from ``table``, the Arrow batch, with the input row of each."""
        return self.annotate(task, df)


def _with_fetched(table: pa.Table, at: int, rows: np.ndarray,
                  fetched: dict[Any, bytes]) -> pa.Table:
    """``table`` (whose row ``k`` came from input row ``rows[k]``) with the bytes fetched for
    its input rows set in column ``at``."""
    where = [k for k, i in enumerate(rows.tolist()) if i in fetched]
    if not where:
        return table
    column = replace_rows(table.column(at), where, [fetched[int(rows[k])] for k in where],
                          pa.large_binary())
    return table.set_column(at, pa.field("binary_content", pa.large_binary()), column)


@dataclass
class BaseInterleavedFilterStage(BaseInterleavedAnnotatorStage):
    """Base of interleaved filters: implement :meth:`content_keep_mask` (a boolean Series over
    the rows); see the module doc for what happens to removed, unreadable and invalid rows.

    Parameters:
        drop_invalid_rows: also remove rows that break the schema's rules (a modality other
            than text/image/metadata, a metadata row not at -1, a content row below 0); each
            goes to the rejected sink with its reason.
        split: send the rows the filter removes to the rejected sink (kind ``"filtered"``)
            instead of dropping them.
    """

    drop_invalid_rows: bool = True
    split: bool = False
    name: str = "base_interleaved_filter"
    kind: ClassVar[str] = "filter"

    @abstractmethod
    def content_keep_mask(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.Series:
        """Boolean keep-mask aligned to ``df``'s index."""

    def table_keep_mask(self, task: InterleavedBatch, table: pa.Table) -> np.ndarray:
        """The same decision as :meth:`content_keep_mask` on the Arrow batch (a boolean array
        over its rows; row ``i`` is index ``i`` for :meth:`mark_bad` / :meth:`record_score`).
        Optional: a filter that implements it is run without a pandas frame (Curator's
        aspect-ratio and image-to-text filters do); the others get their frame."""
        raise NotImplementedError(f"{type(self).__name__} decides on pandas frames "
                                  f"(content_keep_mask); it has no Arrow path")

    # -- helpers for subclasses ------------------------------------------------------------
    def mark_bad(self, idx: Any, reason: str, error: str = "") -> None:
        """Record that row ``idx`` could not be judged: it goes to the sink with ``reason`` (a
        short code: ``image_unavailable``, ``undecodable_image``, ``invalid_row``) and
        ``error`` (the detail)."""
        self.__dict__.setdefault("_bad_rows", {})[idx] = (reason, error)

    def record_score(self, idx: Any, score: Any) -> None:
        """Record the score that decided row ``idx`` (shown with a split row in the sink)."""
        self.__dict__.setdefault("_row_scores", {})[idx] = score

    @staticmethod
    def _basic_row_validity_mask(df: pd.DataFrame) -> pd.Series:
        return pd.Series(_validity(*_frame_arrays(df)[:2]), index=df.index, dtype=bool)

    def _mark_invalid(self, labels: Any) -> None:
        for idx in labels:
            self.mark_bad(idx, "invalid_row", "modality must be text, image or metadata; "
                                             "position -1 for metadata, >= 0 for content")

    def keep_mask(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.Series:
        keep = pd.Series(True, index=df.index, dtype=bool)
        if self.drop_invalid_rows:
            valid = self._basic_row_validity_mask(df)
            self._mark_invalid(df.index[~valid.to_numpy()])
            keep &= valid
        keep &= self.content_keep_mask(task, df).reindex(df.index, fill_value=True).astype(bool)
        return keep

    def image_score_keep_mask(self, task: InterleavedBatch, df: pd.DataFrame,
                              score: Callable[[np.ndarray, Any], float],
                              keep_if: Callable[[float], bool]) -> pd.Series:
        """The keep mask of a filter that scores each decoded image row (``score(image,
        row index)``, recorded) and keeps it when ``keep_if(score)``; other rows are kept. An
        image that cannot be fetched or decoded is dropped and marked bad with its reason."""
        keep = pd.Series(True, index=df.index, dtype=bool)
        images = (df["modality"] == "image").fillna(False).astype(bool)
        if not images.any():
            return keep
        from curator_interleaved.utils.image_utils import image_bytes_to_array

        for idx, data in self.iter_materialized_bytes(task, df, images):
            image = None if data is None else image_bytes_to_array(data, row_index=idx)
            if image is None:
                if data is not None:
                    self.mark_bad(idx, "undecodable_image", "OpenCV and PIL cannot decode it")
                keep.loc[idx] = False
                continue
            value = score(image, idx)
            self.record_score(idx, value)
            keep.loc[idx] = keep_if(value)
        return keep

    def iter_materialized_bytes(self, task: InterleavedBatch, df: pd.DataFrame,
                                row_mask: pd.Series) -> Iterator[tuple[Any, bytes | None]]:
        """``(row index, bytes)`` for the rows of ``row_mask``: bytes already in
        ``binary_content``, else fetched from ``source_ref`` (only these rows). A row whose
        bytes cannot be had yields ``None`` and is marked bad with its ``materialize_error``."""
        indices = list(df.index[row_mask.to_numpy()])
        if not indices:
            return
        n = len(indices)

        def column(name: str) -> list[Any]:
            if name not in df.columns:
                return [None] * n
            return [None if _is_na(v) else v for v in df.loc[indices, name].tolist()]

        stored = self.__dict__.get("_binary")
        if stored is not None and "binary_content" not in df.columns:  # lean frame: from Arrow
            binary = stored.take(pa.array(np.asarray(indices, dtype=np.int64))).to_pylist()
        else:
            binary = column("binary_content")
        yield from self._materialized_rows(task, indices, binary, column("materialize_error"),
                                           lambda: column("source_ref"))

    def iter_table_bytes(self, task: InterleavedBatch, table: pa.Table,
                         rows: np.ndarray) -> Iterator[tuple[int, bytes | None]]:
        """:meth:`iter_materialized_bytes` for rows ``rows`` of the Arrow batch."""
        if not len(rows):
            return
        take = pa.array(np.asarray(rows, dtype=np.int64))

        def column(name: str) -> list[Any]:
            if name not in table.column_names:
                return [None] * len(rows)
            return table[name].take(take).to_pylist()

        yield from self._materialized_rows(task, [int(r) for r in rows], column("binary_content"),
                                           column("materialize_error"),
                                           lambda: column("source_ref"))

    def _materialized_rows(self, task: InterleavedBatch, indices: list[Any], binary: list[Any],
                           errors: list[Any], source_refs: Callable[[], list[Any]]
                           ) -> Iterator[tuple[Any, bytes | None]]:
        need = [i for i in range(len(indices)) if binary[i] is None]
        need_set = set(need)
        if need:
            refs_col = source_refs()
            refs = [InterleavedBatch.parse_source_ref(refs_col[i]) for i in need]
            payloads, errs = fetch_bytes(refs, resolve_storage_options(task))
            for i, data, err in zip(need, payloads, errs, strict=True):
                binary[i] = data
                errors[i] = None if data is not None else (errors[i] or err)
        keep_fetched = self.__dict__.get("_fetched")
        for pos, idx in enumerate(indices):
            data = binary[pos]
            if keep_fetched is not None and data is not None and pos in need_set:
                keep_fetched[idx] = data
            if data is None:
                self.mark_bad(idx, "image_unavailable", errors[pos] or "no source_ref")
            yield idx, (bytes(data) if data is not None else None)

    # -- the filter ------------------------------------------------------------------------
    def annotate(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.DataFrame:
        rows, positions = self._filter(task, df)
        return _frame_rows(df, rows, positions)

    def _annotated(self, task: InterleavedBatch, df: pd.DataFrame, table: pa.Table | None
                   ) -> pd.DataFrame | tuple[pa.Table, np.ndarray]:
        if table is None or type(self).annotate is not BaseInterleavedFilterStage.annotate:
            return self.annotate(task, df)
        columns = list(df.columns)
        rows, positions = self._filter(task, df)
        if list(df.columns) != columns:  # the mask added columns to the frame: keep them
            return _frame_rows(df, rows, positions)
        return _table_rows(table, rows, positions), rows

    def _process_table(self, task: InterleavedBatch, table: pa.Table) -> InterleavedBatch | None:
        cls = type(self)
        if (_owner(cls, "table_keep_mask") is BaseInterleavedFilterStage
                or _owner(cls, "content_keep_mask") is not _owner(cls, "table_keep_mask")
                or cls.annotate is not BaseInterleavedFilterStage.annotate
                or cls.keep_mask is not BaseInterleavedFilterStage.keep_mask):
            return None  # the filter decides on its frame
        if table.num_rows == 0:
            return task
        self.__dict__["_fetched"] = {}
        try:
            rows, positions = self._filter_table(task, table)
        finally:
            fetched: dict[Any, bytes] = self.__dict__.pop("_fetched", {})
        out = _table_rows(table, rows, positions)
        if fetched and "binary_content" in out.column_names:
            # bytes fetched for this stage stay with their rows: later stages and the writer
            # do not read them again
            out = _with_fetched(out, out.column_names.index("binary_content"), rows, fetched)
        return task.derive(align_interleaved_table(out))  # type: ignore[return-value]

    def _filter(self, task: InterleavedBatch, df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``df`` (positions in it) the filter keeps, in output order, and their new
        ``position`` values; removed rows reported (see the module doc)."""
        self.__dict__["_bad_rows"] = {}
        self.__dict__["_row_scores"] = {}
        keep = self.keep_mask(task, df).to_numpy(dtype=bool)
        return self._plan(task, keep, *_frame_arrays(df), labels=df.index,
                          record=lambda p: self._row_record(df.iloc[p]))

    def _filter_table(self, task: InterleavedBatch, table: pa.Table
                      ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_filter` on the Arrow batch with :meth:`table_keep_mask` (row ``i`` is
        index ``i``)."""
        self.__dict__["_bad_rows"] = {}
        self.__dict__["_row_scores"] = {}
        modality, position, sample_ids = _table_arrays(table)
        keep = np.ones(table.num_rows, dtype=bool)
        if self.drop_invalid_rows:
            valid = _validity(modality, position)
            self._mark_invalid(np.flatnonzero(~valid).tolist())
            keep &= valid
        keep &= np.asarray(self.table_keep_mask(task, table), dtype=bool)
        record_table = table.drop_columns([c for c in ("binary_content",)
                                           if c in table.column_names])
        return self._plan(task, keep, modality, position, sample_ids,
                          labels=np.arange(table.num_rows),
                          record=lambda p: record_table.slice(p, 1).to_pylist()[0])

    def _plan(self, task: InterleavedBatch, keep: np.ndarray, modality: np.ndarray,
              position: np.ndarray, sample_ids: np.ndarray, *, labels: Any,
              record: Callable[[int], dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
        """NeMo Curator's rules after the keep mask: content rows renumbered ``0..n-1`` per
        document in their order, a document left with no content removed whole, documents in
        the order they first appear among the kept rows; removed rows reported."""
        kept = np.flatnonzero(keep)
        codes = pd.factorize(sample_ids[kept], use_na_sentinel=False)[0]
        content = modality[kept] != "metadata"
        new_position = position[kept].copy()
        if content.any():
            body = np.flatnonzero(content)
            order = body[np.lexsort((position[kept][body], codes[body]))]
            ordered_codes = codes[order]
            starts = np.flatnonzero(np.r_[True, ordered_codes[1:] != ordered_codes[:-1]])
            group_start = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
            new_position[order] = np.arange(len(order)) - group_start
        has_content = np.zeros(int(codes.max()) + 1 if len(codes) else 0, dtype=bool)
        has_content[codes[content]] = True
        orphan = ~content & ~has_content[codes]
        self._report_removed(task, keep, kept[orphan], labels, record)
        remaining = np.flatnonzero(~orphan)
        order = remaining[np.lexsort((new_position[remaining], codes[remaining]))]
        return kept[order], new_position[order].astype(np.int64)

    def _row_record(self, row: pd.Series) -> dict[str, Any]:
        rec = {}
        for k, v in row.items():
            if k == "binary_content":
                continue
            rec[str(k)] = None if _is_na(v) else (v.item() if hasattr(v, "item") else v)
        return rec

    def _report_removed(self, task: InterleavedBatch, keep: np.ndarray, orphans: np.ndarray,
                        labels: Any, record: Callable[[int], dict[str, Any]]) -> None:
        """Rows removed by the mask: those that could not be judged always, with their reason;
        the filtered ones (and the metadata rows of emptied documents) with ``split``."""
        bad: dict[Any, tuple[str, str]] = self.__dict__.get("_bad_rows", {})
        scores: dict[Any, Any] = self.__dict__.get("_row_scores", {})
        for p in np.flatnonzero(~np.asarray(keep, dtype=bool)).tolist():
            idx = labels[p]
            if idx in bad:
                reason, error = bad[idx]
                self.reject(task, reason, error=error, record=record(p))
            elif self.split:
                reject_filtered(self, task, record(p), self.name, scores.get(idx))
        if self.split:
            for p in orphans.tolist():
                reject_filtered(self, task, record(p), self.name, "no content left")


def _owner(cls: type, name: str) -> type | None:
    """The class in ``cls``'s MRO that defines ``name``."""
    return next((c for c in cls.__mro__ if name in c.__dict__), None)


def _validity(modality: np.ndarray, position: np.ndarray) -> np.ndarray:
    """The schema's row rules: modality text, image or metadata; position -1 for metadata,
    >= 0 for content."""
    meta = modality == "metadata"
    ok = meta | (modality == "text") | (modality == "image")
    return ok & np.where(meta, position == -1, position >= 0)


def _frame_arrays(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(modality, position as float, sample_id)`` of a frame as NumPy arrays (nulls: None,
    NaN)."""
    return (df["modality"].to_numpy(dtype=object, na_value=None),
            pd.to_numeric(df["position"], errors="coerce").to_numpy(dtype=np.float64,
                                                                    na_value=np.nan),
            df["sample_id"].to_numpy(dtype=object, na_value=None))


def _table_arrays(table: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_frame_arrays` of an Arrow batch."""
    position = pc.cast(table["position"], pa.float64()).to_numpy()  # nulls: NaN
    return (np.asarray(table["modality"].to_pylist(), dtype=object), position,
            np.asarray(table["sample_id"].to_pylist(), dtype=object))


def _frame_rows(df: pd.DataFrame, rows: np.ndarray, positions: np.ndarray) -> pd.DataFrame:
    out = df.iloc[rows].copy()
    if len(rows):
        out["position"] = pd.Series(positions, index=out.index).astype(df["position"].dtype)
    return out


def _table_rows(table: pa.Table, rows: np.ndarray, positions: np.ndarray) -> pa.Table:
    """Rows ``rows`` of ``table`` with new positions; the bytes of surviving runs of rows not
    copied."""
    take = pa.array(rows, pa.int64())
    columns = []
    for name in table.column_names:
        column = table[name]
        if name == "binary_content":
            columns.append(_take_rows(column, rows))
        elif name == "position":
            columns.append(pa.array(positions, pa.int64()).cast(column.type))
        else:
            columns.append(column.take(take))
    return pa.Table.from_arrays(columns, schema=table.schema)


#: at most this many runs of consecutive rows are kept as zero-copy slices (more: one ``take``)
_MAX_SLICE_RUNS = 256


def _take_rows(column: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> pa.ChunkedArray:
    """``column`` at ``rows``: when they are a few runs of consecutive rows (a filter that
    removed a few documents) as slices of ``column``, so image bytes are not copied; else
    ``take``."""
    if not isinstance(column, pa.ChunkedArray):
        column = pa.chunked_array([column], type=column.type)
    n = len(rows)
    if n == 0:
        return column.slice(0, 0)
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    if len(breaks) >= _MAX_SLICE_RUNS or rows.min() < 0 or rows.max() >= len(column):
        return column.take(pa.array(rows, pa.int64()))
    if not len(breaks):
        return column.slice(int(rows[0]), n)
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [n]])
    chunks = [chunk for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
              for chunk in column.slice(int(rows[a]), b - a).chunks]
    return pa.chunked_array(chunks, type=column.type)


def _is_na(v: Any) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


@dataclass
class InterleavedAspectRatioFilterStage(BaseInterleavedFilterStage):
    """Keeps image rows whose width / height lies in ``[min_aspect_ratio, max_aspect_ratio]``
    (read from the image header; any format PIL opens). Text and metadata rows are kept.

    Parameters:
        min_aspect_ratio, max_aspect_ratio: the bounds (NeMo Curator's defaults 1.0 and 2.0).
        drop_invalid_rows, split: see :class:`BaseInterleavedFilterStage`.
    """

    binary_in_frame: ClassVar[bool] = False

    min_aspect_ratio: float = 1.0
    max_aspect_ratio: float = 2.0
    name: str = "interleaved_aspect_ratio_filter"

    @staticmethod
    def _image_aspect_ratio(image_bytes: bytes) -> float | None:
        from curator_interleaved.utils.image_utils import image_size

        size = image_size(image_bytes)
        if size is None or size[1] <= 0:
            return None
        return float(size[0]) / float(size[1])

    def content_keep_mask(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.Series:
        keep = pd.Series(True, index=df.index, dtype=bool)
        images = (df["modality"] == "image").fillna(False).astype(bool)
        if not images.any():
            return keep
        decided = self._decide(self.iter_materialized_bytes(task, df, images))
        if decided:
            keep.loc[list(decided)] = list(decided.values())
        return keep

    def table_keep_mask(self, task: InterleavedBatch, table: pa.Table) -> np.ndarray:
        keep = np.ones(table.num_rows, dtype=bool)
        images = np.flatnonzero(pc.fill_null(pc.equal(table["modality"], "image"),
                                             False).to_numpy(zero_copy_only=False))
        decided = self._decide(self.iter_table_bytes(task, table, images))
        if decided:
            keep[list(decided)] = list(decided.values())
        return keep

    def _decide(self, images: Iterator[tuple[Any, bytes | None]]) -> dict[Any, bool]:
        """Keep or not, per image row (its ratio recorded; unreadable ones marked bad)."""
        decided: dict[Any, bool] = {}
        for idx, data in images:
            if data is None:
                decided[idx] = False
                continue
            ratio = self._image_aspect_ratio(data)
            if ratio is None:
                self.mark_bad(idx, "undecodable_image", "not an image PIL can open")
                decided[idx] = False
                continue
            self.record_score(idx, ratio)
            decided[idx] = self.min_aspect_ratio <= ratio <= self.max_aspect_ratio
        return decided
