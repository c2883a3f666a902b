"""PDFPartitioningStage: a JSONL manifest of PDFs -> FileGroupTasks (NeMo Curator's stage)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import ClassVar

from curator import EmptyTask, FileGroupTask, ProcessingStage, Resources
from curator.errors import ConfigError
from curator.io import get_fs
from curator.tasks import stable_id

__all__ = ["PDFPartitioningStage"]

log = logging.getLogger(__name__)


@dataclass
class PDFPartitioningStage(ProcessingStage[EmptyTask, FileGroupTask]):
    """Reads a JSONL manifest and makes one ``FileGroupTask`` per ``pdfs_per_task`` PDFs; each
    entry is a JSON string ``{"file_name", "url", ...}`` for :class:`PDFPreprocessStage`.

    A line holds ``file_name`` (one PDF; its other fields are kept) or ``cc_pdf_file_names``
    (CC-MAIN style: several PDFs of one ``url``). A line that is not JSON or names no PDF goes to
    the rejected sink with its line number. Task ids come from the entries (the same on every
    run).

    Parameters:
        manifest_path: the JSONL manifest (local or fsspec URL).
        pdfs_per_task: PDFs per task.
        max_pdfs: stop after this many PDFs.
        dataset_name: the tasks' dataset name.
        file_name_field, file_names_field, url_field: the manifest's field names.
    """

    manifest_path: str = ""
    pdfs_per_task: int = 10
    max_pdfs: int | None = None
    dataset_name: str = "pdf_dataset"
    file_name_field: str = "file_name"
    file_names_field: str = "cc_pdf_file_names"
    url_field: str = "url"
    name: str = "pdf_partitioning"
    resources: Resources = field(default_factory=lambda: Resources(cpus=0.5))
    modality: ClassVar[str] = "interleaved"

    def __post_init__(self) -> None:
        if not self.manifest_path:
            raise ConfigError(f"{self.name}: manifest_path (a JSONL file listing the PDFs) is "
                              f"required")
        if self.pdfs_per_task < 1:
            raise ConfigError(f"{self.name}: pdfs_per_task must be >= 1")

    @property
    def is_source(self) -> bool:
        return True

    @property
    def input_paths(self) -> list[str]:
        return [self.manifest_path]

    def inputs(self) -> tuple[list[str], list[str]]:
        return [], []

    def outputs(self) -> tuple[list[str], list[str]]:
        return [], []

    def num_workers(self) -> int | None:
        return 1

    def _parse_manifest(self) -> list[str]:
        entries: list[str] = []
        fs, path = get_fs(self.manifest_path)
        with fs.open(path, "r") as fh:
            for lineno, raw in enumerate(fh, start=1):
                line = raw.strip()
                if not line:
                    continue
                try:
                    record = json.loads(line)
                    if not isinstance(record, dict):
                        raise ValueError("not a JSON object")
                except ValueError as e:
                    self.reject(None, "malformed_manifest_line", error=str(e),
                                source=f"{self.manifest_path}:{lineno}",
                                record={"line": line[:500]})
                    continue
                url = record.get(self.url_field, "")
                if self.file_names_field in record:
                    names, extra = list(record[self.file_names_field] or []), {}
                elif self.file_name_field in record:
                    names = [record[self.file_name_field]]
                    extra = {k: v for k, v in record.items() if k not in (
                        self.file_name_field, self.url_field, self.file_names_field)}
                else:
                    self.reject(None, "malformed_manifest_line",
                                error=f"no {self.file_name_field!r} or "
                                      f"{self.file_names_field!r} field",
                                source=f"{self.manifest_path}:{lineno}", record=record)
                    continue
                for fname in dict.fromkeys(names):
                    if fname:
                        entries.append(json.dumps({"file_name": fname, "url": url, **extra}))
                if self.max_pdfs and len(entries) >= self.max_pdfs:
                    return entries[:self.max_pdfs]
        return entries

    def process(self, _: EmptyTask) -> list[FileGroupTask]:
        entries = self._parse_manifest()
        tasks = []
        for k in range(0, len(entries), self.pdfs_per_task):
            batch = entries[k:k + self.pdfs_per_task]
            tasks.append(FileGroupTask(task_id=f"pdfs-{stable_id(*batch)}",
                                       dataset_name=self.dataset_name, data=batch,
                                       metadata={"source_files": batch,
                                                 "partition_index": k // self.pdfs_per_task}))
        log.info("Created %d tasks from %d PDFs", len(tasks), len(entries))
        return tasks
