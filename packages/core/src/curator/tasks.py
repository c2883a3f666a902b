"""Tasks: the units of work that flow between stages."""

from __future__ import annotations

import dataclasses
import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = ["Task", "FileGroupTask", "EmptyTask", "StagePerf", "EMPTY_TASK", "stable_id",
           "get_deterministic_hash"]

T = TypeVar("T")


def stable_id(*parts: Any, length: int = 16) -> str:
    """A deterministic short hex id of ``parts`` (same input, same id, on every run)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=16).hexdigest()
    return digest[:length]


def get_deterministic_hash(inputs: list[str], seed: str = "") -> str:
    """NeMo Curator's content hash: sha256 of the sorted inputs and ``seed``, 12 hex digits."""
    combined = "|".join(sorted(inputs)) + "|" + seed
    return hashlib.sha256(combined.encode()).hexdigest()[:12]


class _TaskMeta(type):
    """Accepts NeMo Curator's constructor forms on every Task class:
    ``DocumentBatch(dataset_name=..., data=...)`` without ``task_id`` (NeMo >= 1.3; the id is then
    derived from the content, see :meth:`Task.get_deterministic_id`), ``_metadata=`` and
    ``_stage_perf=`` for ``metadata=`` / ``stage_perf=``, and NeMo's positional order
    ``(dataset_name, data)`` when at most two positional arguments and no ``task_id`` are given
    (two strings are read as ours: ``(task_id, dataset_name)`` with a default ``data``). Our own
    forms (``task_id`` first; three or more positional arguments) keep working."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        for nemo, ours in (("_metadata", "metadata"), ("_stage_perf", "stage_perf")):
            if nemo in kwargs:
                if ours in kwargs:
                    raise TypeError(f"{cls.__name__}: give {ours}= or {nemo}=, not both")
                value = kwargs.pop(nemo)
                kwargs[ours] = value if value is not None else ([] if ours == "stage_perf" else {})
        derive_id = False
        if "task_id" not in kwargs and "task_id" in getattr(cls, "__dataclass_fields__", {}):
            ours_positional = len(args) >= 3 or (len(args) == 2 and (
                "data" in kwargs or isinstance(args[1], str))) or (
                len(args) == 1 and "dataset_name" in kwargs)
            if not ours_positional and not _field_has_default(cls, "task_id"):
                for name, value in zip(("dataset_name", "data"), args, strict=False):
                    if name in kwargs:
                        raise TypeError(f"{cls.__name__}: {name} given twice")
                    kwargs[name] = value
                args = ()
                kwargs["task_id"] = ""
                derive_id = True
        obj = super().__call__(*args, **kwargs)
        if derive_id:
            obj.task_id = obj.get_deterministic_id() or obj._content_id()
        return obj


def _field_has_default(cls: type, name: str) -> bool:
    f = cls.__dataclass_fields__[name]  # type: ignore[attr-defined]
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


@dataclass
class StagePerf:
    """What one stage did to one task: timing and item counts."""

    stage: str
    process_time_s: float
    items_in: int
    items_out: int
    worker: str = ""


@dataclass
class Task(Generic[T], metaclass=_TaskMeta):
    """A unit of work flowing between stages.

    ``task_id`` must be deterministic (derived from the source partition), because writers name
    their files after it and resumed runs recognise finished work by it. A stage that emits several
    tasks from one input names them ``f"{task.task_id}_{i}"``; a 1:1 stage keeps the id.

    ``metadata`` travels with the task; ``metadata["source_files"]`` lists the input files the task
    came from and ``metadata["partition"]`` the source partition (set by the executor).

    NeMo Curator's forms work too: ``Task(dataset_name=..., data=...)`` without ``task_id`` (the
    id is then :meth:`get_deterministic_id`, or a hash of the content, so it is the same on every
    run), ``_metadata=`` / ``_stage_perf=`` in the constructor and as attributes.
    """

    task_id: str
    dataset_name: str
    data: T
    metadata: dict[str, Any] = field(default_factory=dict)
    stage_perf: list[StagePerf] = field(default_factory=list)

    @property
    def _metadata(self) -> dict[str, Any]:  # NeMo Curator's name
        return self.metadata

    @_metadata.setter
    def _metadata(self, value: dict[str, Any]) -> None:
        self.metadata = value

    @property
    def _stage_perf(self) -> list[StagePerf]:  # NeMo Curator's name
        return self.stage_perf

    @_stage_perf.setter
    def _stage_perf(self, value: list[StagePerf]) -> None:
        self.stage_perf = value

    def add_stage_perf(self, perf: StagePerf) -> None:
        """Append one stage's performance record (NeMo Curator's method)."""
        self.stage_perf.append(perf)

    def get_deterministic_id(self) -> str | None:
        """A content-based id for this task as a source, or ``None`` (NeMo Curator's method;
        :class:`FileGroupTask` hashes its sorted paths)."""
        return None

    def _content_id(self) -> str:
        """The id given to a task constructed without ``task_id``: a hash of its class, dataset
        name and data (subclasses with large data override this)."""
        return stable_id(type(self).__name__, self.dataset_name, repr(self.data))

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

    def get_deterministic_id(self) -> str:
        """NeMo Curator's content id: a hash of the sorted file paths."""
        return get_deterministic_hash([str(p) for p in self.data])


@dataclass
class EmptyTask(Task[None]):
    """The root task handed to the first stage of a pipeline (a source stage ignores it).
    ``EmptyTask()`` needs no arguments."""

    task_id: str = "empty"
    dataset_name: str = ""
    data: None = None

    @property
    def num_items(self) -> int:
        return 0


EMPTY_TASK = EmptyTask(task_id="empty", dataset_name="", data=None)


def new_task_id() -> str:
    """A random task id, for tasks that have no deterministic source (tests, ad-hoc input)."""
    return uuid.uuid4().hex[:16]
