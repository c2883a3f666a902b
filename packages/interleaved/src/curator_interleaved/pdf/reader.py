"""PDFReader: PDF files -> interleaved documents of ordered text blocks and embedded images,
on the CPU (see :mod:`curator_interleaved.pdf.extract` for positions and reading order)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa
from curator import CompositeStage, EmptyTask, FileGroupTask, ProcessingStage
from curator.errors import ConfigError
from curator.io import file_stem, get_fs
from curator.stages.file_partitioning import FilePartitioningStage

from curator_interleaved.io.readers.base import split_table_by_group
from curator_interleaved.io.readers.webdataset import RowColumns
from curator_interleaved.pdf.extract import extract_pdf
from curator_interleaved.tasks import InterleavedBatch

__all__ = ["PDFReader", "PDFReaderStage"]

_POSITION_COLUMNS = ("page", "x0", "y0", "x1", "y1")


@dataclass
class PDFReaderStage(ProcessingStage[FileGroupTask, InterleavedBatch]):
    """Reads each PDF of a partition into one document (``sample_id``: the file's stem): a
    metadata row (``pdf_path``, ``num_pages``) and its text blocks and images in reading order,
    each with ``page`` and its box ``x0, y0, x1, y1`` (points, origin top left of the page as
    displayed). Images carry their bytes (JPEG as stored in the PDF, else PNG).

    Every page is accounted for: it gives segments, or goes to the rejected sink with its reason
    (``empty_page``, ``page_error``). A PDF that cannot be opened goes there whole
    (``encrypted_pdf`` without the right password, ``unreadable_pdf``); the other PDFs are kept.
    Damaged cross-reference tables are repaired by PDFium.

    Parameters:
        password: the password of encrypted PDFs (one for all), or ``passwords`` by file name.
        max_pages: pages read per PDF (default all; pages beyond are rejected as
            ``page_limit``).
        max_batch_bytes: split a partition's rows into batches (never inside a document).
    """

    password: str | None = None
    passwords: dict[str, str] = field(default_factory=dict)
    max_pages: int | None = None
    max_batch_bytes: int | None = None
    name: str = "pdf_reader"
    modality: ClassVar[str] = "interleaved"
    kind: ClassVar[str] = "reader"

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], ["sample_id", "position", "modality", *_POSITION_COLUMNS]

    def _read_one(self, task: FileGroupTask, path: str, out: RowColumns) -> None:
        try:
            fs, inner = get_fs(path)
            with fs.open(inner, "rb") as fh:
                data = fh.read()
        except OSError as e:
            self.reject(task, "unreadable_pdf", error=e, record={"path": path}, source=path)
            return
        name = path.rsplit("/", 1)[-1]
        password = self.passwords.get(name, self.password)
        try:
            pages = extract_pdf(data, password=password)
        except ValueError as e:
            code, detail = (e.args + ("",))[:2]
            self.reject(task, str(code), error=str(detail), record={"path": path}, source=path)
            return
        sample_id = file_stem(path)
        limit = self.max_pages if self.max_pages is not None else len(pages)
        out.add(sample_id, -1, "metadata", "application/json",
                source_ref=InterleavedBatch.build_source_ref(path=path, member=None),
                user={"pdf_path": path, "num_pages": len(pages)})
        position = 0
        for result in pages:
            record = {"path": path, "page": result.page}
            if result.page >= limit:
                self.reject(task, "page_limit", error=f"max_pages={self.max_pages}",
                            record=record, source=path)
                continue
            if result.error is not None:
                self.reject(task, result.reason or "page_error", error=result.error,
                            record=record, source=path)
                continue
            for seg in result.segments:
                box = {"page": seg.page, "x0": round(seg.x0, 3), "y0": round(seg.y0, 3),
                       "x1": round(seg.x1, 3), "y1": round(seg.y1, 3)}
                out.add(sample_id, position, seg.modality, seg.content_type, text=seg.text,
                        binary=seg.data, user=box)
                position += 1

    def process(self, task: FileGroupTask) -> InterleavedBatch | list[InterleavedBatch]:
        out = RowColumns()
        for path in map(str, task.data):
            self._read_one(task, path, out)
        table = out.table(("pdf_path", "num_pages", *_POSITION_COLUMNS))
        table = table.cast(pa.schema([f if f.name not in _POSITION_COLUMNS[1:] else
                                      pa.field(f.name, pa.float64()) for f in table.schema]))
        splits = split_table_by_group(table, "sample_id", self.max_batch_bytes)
        meta = {**task.metadata, "source_files": list(task.data)}
        if len(splits) == 1:
            return InterleavedBatch(task_id=task.task_id, dataset_name=task.dataset_name,
                                    data=table, metadata=meta, stage_perf=list(task.stage_perf))
        return [InterleavedBatch(task_id=f"{task.task_id}_{k:05d}", dataset_name=task.dataset_name,
                                 data=s, metadata=dict(meta), stage_perf=list(task.stage_perf))
                for k, s in enumerate(splits)]


@dataclass
class PDFReader(CompositeStage[EmptyTask, InterleavedBatch]):
    """Reads PDF files (a file, directory, glob or list) into interleaved documents: file
    partitioning + :class:`PDFReaderStage` (see there).

    Example::

        PDFReader(file_paths="/data/pdfs/", files_per_partition=16)
    """

    file_paths: str | list[str] = ""
    files_per_partition: int | None = None
    password: str | None = None
    passwords: dict[str, str] = field(default_factory=dict)
    max_pages: int | None = None
    max_batch_bytes: int | None = None
    file_extensions: list[str] = field(default_factory=lambda: [".pdf", ".PDF"])
    read_kwargs: dict[str, Any] = field(default_factory=dict)
    name: str = "pdf_reader"
    modality: ClassVar[str] = "interleaved"
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        if not self.file_paths:
            raise ConfigError(f"{self.name}: file_paths is required (PDF files or directories)")

    def decompose(self) -> list[ProcessingStage]:
        opts = (self.read_kwargs or {}).get("storage_options")
        return [FilePartitioningStage(file_paths=self.file_paths,
                                      files_per_partition=self.files_per_partition,
                                      file_extensions=list(self.file_extensions),
                                      storage_options=opts),
                PDFReaderStage(password=self.password, passwords=dict(self.passwords),
                               max_pages=self.max_pages, max_batch_bytes=self.max_batch_bytes)]
