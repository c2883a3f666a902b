"""Rejected records: bad input is written here with its reason, never silently dropped."""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from curator.io import atomic_write, join_path

if TYPE_CHECKING:
    from curator.tasks import Task

__all__ = ["RejectedRecord", "RejectedSink", "FailedTask", "FAILED_SUFFIX"]

_log = logging.getLogger(__name__)

FAILED_SUFFIX = ".failed"
"""Entries of failed tasks are ``{stage}/{task_id}.failed.jsonl`` (the reason and traceback)
beside ``.failed.task.json`` (the task, naming its registered task class) and the files of its
data: ``.failed.parquet`` for tables, the image / audio / video bytes it carries (see
:mod:`curator.task_files`). Only a task that cannot be stored as data is pickled
(``.failed.task.pkl``); replay reads that only with ``trust_pickles=True``."""


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
    traceback), ``.failed.task.json`` (the task as data, naming its registered task class) and
    the files of its data (``.failed.parquet`` for a table, the bytes of images, audio and
    clips), so it can be replayed without reading a pickle. A task whose class is not
    registered as a ``task`` or that holds arbitrary objects is pickled instead
    (``.failed.task.pkl``, with a warning); replay reads that only when trusted. Writes are atomic and names
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
        from curator.task_files import TASK_SUFFIX, TaskNotSerializable, save_task

        entry = self._target(record.stage, record.task_id, FAILED_SUFFIX + ".jsonl")
        stem = entry[: -len(".jsonl")]
        files: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        if task is not None:
            try:
                written = save_task(task, stem, stage=record.stage)
                files["task"] = written[-1]
                files["data"] = [n for n in written if not n.endswith(TASK_SUFFIX)]
            except TaskNotSerializable as exc:
                files["task"] = self._write_pickle(task, stem)
                extra["pickled"] = f"{exc}"
                _log.warning("%s/%s: the failed task is kept as a pickle (%s); `curator replay` "
                             "reads it only with --trust-pickles", record.stage, record.task_id,
                             exc)
        rec = RejectedRecord(**{**asdict(record), "record": {**record.record, "files": files,
                                                             "run_id": self.run_id, **extra}})
        with atomic_write(entry, "w") as fh:
            fh.write(rec.to_json() + "\n")
        with self._lock:
            self.files.append(entry)
        return entry

    @staticmethod
    def _write_pickle(task: Task, stem: str) -> str:
        """Keep a task that cannot be stored as data whole anyway (nothing lost); only
        ``trust_pickles`` replays read it."""
        import cloudpickle

        with atomic_write(stem + ".task.pkl", "wb") as fh:
            cloudpickle.dump(task, fh)
        return stem.rsplit("/", 1)[-1] + ".task.pkl"

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "_"
