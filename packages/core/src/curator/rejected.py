"""Rejected records: bad input is written here with its reason, never silently dropped."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from typing import Any

from curator.io import atomic_write, join_path

__all__ = ["RejectedRecord", "RejectedSink"]


@dataclass
class RejectedRecord:
    """One record (or whole task) a stage could not process or chose to set aside.

    ``kind`` is ``"record"`` for one bad item (a malformed line, a corrupt image), ``"task"`` for
    a task that kept failing, ``"filtered"`` for a document a filter in split mode set aside.
    """

    stage: str
    reason: str
    task_id: str = ""
    source: str = ""
    error: str = ""
    kind: str = "record"
    record: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=repr, ensure_ascii=False)


class RejectedSink:
    """Collects rejected records, counts them per stage, and (with ``path``) writes them.

    Records are written as JSON lines to ``{path}/{stage}/{task_id}.jsonl``, atomically and with
    deterministic names, so a re-run overwrites instead of duplicating. Without ``path`` they are
    kept in memory (``records``) and the run summary warns about them.
    """

    def __init__(self, path: str | None = None, keep_in_memory: int = 100_000) -> None:
        self.path = path
        self.keep_in_memory = keep_in_memory
        self.records: list[RejectedRecord] = []
        self.counts: dict[str, int] = {}
        self.files: list[str] = []
        self._lock = threading.Lock()

    def add(self, stage: str, task_id: str, records: list[RejectedRecord]) -> None:
        """Record what ``stage`` rejected while processing task ``task_id``."""
        if not records:
            return
        with self._lock:
            self.counts[stage] = self.counts.get(stage, 0) + len(records)
            if self.path is None:
                room = self.keep_in_memory - len(self.records)
                self.records.extend(records[: max(room, 0)])
                return
        target = join_path(self.path, _safe(stage), f"{_safe(task_id)}.jsonl")
        with atomic_write(target, "w") as fh:
            for rec in records:
                fh.write(rec.to_json() + "\n")
        with self._lock:
            self.files.append(target)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "_"
