"""PDFPreprocessStage: PDFs -> one page-image row per page (NeMo Curator's stage, pages rendered
with pypdfium2), the input of a page-level model."""

from __future__ import annotations

import base64
import json
import os
import zipfile
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa
from curator import FileGroupTask, ProcessingStage, Resources
from curator.errors import ConfigError

from curator_interleaved.pdf.extract import image_to_bytes, render_pdf_pages
from curator_interleaved.tasks import INTERLEAVED_SCHEMA, InterleavedBatch

__all__ = ["PDFPreprocessStage", "resolve_cc_pdf_zip_path"]


def resolve_cc_pdf_zip_path(file_name: str, zip_base_dir: str) -> tuple[str, str]:
    """``(zip path, member)`` of a CC-MAIN-2021-31-PDF-UNTRUNCATED file name: ``0001234.pdf``
    is in ``<base>/0000-0999/0001.zip``."""
    num = int(file_name.replace(".pdf", ""))
    zip_num = num // 1000
    start = (zip_num // 1000) * 1000
    return (os.path.join(zip_base_dir, f"{start:04d}-{start + 999:04d}", f"{zip_num:04d}.zip"),
            file_name)


@dataclass
class PDFPreprocessStage(ProcessingStage[FileGroupTask, InterleavedBatch]):
    """Renders each PDF of a :class:`~curator_interleaved.pdf.partitioning.PDFPartitioningStage`
    task to page images: one row per page (``modality`` ``page_image``, PNG bytes in
    ``binary_content``, ``text_content`` empty, ``url`` and ``pdf_name`` columns).

    The PDF bytes come from ``pdf_dir`` (``<pdf_dir>/<file_name>``), ``zip_base_dir`` (CC-MAIN
    zip archives) or ``jsonl_base_dir`` (base64 ``content`` of the line at the entry's
    ``byte_offset`` or ``line_idx`` in ``jsonl_file``). A PDF that cannot be read or opened
    (missing, encrypted, damaged beyond repair) and a page that fails to render each go to the
    rejected sink with their reason; the other pages are kept.

    Parameters:
        zip_base_dir, pdf_dir, jsonl_base_dir: where the PDFs are (one of them).
        dpi: render resolution (default 300), capped so a page fits 1664x2048 pixels.
        max_pages: pages rendered per PDF (default 50).
    """

    zip_base_dir: str | None = None
    pdf_dir: str | None = None
    jsonl_base_dir: str | None = None
    dpi: int = 300
    max_pages: int = 50
    name: str = "pdf_preprocess"
    resources: Resources = field(default_factory=lambda: Resources(cpus=2.0))
    modality: ClassVar[str] = "interleaved"

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.zip_base_dir, self.pdf_dir,
                                       self.jsonl_base_dir)) != 1:
            raise ConfigError(f"{self.name}: set exactly one of zip_base_dir, pdf_dir or "
                              f"jsonl_base_dir (where the PDFs are)")

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    def _pdf_bytes(self, entry: dict[str, Any]) -> bytes:
        name = entry["file_name"]
        if self.pdf_dir is not None:
            with open(os.path.join(self.pdf_dir, name), "rb") as fh:
                return fh.read()
        if self.zip_base_dir is not None:
            zip_path, member = resolve_cc_pdf_zip_path(name, self.zip_base_dir)
            with zipfile.ZipFile(zip_path) as zf:
                return zf.read(member)
        path = os.path.join(self.jsonl_base_dir or "", entry["jsonl_file"])
        with open(path, "rb") as fh:
            if entry.get("byte_offset") is not None:
                fh.seek(int(entry["byte_offset"]))
                line = fh.readline()
            else:
                want = int(entry.get("line_idx", 0))
                line = b""
                for i, raw in enumerate(fh):
                    if i == want:
                        line = raw
                        break
        return base64.b64decode(json.loads(line)["content"])

    def process(self, task: FileGroupTask) -> InterleavedBatch | None:
        rows: list[dict[str, Any]] = []
        for raw in task.data:
            entry = json.loads(raw)
            name = entry["file_name"]
            record = {"file_name": name, "url": entry.get("url", "")}
            try:
                pdf = self._pdf_bytes(entry)
            except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
                self.reject(task, "unreadable_pdf", error=e, record=record, source=name)
                continue
            try:
                pages = render_pdf_pages(pdf, dpi=self.dpi, max_pages=self.max_pages)
            except ValueError as e:
                code, detail = (e.args + ("",))[:2]
                self.reject(task, str(code), error=str(detail), record=record, source=name)
                continue
            sample_id = name.rsplit(".", 1)[0]
            for page_num, image in enumerate(pages):
                if image is None:
                    self.reject(task, "page_error", error="PDFium could not render the page",
                                record={**record, "page": page_num}, source=name)
                    continue
                rows.append({"sample_id": sample_id, "position": page_num,
                             "modality": "page_image", "content_type": "image/png",
                             "text_content": "", "binary_content": image_to_bytes(image),
                             "source_ref": None, "materialize_error": None,
                             "url": record["url"], "pdf_name": name})
        if not rows:
            return None
        schema = pa.schema([*INTERLEAVED_SCHEMA, pa.field("url", pa.string()),
                            pa.field("pdf_name", pa.string())])
        return InterleavedBatch(task_id=task.task_id, dataset_name=task.dataset_name,
                                data=pa.Table.from_pylist(rows, schema=schema),
                                metadata=dict(task.metadata), stage_perf=list(task.stage_perf))
