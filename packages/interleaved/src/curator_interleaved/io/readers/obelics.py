"""InterleavedObelicsReaderStage: OBELICS-layout Parquet (one row per document) ->
InterleavedBatch.

The OBELICS layout (HuggingFaceM4/OBELICS) holds each document as parallel lists ``texts`` and
``images``: at index ``i`` exactly one of them is set, the other ``None``. ``metadata`` is a JSON
string of a list aligned with those positions (per-segment metadata, e.g. an image's source URL
and size); ``general_metadata`` a JSON string about the whole document (URL, WARC record …). An
image is given as a URL (or any path) or as its encoded bytes: a URL is kept as the row's
``source_ref`` and fetched only when a stage needs the bytes (lazy materialisation); bytes are
the row's ``binary_content`` at once.

Rows: a metadata row (``position -1``) with ``general_metadata`` and the row's other columns as
user columns; one row per set entry at its list index, its ``metadata`` entry as the content
row's ``metadata`` column (a JSON string). A document whose ``texts`` and ``images`` differ in
length, or that has a text and an image at the same index, goes to the rejected sink with the
reason; the other documents are kept.
"""

from __future__ import annotations

import json
import mimetypes
from dataclasses import dataclass
from typing import Any

from curator import FileGroupTask
from curator.io import file_stem

from curator_interleaved.io.readers.base import BaseInterleavedReader
from curator_interleaved.io.readers.webdataset import RowColumns
from curator_interleaved.tasks import RESERVED_COLUMNS, InterleavedBatch

__all__ = ["InterleavedObelicsReaderStage", "sniff_image_type"]

_MAGIC = ((b"\xff\xd8\xff", "image/jpeg"), (b"\x89PNG\r\n\x1a\n", "image/png"),
          (b"GIF8", "image/gif"), (b"II*\x00", "image/tiff"), (b"MM\x00*", "image/tiff"),
          (b"BM", "image/bmp"))


def sniff_image_type(data: bytes) -> str:
    """The MIME type of encoded image bytes from their magic number
    (``application/octet-stream`` when unknown)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    return "application/octet-stream"


@dataclass
class InterleavedObelicsReaderStage(BaseInterleavedReader):
    """Reads OBELICS-layout Parquet files (see the module doc).

    Parameters:
        texts_field, images_field: the parallel lists' column names.
        metadata_field: per-segment metadata (JSON list string) spread onto the content rows.
        general_metadata_field: the document's metadata (JSON string), kept on its metadata row.
        sample_id_field: column holding the document id (default: ``{file stem}-{row index}``,
            the same on every run).
        fields: user columns to keep (default: every other column).
        max_batch_bytes: split a partition's rows into batches of about this size.
    """

    texts_field: str = "texts"
    images_field: str = "images"
    metadata_field: str = "metadata"
    general_metadata_field: str = "general_metadata"
    sample_id_field: str | None = None
    fields: tuple[str, ...] | None = None
    max_batch_bytes: int | None = None
    name: str = "interleaved_obelics_reader"

    def _user_columns(self, names: list[str]) -> list[str]:
        structural = {self.texts_field, self.images_field, self.metadata_field}
        if self.sample_id_field:
            structural.add(self.sample_id_field)
        if self.fields is not None:
            bad = sorted(set(self.fields) & (set(RESERVED_COLUMNS) | structural))
            if bad:
                raise ValueError(f"fields contains reserved keys: {bad}; these columns are "
                                 f"managed by the reader, drop them from fields")
            return list(self.fields)
        return [n for n in names if n not in structural and n not in RESERVED_COLUMNS]

    def _document(self, out: RowColumns, task: FileGroupTask, path: str, sample_id: str,
                  row: dict[str, Any], user_cols: list[str]) -> None:
        texts = row.get(self.texts_field) or []
        images = row.get(self.images_field) or []
        record = {"sample_id": sample_id, "path": path}
        if len(texts) != len(images):
            self.reject(task, "text_image_count_mismatch", record=record, source=path,
                        error=f"{self.texts_field!r} has {len(texts)} entries, "
                              f"{self.images_field!r} has {len(images)}")
            return
        both = [i for i, (t, m) in enumerate(zip(texts, images, strict=True))
                if t is not None and m is not None]
        if both:
            self.reject(task, "malformed_document", record=record, source=path,
                        error=f"positions {both[:5]} hold both a text and an image (OBELICS "
                              f"sets exactly one)")
            return
        seg_meta: list[Any] = []
        raw_meta = row.get(self.metadata_field)
        if raw_meta:
            try:
                seg_meta = json.loads(raw_meta) if isinstance(raw_meta, str) else list(raw_meta)
            except ValueError as e:
                self.reject(task, "malformed_json", record=record, source=path,
                            error=f"{self.metadata_field!r}: {e}")
                return
            if not isinstance(seg_meta, list):
                seg_meta = []
        user = {c: _cell(row.get(c)) for c in user_cols}
        out.add(sample_id, -1, "metadata", "application/json",
                source_ref=InterleavedBatch.build_source_ref(path=path, member=None), user=user)
        for i, (text, image) in enumerate(zip(texts, images, strict=True)):
            meta = seg_meta[i] if i < len(seg_meta) else None
            seg_user = {"metadata": None if meta is None else json.dumps(meta, ensure_ascii=False)}
            if text is not None:
                out.add(sample_id, i, "text", "text/plain", text=str(text), user=seg_user)
            elif image is not None:
                if isinstance(image, bytes | bytearray):
                    out.add(sample_id, i, "image", sniff_image_type(bytes(image)),
                            binary=bytes(image), user=seg_user)
                else:
                    ctype = mimetypes.guess_type(str(image).split("?", 1)[0])[0]
                    out.add(sample_id, i, "image", ctype, user=seg_user,
                            source_ref=InterleavedBatch.build_source_ref(path=str(image),
                                                                         member=None))

    def process(self, task: FileGroupTask) -> InterleavedBatch | list[InterleavedBatch]:
        import fsspec
        import pyarrow.parquet as pq

        out = RowColumns()
        user_cols: list[str] = []
        for path in map(str, task.data):
            fs, inner = fsspec.core.url_to_fs(path, **self._storage_options)
            stem = file_stem(path)
            with fs.open(inner, "rb") as fh:
                pf = pq.ParquetFile(fh)
                user_cols = self._user_columns(pf.schema_arrow.names)
                have = set(pf.schema_arrow.names)
                wanted = [c for c in (self.texts_field, self.images_field, self.metadata_field,
                                      self.sample_id_field, *user_cols) if c and c in have]
                n = 0
                for batch in pf.iter_batches(columns=list(dict.fromkeys(wanted)),
                                             batch_size=1024):
                    for row in batch.to_pylist():
                        sid = row.get(self.sample_id_field) if self.sample_id_field else None
                        sample_id = str(sid) if sid is not None else f"{stem}-{n}"
                        self._document(out, task, path, sample_id, row, user_cols)
                        n += 1
        table = out.table(("metadata", *user_cols))
        if table.num_rows:
            table = self._align_output(table)
        return self._batches(task, table, self.max_batch_bytes)


def _cell(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value
