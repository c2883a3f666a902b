"""Tasks: the units of work that flow between stages."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = ["Task", "FileGroupTask", "EmptyTask", "StagePerf", "EMPTY_TASK", "stable_id"]

T = TypeVar("T")


def stable_id(*parts: Any, length: int = 16) -> str:
    """A deterministic short hex id of ``parts`` (same input, same id, on every run)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=16).hexdigest()
    return digest[:length]


@dataclass
class StagePerf:
    """What one stage did to one task: timing and item counts."""

    stage: str
    process_time_s: float
    items_in: int
    items_out: int
    worker: str = ""


@dataclass
class Task(Generic[T]):
    """A unit of work flowing between stages.

    ``task_id`` must be deterministic (derived from the source partition), because writers name
    their files after it and resumed runs recognise finished work by it. A stage that emits several
    tasks from one input names them ``f"{task.task_id}_{i}"``; a 1:1 stage keeps the id.

    ``metadata`` travels with the task; ``metadata["source_files"]`` lists the input files the task
    came from and ``metadata["partition"]`` the source partition (set by the executor).
    """

    task_id: str
    dataset_name: str
    data: T
    metadata: dict[str, Any] = field(default_factory=dict)
    stage_perf: list[StagePerf] = field(default_factory=list)

    @property
    def _metadata(self) -> dict[str, Any]:  # NeMo Curator's name
        return self.metadata

    @property
    def _stage_perf(self) -> list[StagePerf]:  # NeMo Curator's name
        return self.stage_perf

    @property
    def num_items(self) -> int:
        """How many records the task holds (rows, images, files …)."""
        try:
            return len(self.data)  # type: ignore[arg-type]
        except TypeError:
            return 1

    @property
    def partition(self) -> str | None:
        """The source partition this task descends from (used for resumable runs)."""
        return self.metadata.get("partition")

    def validate(self) -> bool:
        """Whether the task's data is well formed; subclasses check their own invariants."""
        return True

    def derive(self, data: Any, *, suffix: str | int | None = None, cls: type[Task] | None = None,
               **kwargs: Any) -> Task:
        """A new task carrying this one's id, dataset name and metadata with new ``data``.

        ``suffix`` makes the id ``f"{task_id}_{suffix}"`` for 1:n stages; ``cls`` picks the task
        class (default: this one's); extra keyword arguments go to its constructor.
        """
        tid = self.task_id if suffix is None else f"{self.task_id}_{suffix}"
        klass = cls or type(self)
        return klass(task_id=tid, dataset_name=self.dataset_name, data=data,
                     metadata=dict(self.metadata), stage_perf=list(self.stage_perf), **kwargs)


@dataclass
class FileGroupTask(Task[list[str]]):
    """A list of file paths (one source partition) for a reader to read."""

    def __post_init__(self) -> None:
        self.metadata.setdefault("source_files", list(self.data))


@dataclass
class EmptyTask(Task[None]):
    """The root task handed to the first stage of a pipeline (a source stage ignores it)."""

    @property
    def num_items(self) -> int:
        return 0


EMPTY_TASK = EmptyTask(task_id="empty", dataset_name="", data=None)


def new_task_id() -> str:
    """A random task id, for tasks that have no deterministic source (tests, ad-hoc input)."""
    return uuid.uuid4().hex[:16]
