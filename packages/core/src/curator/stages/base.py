"""ProcessingStage and CompositeStage: the building blocks of a pipeline."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar, Generic, Literal, TypeVar

from curator.rejected import RejectedRecord
from curator.resources import Resources
from curator.stages.lifecycle import overrides
from curator.tasks import Task

__all__ = ["ProcessingStage", "CompositeStage", "StageIO", "get_stage_class"]

X = TypeVar("X", bound=Task)
Y = TypeVar("Y", bound=Task)

StageIO = tuple[list[str], list[str]]
"""(task attributes, data columns) a stage reads or writes, e.g. ``(["data"], ["text"])``."""

_STAGE_REGISTRY: dict[str, type[ProcessingStage]] = {}
_UNSET: Any = object()

ARROW_HINT = ("task.data is a pyarrow.Table in Curator (NeMo Curator also allowed a pandas "
              "DataFrame): read a column with task.to_pandas()[col].to_list() or "
              "task.data[col].to_pylist(); change columns with df = task.to_pandas(); "
              "df[col] = ...; task.data = df (converted back to Arrow). See "
              "docs/migrating-from-nemo-curator.md")
"""Appended to the error of a stage that treats Arrow data as a pandas DataFrame."""


def get_stage_class(name: str) -> type[ProcessingStage]:
    """The concrete stage class named ``name`` (its class name, or the name given to
    ``@processing_stage``), as in NeMo Curator. Raises ``KeyError`` when none is defined (the
    module defining it must have been imported)."""
    cls = _STAGE_REGISTRY.get(name)
    if cls is None or inspect.isabstract(cls):
        raise KeyError(f"get_stage_class: no stage class named {name!r} has been defined "
                       f"(import its module first)")
    return cls


def _num_workers_property(method: Any) -> property:
    """Turns a NeMo-style ``num_workers()`` method into the attribute executors read; a value
    set by ``with_(num_workers=...)`` takes precedence."""

    def get(self: ProcessingStage) -> int | None:
        return self.__dict__["_num_workers"] if "_num_workers" in self.__dict__ else method(self)

    def set_(self: ProcessingStage, value: int | None) -> None:
        self.__dict__["_num_workers"] = value

    return property(get, set_, doc=method.__doc__)


def _with_arrow_hint(exc: BaseException) -> BaseException:
    """Adds :data:`ARROW_HINT` to a TypeError/AttributeError raised on a pyarrow Table/array."""
    msg = str(exc)
    if isinstance(exc, TypeError | AttributeError) and "pyarrow.lib." in msg \
            and ARROW_HINT not in msg:
        exc.args = (f"{msg}. {ARROW_HINT}", *exc.args[1:])
    return exc


class ProcessingStage(ABC, Generic[X, Y]):
    """A step of a pipeline: turns one input task into zero, one or many output tasks.

    Subclasses implement :meth:`process` (or :meth:`process_batch` to handle ``batch_size`` tasks
    at once) and declare what they read and write with :meth:`inputs` / :meth:`outputs`, so the
    pipeline can check the chain before any data is read. Heavy libraries and models are loaded in
    :meth:`setup`, which runs once per worker; :meth:`setup_on_node` runs once per machine (for
    downloads or caches) before the workers start.

    Class attributes (instances may override them, see :meth:`with_`):
        name: the stage's name in logs and summaries (default: the class name).
        resources: what one worker needs (:class:`Resources`).
        batch_size: tasks handed to :meth:`process_batch` at once.
        worker_mode: ``"thread"`` (default: cheap, fine for Arrow/NumPy/GPU work that releases the
            GIL) or ``"process"`` (CPU-bound pure-Python work) for the local executor.
        num_workers: a fixed worker count for this stage (``None``: the executor decides).
        modality, kind: how ``curator stages`` lists the stage.
    """

    name: str = ""
    resources: Resources = Resources(cpus=1.0)
    batch_size: int = 1
    worker_mode: Literal["thread", "process"] = "thread"
    num_workers: int | None = None
    modality: ClassVar[str] = "any"
    kind: ClassVar[str] = "stage"

    # ---- what the stage declares -------------------------------------------------------------
    def inputs(self) -> StageIO:
        """Task attributes and data columns this stage reads."""
        return [], []

    def outputs(self) -> StageIO:
        """Task attributes and data columns this stage writes (``["*"]``: columns not known
        until data is read, e.g. a reader without ``fields``)."""
        return [], []

    @property
    def is_source(self) -> bool:
        """A source stage creates tasks from nothing (it ignores the empty root task)."""
        return False

    # ---- lifecycle -----------------------------------------------------------------------------
    def setup_on_node(self, node_info: dict[str, Any] | None = None,
                      worker_metadata: dict[str, Any] | None = None) -> None:
        """Runs once per machine before any worker starts (downloads, shared caches)."""

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        """Runs once per worker before its first task (load models, open clients)."""

    @abstractmethod
    def process(self, task: X) -> Y | list[Y] | None:
        """Process one task; return an output task, a list of them, or ``None`` to drop it."""

    def process_batch(self, tasks: list[X]) -> list[Y]:
        """Process ``batch_size`` tasks at once; the default calls :meth:`process` on each."""
        out: list[Y] = []
        for task in tasks:
            try:
                result = self.process(task)
            except (TypeError, AttributeError) as e:
                _with_arrow_hint(e)
                raise
            if result is None:
                continue
            if isinstance(result, list):
                out.extend(result)
            else:
                out.append(result)
        return out

    def process_stream(self, task: X) -> Iterator[list[Y]]:
        """A source's outputs in chunks, as they are formed: executors hand each chunk on
        before the next is made, so a listing of millions of partitions is never held whole
        (default: all of ``process_batch([task])`` at once). Override in a source stage that
        lists lazily (see ``FilePartitioningStage``)."""
        yield self.process_batch([task])

    def teardown(self) -> None:
        """Runs once per worker after its last task (free models, close files)."""

    @property
    def has_worker_state(self) -> bool:
        """Whether ``setup``/``teardown`` hold something worth a long-lived worker (a model, a
        client), so Ray Data runs the stage in an actor pool rather than as stateless tasks.
        Default: the class overrides either; a wrapper stage answers for what it wraps."""
        return overrides(self, ProcessingStage, "setup", "teardown")

    # ---- rejected records ----------------------------------------------------------------------
    def reject(self, task: Task | None, reason: str, *, record: dict[str, Any] | None = None,
               error: BaseException | str | None = None, source: str = "",
               kind: str = "record") -> None:
        """Send one bad record to the run's rejected-records sink with its reason.

        The executor collects these after each call to :meth:`process_batch`; nothing a stage
        rejects is lost, and the run summary counts it.
        """
        if isinstance(error, BaseException):
            error = f"{type(error).__name__}: {error}"
        if not source and task is not None:
            files = task.metadata.get("source_files") or []
            source = ",".join(map(str, files[:3]))
        self.__dict__.setdefault("_rejected", []).append(RejectedRecord(
            stage=self.name, reason=reason, task_id=task.task_id if task is not None else "",
            source=source, error=error or "", kind=kind, record=record or {}))

    def drain_rejected(self) -> list[RejectedRecord]:
        """Take the records rejected since the last call (used by executors)."""
        return self.__dict__.pop("_rejected", [])

    # ---- counters for the run reports ----------------------------------------------------------
    def publish_counts(self, name: str, counts: dict[Any, int]) -> None:
        """Add ``counts`` (key -> number) to the counter ``name`` of this stage, e.g.
        ``publish_counts("pii_entities", {"EMAIL_ADDRESS": 3})``. The executor collects them
        after each batch (:meth:`drain_counts`), sums them over workers into
        ``result.stats.stages[i].counters`` and shows them in the summary and run reports
        (``docs/run-report.md``). Keys become strings."""
        mine = self.__dict__.setdefault("_counts", {}).setdefault(name, {})
        for key, n in counts.items():
            if n:
                mine[str(key)] = mine.get(str(key), 0) + int(n)

    def drain_counts(self) -> dict[str, dict[str, int]]:
        """Take the counters published since the last call (used by executors)."""
        return self.__dict__.pop("_counts", None) or {}

    # ---- configuration -------------------------------------------------------------------------
    def with_(self, name: str | None = None, resources: Resources | None = None,
              batch_size: int | None = None, num_workers: int | None = _UNSET,
              worker_mode: str | None = None) -> ProcessingStage[X, Y]:
        """A copy of this stage with a new name, resources, batch size or worker settings.
        Arguments left out (or ``None``) keep the current value, except ``num_workers=None``,
        which resets a fixed worker count to the executor's choice (as in NeMo Curator)."""
        new = copy.copy(self)
        new.__dict__.pop("_rejected", None)
        new.__dict__.pop("_counts", None)
        if name is not None:
            new.name = name
        if resources is not None:
            if isinstance(resources, dict):
                resources = Resources(**resources)
            if not isinstance(resources, Resources):
                raise TypeError(f"{self.name}.with_(resources=...) needs a Resources, "
                                f"got {type(resources).__name__}")
            new.resources = resources
        if batch_size is not None:
            if not isinstance(batch_size, int) or batch_size < 1:
                raise ValueError(f"{self.name}.with_(batch_size=...) must be an int >= 1, "
                                 f"got {batch_size!r}")
            new.batch_size = batch_size
        if num_workers is not _UNSET:
            if num_workers is not None and (not isinstance(num_workers, int) or num_workers < 1):
                raise ValueError(f"{self.name}.with_(num_workers=...) must be an int >= 1 or None, "
                                 f"got {num_workers!r}")
            new.num_workers = num_workers
        if worker_mode is not None:
            if worker_mode not in ("thread", "process"):
                raise ValueError(f"{self.name}.with_(worker_mode=...) must be 'thread' or "
                                 f"'process', got {worker_mode!r}")
            new.worker_mode = worker_mode  # type: ignore[assignment]
        return new

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("name"):
            cls.name = cls.__name__
        if callable(cls.__dict__.get("num_workers")):  # NeMo Curator's ``def num_workers(self)``
            cls.num_workers = _num_workers_property(cls.__dict__["num_workers"])
        _STAGE_REGISTRY[cls.__name__] = cls

    @classmethod
    def parameters(cls) -> list[inspect.Parameter]:
        """The constructor parameters (for ``curator describe`` and spec validation)."""
        if dataclasses.is_dataclass(cls):
            sig = inspect.signature(cls)
        else:
            sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters.values() if p.name != "self"
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class CompositeStage(ProcessingStage[X, Y]):
    """A user-facing stage that the pipeline replaces with simpler stages at build time
    (a reader = file partitioning + reading; a classifier = tokenizer + model)."""

    kind: ClassVar[str] = "composite"

    @abstractmethod
    def decompose(self) -> list[ProcessingStage]:
        """The stages this one stands for, in order."""

    def process(self, task: X) -> Y | list[Y] | None:
        raise RuntimeError(f"{self.name} is a composite stage: Pipeline.build() replaces it by "
                           f"decompose(); do not run it directly")

    def inputs(self) -> StageIO:
        return self.decompose()[0].inputs()

    def outputs(self) -> StageIO:
        attrs: list[str] = []
        cols: list[str] = []
        for stage in self.decompose():
            a, c = stage.outputs()
            attrs += a
            cols += c
        return list(dict.fromkeys(attrs)), list(dict.fromkeys(cols))
