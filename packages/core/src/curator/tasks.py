"""Tasks: the units of work that flow between stages."""

from __future__ import annotations

import dataclasses
import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = ["Task", "FileGroupTask", "EmptyTask", "StagePerf", "EMPTY_TASK", "stable_id",
           "get_deterministic_hash", "TaskPerfUtils"]

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
    ``DocumentBatch(dataset_name=..., data=...)`` without ``task_id`` (NeMo >= 1.3: the id is
    then ``""`` until the executor assigns one, see :meth:`Task._set_task_id`), ``_metadata=`` and
    ``_stage_perf=`` for ``metadata=`` / ``stage_perf=``, and NeMo's positional order
    ``(dataset_name, data, _stage_perf, _metadata)`` unless the second argument is a string
    (then it is ours, ``(task_id, dataset_name, data, metadata, stage_perf)``)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        for nemo, ours in (("_metadata", "metadata"), ("_stage_perf", "stage_perf")):
            if nemo in kwargs:
                if ours in kwargs:
                    raise TypeError(f"{cls.__name__}: give {ours}= or {nemo}=, not both")
                value = kwargs.pop(nemo)
                kwargs[ours] = value if value is not None else ([] if ours == "stage_perf" else {})
        if args and _generated_init(cls):
            ours_positional = "task_id" not in kwargs and (
                (len(args) >= 2 and isinstance(args[1], str))
                or (len(args) == 2 and "data" in kwargs)
                or (len(args) == 1 and "dataset_name" in kwargs))
            names = _OURS if ours_positional else _NEMO
            if len(args) > len(names):
                raise TypeError(f"{cls.__name__}: at most {len(names)} positional arguments "
                                f"({', '.join(names)}); pass the others by keyword")
            for name, value in zip(names, args, strict=False):
                if name in kwargs:
                    raise TypeError(f"{cls.__name__}: {name} given twice")
                kwargs[name] = value
            args = ()
        return super().__call__(*args, **kwargs)


# Positional orders: ours puts the id first; NeMo Curator's task has no id argument.
_OURS = ("task_id", "dataset_name", "data", "metadata", "stage_perf")
_NEMO = ("dataset_name", "data", "stage_perf", "metadata")


def _generated_init(cls: type) -> bool:
    """Whether ``cls`` is built by a dataclass-generated ``__init__`` (a hand-written one gets
    its positional arguments as written)."""
    owner = next(k for k in cls.__mro__ if "__init__" in k.__dict__)
    return dataclasses.is_dataclass(owner) and getattr(
        owner.__dict__["__init__"], "__qualname__", "").endswith(f"{owner.__qualname__}.__init__") \
        and "__dataclass_fields__" in owner.__dict__


def _field_has_default(cls: type, name: str) -> bool:
    f = cls.__dataclass_fields__[name]  # type: ignore[attr-defined]
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


@dataclass(init=False)
class StagePerf:
    """What one stage did to one task: timing and item counts.

    NeMo Curator's ``StagePerfStats`` too: its constructor names (``stage_name=``,
    ``process_time=``, ``num_items_processed=``) and attributes (the same names, with
    ``actor_idle_time``, ``input_data_size_mb`` and ``custom_metrics``: what the stage recorded
    with ``_log_metric`` / ``_time_metric``), ``+``, ``sum()``, ``to_dict()`` and ``items()``.
    """

    stage: str
    process_time_s: float
    items_in: int
    items_out: int
    worker: str = ""
    actor_idle_time: float = 0.0
    input_data_size_mb: float = 0.0
    custom_metrics: dict[str, float] = field(default_factory=dict)

    def __init__(self, stage: str = "", process_time_s: float = 0.0, items_in: int = 0,
                 items_out: int = 0, worker: str = "", actor_idle_time: float = 0.0,
                 input_data_size_mb: float = 0.0, custom_metrics: dict[str, float] | None = None,
                 *, stage_name: str | None = None, process_time: float | None = None,
                 num_items_processed: int | None = None) -> None:
        self.stage = stage_name if stage_name is not None else stage
        self.process_time_s = process_time if process_time is not None else process_time_s
        self.items_in = num_items_processed if num_items_processed is not None else items_in
        self.items_out = items_out
        self.worker = worker
        self.actor_idle_time = actor_idle_time
        self.input_data_size_mb = input_data_size_mb
        self.custom_metrics = dict(custom_metrics or {})

    # NeMo Curator's names
    stage_name = property(lambda self: self.stage,
                          lambda self, v: setattr(self, "stage", v))
    process_time = property(lambda self: self.process_time_s,
                            lambda self, v: setattr(self, "process_time_s", v))
    num_items_processed = property(lambda self: self.items_in,
                                   lambda self, v: setattr(self, "items_in", v))

    def __add__(self, other: StagePerf) -> StagePerf:
        keys = set(self.custom_metrics) | set(other.custom_metrics)
        return StagePerf(self.stage, self.process_time_s + other.process_time_s,
                         self.items_in + other.items_in, self.items_out + other.items_out,
                         self.worker, self.actor_idle_time + other.actor_idle_time,
                         self.input_data_size_mb + other.input_data_size_mb,
                         {k: self.custom_metrics.get(k, 0.0) + other.custom_metrics.get(k, 0.0)
                          for k in keys})

    def __radd__(self, other: Any) -> StagePerf:
        if isinstance(other, int) and other == 0:  # sum() starts at 0
            return self
        if not isinstance(other, StagePerf):
            raise TypeError(f"Cannot add {type(other).__name__} to StagePerf")
        return other.__add__(self)

    def reset(self) -> None:
        """Zero the counters (NeMo Curator's method)."""
        self.process_time_s = self.actor_idle_time = self.input_data_size_mb = 0.0
        self.items_in = self.items_out = 0
        self.custom_metrics = {}

    def to_dict(self) -> dict[str, Any]:
        """NeMo Curator's dict: ``stage_name``, ``process_time``, ``actor_idle_time``,
        ``input_data_size_mb``, ``num_items_processed``, ``custom_metrics``."""
        return {"stage_name": self.stage, "process_time": self.process_time_s,
                "actor_idle_time": self.actor_idle_time,
                "input_data_size_mb": self.input_data_size_mb,
                "num_items_processed": self.items_in, "custom_metrics": dict(self.custom_metrics)}

    def items(self) -> list[tuple[str, float | int]]:
        """``(metric, value)`` pairs, custom metrics as ``custom.<name>`` (NeMo Curator's)."""
        d = self.to_dict()
        d.pop("stage_name")
        custom = d.pop("custom_metrics")
        d.update({f"custom.{k}": v for k, v in custom.items()})
        return list(d.items())


@dataclass
class Task(Generic[T], metaclass=_TaskMeta):
    """A unit of work flowing between stages.

    ``task_id`` must be deterministic (derived from the source partition), because writers name
    their files after it and resumed runs recognise finished work by it. A stage that emits several
    tasks from one input names them ``f"{task.task_id}_{i}"``; a 1:1 stage keeps the id.

    ``metadata`` travels with the task; ``metadata["source_files"]`` lists the input files the task
    came from and ``metadata["partition"]`` the source partition (set by the executor).

    NeMo Curator's forms work too: ``Task(dataset_name=..., data=...)`` without ``task_id`` (the
    id is then ``""``, as in NeMo: the executor names such a task after the task it came from,
    see :meth:`_set_task_id`, or for a source's output after :meth:`get_deterministic_id` or its
    content, so it is the same on every run), ``_metadata=`` / ``_stage_perf=`` in the
    constructor and as attributes.
    """

    dataset_name: str
    data: T
    task_id: str = field(default="", kw_only=True)  # NeMo: assigned by the executor
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

    def _set_task_id(self, parent_task_id: str, current_task_id_suffix: str | int) -> None:
        """NeMo Curator's id path: ``f"{parent_task_id}_{suffix}"`` (just the suffix when the
        parent id is empty). Always overwrites ``task_id``."""
        self.task_id = (f"{parent_task_id}_{current_task_id_suffix}" if parent_task_id
                        else str(current_task_id_suffix))

    def get_source_id(self) -> str:
        """The last segment of the id path (NeMo Curator's method)."""
        return self.task_id.rsplit("_", 1)[-1]

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

    # Stored as data, never pickled (failed tasks, dedup caches): see curator.task_data.
    def dump_data(self, files: Any) -> Any:
        """``data`` as JSON state, its bytes written through ``files`` (a
        :class:`curator.task_data.TaskFiles`). Default: a ``pyarrow.Table`` as Parquet; JSON
        values, bytes, NumPy arrays and tables otherwise. Override for other data."""
        from curator.task_data import dump_data

        return dump_data(self.data, files)

    @classmethod
    def load_data(cls, state: Any, files: Any) -> Any:
        """The ``data`` that :meth:`dump_data` stored as ``state``."""
        from curator.task_data import load_value

        return load_value(state, files)

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

    task_id: str = field(default="0", kw_only=True)  # NeMo Curator's implicit root id
    dataset_name: str = ""
    data: None = None

    @property
    def num_items(self) -> int:
        return 0


EMPTY_TASK = EmptyTask(task_id="0", dataset_name="", data=None)


def new_task_id() -> str:
    """A random task id, for tasks that have no deterministic source (tests, ad-hoc input)."""
    return uuid.uuid4().hex[:16]


class TaskPerfUtils:
    """NeMo Curator's helpers that aggregate the :class:`StagePerf` records output tasks carry
    (``task.stage_perf``). ``tasks``: a list of tasks (a run's result), a mapping of pipeline
    name to tasks (or ``{"pipeline_tasks": {...}}``), an object with ``pipeline_tasks``, or
    ``None``. A record shared by several tasks (a stage that fanned out) counts once."""

    @staticmethod
    def _normalize_pipeline_tasks(tasks: Any) -> dict[str, list[Task]]:
        if tasks is None:
            return {"": []}
        if isinstance(tasks, list):
            return {"": list(tasks)}
        source = getattr(tasks, "pipeline_tasks", tasks)
        if isinstance(source, dict) and isinstance(source.get("pipeline_tasks"), dict):
            source = source["pipeline_tasks"]
        if not isinstance(source, dict):
            raise TypeError("tasks must be a list of tasks, a mapping of pipeline name -> tasks, "
                            "a workflow result dict or an object with pipeline_tasks")
        out = {str(name): ([] if ts is None else [ts] if isinstance(ts, Task) else list(ts))
               for name, ts in source.items()}
        return out or {"": []}

    @staticmethod
    def collect_stage_metrics(tasks: Any) -> dict[str, dict[str, Any]]:
        """``{stage: {metric: numpy array of the values}}`` over the tasks' records (built-in
        metrics and custom ones as ``custom.<name>``)."""
        import numpy as np

        found: dict[str, dict[str, list[float]]] = {}
        seen: set[int] = set()
        for group in TaskPerfUtils._normalize_pipeline_tasks(tasks).values():
            for task in group:
                for perf in task.stage_perf or []:
                    if id(perf) in seen:
                        continue
                    seen.add(id(perf))
                    metrics = found.setdefault(perf.stage, {})
                    for metric, value in perf.items():
                        metrics.setdefault(metric, []).append(float(value))
        return {stage: {m: np.asarray(v, dtype=float) for m, v in metrics.items()}
                for stage, metrics in found.items()}

    @staticmethod
    def aggregate_task_metrics(tasks: Any, prefix: str | None = None) -> dict[str, float]:
        """``{"<stage>_<metric>_<sum|mean|std>": value}``; keys start with ``prefix`` (and the
        pipeline's name when there are several pipelines)."""
        import numpy as np

        out: dict[str, float] = {}
        groups = TaskPerfUtils._normalize_pipeline_tasks(tasks)
        for pipeline, group in groups.items():
            if prefix:
                head = f"{prefix}_{pipeline}" if pipeline else prefix
            else:
                head = pipeline if pipeline and len(groups) > 1 else None
            for stage, metrics in TaskPerfUtils.collect_stage_metrics(group).items():
                name = stage if head is None else f"{head}_{stage}"
                for metric, values in metrics.items():
                    for agg, fn in (("sum", np.sum), ("mean", np.mean), ("std", np.std)):
                        out[f"{name}_{metric}_{agg}"] = float(fn(values)) if len(values) else 0.0
        return out

    @staticmethod
    def get_aggregated_stage_stat(tasks: Any, stage_prefix: str, stat: str) -> float:
        """The sum of ``stat`` (e.g. ``num_items_processed``, ``process_time``) over the stages
        whose name starts with ``stage_prefix``; 0.0 when none match."""
        return sum(float(values.sum())
                   for stage, metrics in TaskPerfUtils.collect_stage_metrics(tasks).items()
                   if stage.startswith(stage_prefix) and (values := metrics.get(stat)) is not None)
