"""InterleavedObelicsWriterStage: interleaved rows -> OBELICS-layout Parquet, one file per task.

The layout :class:`~curator_interleaved.io.readers.obelics.InterleavedObelicsReaderStage` reads
(HuggingFaceM4/OBELICS): one Parquet row per document with

- ``sample_id`` (``sample_id_field``; read back with ``sample_id_field="sample_id"``);
- ``texts`` / ``images``: parallel lists indexed by ``position``, exactly one of them set at a
  position (both ``None`` at a gap, e.g. a segment a stage removed without renumbering);
- ``metadata``: a JSON string of the list of the content rows' ``metadata`` values (each parsed
  when it is JSON), aligned with those positions;
- ``general_metadata`` and every other user column, as columns, with the value of the
  document's metadata row.

Images are written as their bytes (``images`` is a list of binary) or as their locator (a list
of strings: the ``path`` of each row's ``source_ref``, a URL or a file, what the OBELICS reader
keeps as ``source_ref`` and fetches lazily). ``image_format="auto"`` (default) writes locators
when no image row of the batch has bytes and every one is a whole file or URL (a batch read from
URL-style OBELICS stays URLs and nothing is fetched), else bytes (missing bytes are fetched
first, as every writer does). A row that cannot be written in the chosen form goes to the
rejected sink with its reason, never dropped silently: an image without bytes in the bytes form
(``image_without_bytes``, possible only with ``on_materialize_error="warn"``), an image whose
locator is a tar member or a byte range in the locator form (``image_not_addressable``), a text
row without text (``text_without_content``), two segments at one position of a document
(``duplicate_position``: the whole document, as it has no OBELICS form).

Content-row user columns other than ``metadata`` are written as per-position lists (``None``
where the column is unset), named ``{column}_segments`` when the metadata rows set the column
too; a ``metadata`` value on a metadata row goes to ``document_metadata``. Nothing is dropped,
but the OBELICS reader reads these back as document columns (JSON strings on the metadata
row), since the layout has no per-segment fields besides ``metadata``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import pyarrow as pa
import pyarrow.compute as pc
from curator.errors import ConfigError

from curator_interleaved.io.writers.tabular import InterleavedParquetWriterStage
from curator_interleaved.tasks import INTERLEAVED_SCHEMA, RESERVED_COLUMNS, InterleavedBatch

__all__ = ["InterleavedObelicsWriterStage"]

_IMAGE_FORMATS = ("auto", "bytes", "url")
_STRUCTURAL = ("texts", "images", "metadata")


def _plain_locator(source_ref: str | None) -> str | None:
    """The ``path`` of a locator that names a whole file or URL (no member, range or frame)."""
    if not source_ref:
        return None
    ref = InterleavedBatch.parse_source_ref(source_ref)
    if ref.get("member") is not None or ref.get("byte_offset") is not None \
            or ref.get("frame_index") is not None:
        return None
    return ref.get("path") or None


def _with_reserved(table: pa.Table) -> pa.Table:
    """``table`` with the reserved columns it lacks added as nulls (a batch built by hand)."""
    for f in INTERLEAVED_SCHEMA:
        if f.name not in table.column_names:
            table = table.append_column(f.name, pa.nulls(table.num_rows, f.type))
    return table


def _segment_metadata(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@dataclass
class InterleavedObelicsWriterStage(InterleavedParquetWriterStage):
    """Writes each :class:`~curator_interleaved.tasks.InterleavedBatch` as
    ``{path}/{task_id}.parquet`` in the OBELICS layout (see the module doc); read back with
    ``InterleavedObelicsReader(sample_id_field="sample_id")``: the same rows, in order.

    Parameters (besides those of
    :class:`~curator_interleaved.io.writers.base.BaseInterleavedWriter`: deterministic names,
    atomic files, run manifest, save modes, resume, ``on_materialize_error``; ``write_kwargs``
    also takes ``pyarrow.parquet.write_table`` options as the Parquet writer's):
        image_format: ``"auto"`` (default), ``"bytes"`` or ``"url"`` (see the module doc).
        sample_id_field: the column holding each document's id (``None``: not written; the
            reader then names documents ``{file stem}-{row}``).
    """

    image_format: Literal["auto", "bytes", "url"] = "auto"
    sample_id_field: str | None = "sample_id"
    name: str = "interleaved_obelics_writer"
    _SUPPORTED_MODALITIES: ClassVar[frozenset[str]] = frozenset({"metadata", "text", "image"})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.image_format not in _IMAGE_FORMATS:
            raise ConfigError(f"{self.name}: image_format must be one of {_IMAGE_FORMATS}, got "
                              f"{self.image_format!r}")
        if self.sample_id_field in (*_STRUCTURAL, "general_metadata"):
            raise ConfigError(f"{self.name}: sample_id_field {self.sample_id_field!r} is a "
                              f"column of the OBELICS layout; choose another name")

    # -- which form the images take -------------------------------------------------------------
    def _images_as_locators(self, table: pa.Table) -> bool:
        if self.image_format != "auto":
            return self.image_format == "url"
        images = table.filter(pc.equal(table["modality"], "image"))
        if images.num_rows == 0:
            return False
        if pc.any(pc.is_valid(images["binary_content"])).as_py():
            return False
        return all(_plain_locator(ref) for ref in images["source_ref"].to_pylist())

    def _materialized(self, task: InterleavedBatch) -> pa.Table:
        table = _with_reserved(task.to_pyarrow())
        if self._images_as_locators(table):
            table = self._check_locators(task, table)
        else:
            table = self._check_bytes(task, _with_reserved(super()._materialized(task)))
        return self._check_documents(task, table)

    def _drop(self, task: InterleavedBatch, table: pa.Table, bad: pa.Array, reason: str,
              error: str) -> pa.Table:
        rows = table.filter(bad)
        for rec in rows.drop_columns([c for c in ("binary_content",)
                                      if c in rows.column_names]).to_pylist():
            self.reject(task, reason, error=error, record=rec)
        return table.filter(pc.invert(bad))

    def _check_locators(self, task: InterleavedBatch, table: pa.Table) -> pa.Table:
        refs = [_plain_locator(r) for r in table["source_ref"].to_pylist()]
        bad = pa.array([m == "image" and ref is None
                        for m, ref in zip(table["modality"].to_pylist(), refs, strict=True)])
        if not pc.any(bad).as_py():
            return table
        return self._drop(task, table, bad, "image_not_addressable",
                          "image_format='url' writes each image as the path or URL of its "
                          "source_ref; this one is a tar member, a byte range or a frame (or "
                          "has no locator): write with image_format='bytes'")

    def _check_bytes(self, task: InterleavedBatch, table: pa.Table) -> pa.Table:
        bad = pc.and_(pc.equal(table["modality"], "image"),
                      pc.is_null(table["binary_content"])).fill_null(False)
        if not pc.any(bad).as_py():
            return table
        return self._drop(task, table, bad, "image_without_bytes",
                          "the OBELICS bytes form needs each image's bytes; this one has none "
                          "(see materialize_error); use image_format='url' to write locators")

    def _check_documents(self, task: InterleavedBatch, table: pa.Table) -> pa.Table:
        modalities = {m for m in table["modality"].unique().to_pylist() if m is not None}
        unsupported = modalities - self._SUPPORTED_MODALITIES
        if unsupported:
            raise ValueError(f"{self.name}: unsupported modality {sorted(unsupported)!r}; the "
                             f"OBELICS layout holds {sorted(self._SUPPORTED_MODALITIES)}")
        bad = pc.and_(pc.equal(table["modality"], "text"),
                      pc.is_null(table["text_content"])).fill_null(False)
        if pc.any(bad).as_py():
            table = self._drop(task, table, bad, "text_without_content",
                               "a text segment without text has no OBELICS form")
        seen: set[tuple[str, int]] = set()
        clashing: set[str] = set()
        for sid, pos in zip(table["sample_id"].to_pylist(), table["position"].to_pylist(),
                            strict=True):
            if (sid, pos) in seen:
                clashing.add(sid)
            seen.add((sid, pos))
        if clashing:
            table = self._drop(task, table, pc.is_in(table["sample_id"],
                                                     pa.array(sorted(clashing))),
                               "duplicate_position",
                               "two segments of this document share a position; OBELICS "
                               "lists hold one segment per position")
        return table

    # -- the layout -----------------------------------------------------------------------------
    def to_obelics(self, table: pa.Table) -> pa.Table:
        """``table`` (interleaved rows) as OBELICS-layout documents (one row each, in the order
        the documents first appear)."""
        as_urls = self._images_as_locators(table)
        user_cols = [c for c in table.column_names if c not in RESERVED_COLUMNS]
        if self.sample_id_field in user_cols:
            raise ValueError(f"{self.name}: sample_id_field {self.sample_id_field!r} is also a "
                             f"user column; choose another sample_id_field")
        rows = table.to_pylist()
        docs: dict[str, dict[str, Any]] = {}
        for i, row in enumerate(rows):
            doc = docs.setdefault(row["sample_id"], {"meta": None, "content": []})
            if row["position"] is not None and row["position"] < 0:
                if doc["meta"] is None:
                    doc["meta"] = i
            else:
                doc["content"].append(row)
        doc_cols = [c for c in user_cols if c != "metadata"]
        meta_index = [d["meta"] for d in docs.values()]
        meta_rows = [rows[i] if i is not None else {} for i in meta_index]
        on_meta = {c for c in user_cols if any(m.get(c) is not None for m in meta_rows)}
        per_segment = [c for c in doc_cols
                       if any(r.get(c) is not None for d in docs.values() for r in d["content"])]
        out: dict[str, list[Any]] = {"texts": [], "images": [], "metadata": []}
        for c in per_segment:
            out[c] = []
        for doc in docs.values():
            content = sorted(doc["content"], key=lambda r: r["position"])
            size = (int(content[-1]["position"]) + 1) if content else 0
            texts: list[Any] = [None] * size
            images: list[Any] = [None] * size
            seg_meta: list[Any] = [None] * size
            extra = {c: [None] * size for c in per_segment}
            for r in content:
                pos = int(r["position"])
                if r["modality"] == "text":
                    texts[pos] = r["text_content"]
                else:
                    images[pos] = (_plain_locator(r["source_ref"]) if as_urls
                                   else r["binary_content"])
                seg_meta[pos] = _segment_metadata(r.get("metadata"))
                for c in per_segment:
                    extra[c][pos] = r.get(c)
            out["texts"].append(texts)
            out["images"].append(images)
            out["metadata"].append(json.dumps(seg_meta, ensure_ascii=False, default=str))
            for c in per_segment:
                out[c].append(extra[c])
        fields = [pa.field("texts", pa.list_(pa.string())),
                  pa.field("images", pa.list_(pa.string() if as_urls else pa.binary())),
                  pa.field("metadata", pa.string())]
        arrays: list[pa.Array] = [pa.array(out[f.name], f.type) for f in fields]
        if self.sample_id_field:
            fields.insert(0, pa.field(self.sample_id_field, pa.string()))
            arrays.insert(0, pa.array(list(docs), pa.string()))
        indices = pa.array(meta_index, pa.int64())
        for c in doc_cols:
            if c in on_meta or c not in per_segment:
                arrays.append(table[c].take(indices).combine_chunks())
                fields.append(pa.field(c, table.schema.field(c).type))
            if c in per_segment:  # set on content rows: a per-position list
                arrays.append(pa.array(out[c]))
                fields.append(pa.field(f"{c}_segments" if c in on_meta else c, arrays[-1].type))
        if "metadata" in on_meta:  # the layout's metadata is per segment: the document's aside
            arrays.append(table["metadata"].take(indices).combine_chunks())
            fields.append(pa.field("document_metadata", table.schema.field("metadata").type))
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields))

    def write_table(self, table: pa.Table, file_path: str) -> None:
        obelics = self.to_obelics(table)
        self._log_metric("samples_written", float(obelics.num_rows))
        super().write_table(obelics, file_path)
