"""InterleavedWebdatasetWriterStage: interleaved rows -> one MINT-1T style tar shard per task.

Each document becomes ``{key}.json`` (``sample_id``, ``texts`` and ``images`` lists indexed by
position with ``None`` at gaps, the metadata row's user columns, and content-row user columns as
per-image / per-text lists) and one member ``{key}.{position}.{ext}`` per image, where ``key`` is
the percent-encoded ``sample_id``. Read back with
``InterleavedWebdatasetReader(sample_id_field="sample_id")``: the same rows, in order. Member
metadata (mtime, owner) is fixed, so the same rows give the same bytes on every run.
"""

from __future__ import annotations

import io
import json
import mimetypes
import tarfile
import urllib.parse
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa
from curator.io import atomic_write

from curator_interleaved.io.writers.base import BaseInterleavedWriter
from curator_interleaved.tasks import RESERVED_COLUMNS

__all__ = ["InterleavedWebdatasetWriterStage"]

_CONTENT_TYPE_TO_EXT = {"image/jpeg": "jpg", "image/png": "png", "image/tiff": "tiff",
                        "image/webp": "webp", "image/gif": "gif", "image/bmp": "bmp",
                        "image/avif": "avif"}


def _escape_key(sample_id: str) -> str:
    return urllib.parse.quote(str(sample_id), safe="")


def _ext_from_content_type(content_type: str | None) -> str:
    if content_type:
        ext = _CONTENT_TYPE_TO_EXT.get(content_type)
        if ext:
            return ext
        guessed = mimetypes.guess_extension(content_type, strict=False)
        if guessed:
            return guessed.lstrip(".")
    return "bin"


def _add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name=name)
    info.size = len(data)
    info.mtime = 0
    info.mode = 0o644
    tf.addfile(info, io.BytesIO(data))


@dataclass
class InterleavedWebdatasetWriterStage(BaseInterleavedWriter):
    """Writes each batch as ``{path}/{task_id}.tar`` in the MINT-1T layout (see the module doc).
    Only ``metadata``, ``text`` and ``image`` rows can be written (another modality is a
    ``ValueError``); image rows need their bytes (``materialize_on_write``, the default). See
    :class:`~curator_interleaved.io.writers.base.BaseInterleavedWriter` for the parameters."""

    file_extension: str = "tar"
    name: str = "interleaved_webdataset_writer"
    _SUPPORTED_MODALITIES: ClassVar[frozenset[str]] = frozenset({"metadata", "text", "image"})

    def write_table(self, table: pa.Table, file_path: str) -> None:
        modalities = {m for m in table["modality"].unique().to_pylist() if m is not None}
        unsupported = modalities - self._SUPPORTED_MODALITIES
        if unsupported:
            raise ValueError(f"{self.name}: unsupported modality {sorted(unsupported)!r}; "
                             f"supported: {sorted(self._SUPPORTED_MODALITIES)}")
        user_cols = [c for c in table.column_names if c not in RESERVED_COLUMNS]
        docs: dict[str, list[dict[str, Any]]] = {}
        for row in table.to_pylist():
            docs.setdefault(row["sample_id"], []).append(row)
        with atomic_write(file_path, "wb") as fh, tarfile.open(fileobj=fh, mode="w",
                                                               format=tarfile.PAX_FORMAT) as tf:
            for sample_id, rows in docs.items():
                self._write_sample(tf, sample_id, rows, user_cols)
        self._log_metric("samples_written", float(len(docs)))

    @staticmethod
    def _write_sample(tf: tarfile.TarFile, sample_id: str, rows: list[dict[str, Any]],
                      user_cols: list[str]) -> None:
        key = _escape_key(sample_id)
        content = sorted((r for r in rows if r["position"] >= 0), key=lambda r: r["position"])
        size = (content[-1]["position"] + 1) if content else 0
        texts: list[str | None] = [None] * size
        images: list[str | None] = [None] * size
        for r in content:
            pos = int(r["position"])
            if r["modality"] == "text":
                texts[pos] = r["text_content"]
            elif r["modality"] == "image":
                name = f"{key}.{pos}.{_ext_from_content_type(r['content_type'])}"
                images[pos] = name
                if r["binary_content"] is not None:
                    _add(tf, name, bytes(r["binary_content"]))
        payload: dict[str, Any] = {"sample_id": sample_id, "texts": texts, "images": images}
        meta = next((r for r in rows if r["position"] == -1), None)
        if meta is not None:
            payload.update({c: meta[c] for c in user_cols if meta.get(c) is not None})
        image_rows = [r for r in content if r["modality"] == "image"]
        text_rows = [r for r in content if r["modality"] == "text"]
        for c in user_cols:
            if c in payload:
                continue
            in_img = any(r.get(c) is not None for r in image_rows)
            in_txt = any(r.get(c) is not None for r in text_rows)
            if in_img and not in_txt:
                payload[c] = [r.get(c) for r in image_rows]
            elif in_txt and not in_img:
                payload[c] = [r.get(c) for r in text_rows]
            elif in_img and in_txt:
                payload[c] = [r.get(c) for r in content]
        _add(tf, f"{key}.json", json.dumps(payload, ensure_ascii=False, default=str).encode())


def _is_null(value: object) -> bool:
    """Whether ``value`` is a null (None, NaN, pandas NA); NeMo Curator's helper."""
    if value is None:
        return True
    try:
        import pandas as pd

        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False
