"""Rejected records: bad input is written here with its reason, never silently dropped."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from curator.io import atomic_write, join_path

if TYPE_CHECKING:
    from curator.tasks import Task

__all__ = ["RejectedRecord", "RejectedSink", "FailedTask", "FAILED_SUFFIX"]

FAILED_SUFFIX = ".failed"
"""Entries of failed tasks are ``{stage}/{task_id}.failed.jsonl`` (the reason and traceback)
beside ``.failed.task.pkl`` (the task) and, for tabular data, ``.failed.parquet`` (its data)."""


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


@dataclass
class FailedTask:
    """A task that failed for good in ``stage`` (after its retries): the run is not ok.

    ``entry`` is the sink file with the reason and traceback (``None`` when the sink keeps
    everything in memory, then ``task`` holds the task itself). Replay it with
    :meth:`curator.Pipeline.replay`.
    """

    stage: str
    task_id: str
    partition: str | None
    error: str
    entry: str | None = None
    task: Task | None = field(default=None, repr=False)

    def __str__(self) -> str:
        last = self.error.strip().splitlines()[-1] if self.error.strip() else "?"
        return f"{self.stage}/{self.task_id}: {last}"


class RejectedSink:
    """Collects rejected records and failed tasks, counts them per stage, and (with ``path``)
    writes them.

    Records rejected by design go as JSON lines to ``{path}/{stage}/{task_id}.jsonl``; a task
    that failed for good is written whole: ``{stage}/{task_id}.failed.jsonl`` (reason and
    traceback), ``.failed.task.pkl`` (the task, cloudpickled) and ``.failed.parquet`` (its data,
    when it is a ``pyarrow.Table``), so it can be replayed. Writes are atomic and names
    deterministic, so a re-run overwrites instead of duplicating; within one run no entry
    overwrites another (a second entry for the same stage and task gets a ``.2``, ``.3`` …
    suffix). Without ``path`` records and failed tasks are kept in memory (``records``,
    ``failed``) and the run summary warns about them.
    """

    def __init__(self, path: str | None = None, keep_in_memory: int = 100_000) -> None:
        self.path = path
        self.keep_in_memory = keep_in_memory
        self.records: list[RejectedRecord] = []
        self.failed: list[FailedTask] = []
        self.counts: dict[str, int] = {}
        self.files: list[str] = []
        self._names: dict[str, int] = {}
        self.run_id = ""  # the output-directory run id, recorded with failed tasks for replay
        self._lock = threading.Lock()

    def _target(self, stage: str, task_id: str, suffix: str) -> str:
        """A name for a new entry, unique within this run."""
        base = join_path(self.path or "", _safe(stage), _safe(task_id))
        with self._lock:
            n = self._names.get(base + suffix, 0) + 1
            self._names[base + suffix] = n
        return base + (f".{n}" if n > 1 else "") + suffix

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
        target = self._target(stage, task_id, ".jsonl")
        with atomic_write(target, "w") as fh:
            for rec in records:
                fh.write(rec.to_json() + "\n")
        with self._lock:
            self.files.append(target)

    def add_failed(self, record: RejectedRecord, task: Task | None) -> FailedTask:
        """Keep ``task``, which failed for good in ``record.stage``, whole with its reason."""
        failed = FailedTask(record.stage, record.task_id, record.record.get("partition"),
                            record.error)
        with self._lock:
            self.counts[record.stage] = self.counts.get(record.stage, 0) + 1
            if self.path is None:
                self.records.append(record)
                failed.task = task
        if self.path is not None:
            failed.entry = self._write_failed(record, task)
        with self._lock:
            self.failed.append(failed)
        return failed

    def _write_failed(self, record: RejectedRecord, task: Task | None) -> str:
        import cloudpickle  # noqa: PLC0415

        entry = self._target(record.stage, record.task_id, FAILED_SUFFIX + ".jsonl")
        stem = entry[: -len(".jsonl")]
        files: dict[str, str] = {}
        if task is not None:
            shell = task
            if _is_table(task.data):
                import pyarrow.parquet as pq  # noqa: PLC0415

                with atomic_write(stem + ".parquet", "wb") as fh:
                    pq.write_table(task.data, fh)
                files["data"] = stem.rsplit("/", 1)[-1] + ".parquet"
                shell = _without_data(task)
            with atomic_write(stem + ".task.pkl", "wb") as fh:
                cloudpickle.dump(shell, fh)
            files["task"] = stem.rsplit("/", 1)[-1] + ".task.pkl"
        rec = RejectedRecord(**{**asdict(record), "record": {**record.record, "files": files,
                                                             "run_id": self.run_id}})
        with atomic_write(entry, "w") as fh:
            fh.write(rec.to_json() + "\n")
        with self._lock:
            self.files.append(entry)
        return entry

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _is_table(data: Any) -> bool:
    try:
        import pyarrow as pa  # noqa: PLC0415
    except ImportError:  # pragma: no cover - pyarrow is a core dependency
        return False
    return isinstance(data, pa.Table)


def _without_data(task: Task) -> Task:
    import copy  # noqa: PLC0415

    shell = copy.copy(task)
    object.__setattr__(shell, "data", None)  # past a subclass's converting __setattr__
    return shell


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "_"
