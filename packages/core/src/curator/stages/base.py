"""ProcessingStage and CompositeStage: the building blocks of a pipeline."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from types import UnionType
from typing import (
    Any,
    ClassVar,
    Generic,
    Literal,
    TypeVar,
    Union,
    final,
    get_args,
    get_origin,
    get_type_hints,
)

from curator.params import init_signature, typed_new, validated_later
from curator.resources import Resources
from curator.run.sink import RejectedRecord
from curator.stages.lifecycle import overrides
from curator.stages.node_info import NodeInfo, WorkerMetadata
from curator.tasks import Task

__all__ = ["ProcessingStage", "CompositeStage", "StageIO", "StageInputSpec", "StageInputSpecs",
           "get_stage_class", "input_columns", "fixed_num_workers"]

logger = logging.getLogger(__name__)

X = TypeVar("X", bound=Task)
Y = TypeVar("Y", bound=Task)

StageIO = tuple[list[str], list[str]]
"""(task attributes, data columns) a stage reads or writes, e.g. ``(["data"], ["text"])``."""
StageInputSpec = StageIO
StageInputSpecs = validated_later(StageIO | dict[type[Task], StageIO])
"""What ``inputs()`` returns: one spec, or one per task type the stage accepts (NeMo Curator).
A constructor parameter of this type is not type-checked: :meth:`ProcessingStage.
input_spec_for_task` reports a malformed spec when a task is validated, as NeMo Curator does."""

_STAGE_REGISTRY: dict[str, type[ProcessingStage]] = {}
_UNSET: Any = object()

ARROW_HINT = ("this is a pyarrow object (task.to_pyarrow() and Curator's own stages hand out "
              "Arrow; task.data and task.to_pandas() give user code a pandas DataFrame): read a "
              "column with task.to_pandas()[col].to_list() or task.to_pyarrow()[col].to_pylist(); "
              "change columns with df = task.data; df[col] = .... See "
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


def _constant(value: Any) -> Callable[[], Any]:
    """A zero-argument method stand-in returning ``value`` (``with_()`` overrides, as NeMo)."""

    def get() -> Any:
        return dict(value) if isinstance(value, dict) else value

    return get


def fixed_num_workers(stage: ProcessingStage) -> int | None:
    """The stage's fixed worker count (its ``num_workers()``), or ``None``: the executor sizes
    it. A plain value assigned to ``stage.num_workers`` is read too."""
    n = getattr(stage, "num_workers", None)
    return n() if callable(n) else n


def input_columns(stage: ProcessingStage) -> list[str]:
    """The data columns ``stage`` needs whatever task arrives (for chain validation): those of
    its single input spec, or of its only task type; none when it takes several task types."""
    specs = stage.inputs()
    if isinstance(specs, dict):
        specs = next(iter(specs.values())) if len(specs) == 1 else ([], [])
    return list(specs[1]) if isinstance(specs, tuple | list) and len(specs) == 2 else []


def _has_attr(task: Task, name: str) -> bool:
    """Whether ``task`` has the attribute ``name``, without computing it when it is a property
    of its class (a batch's ``data`` may be built on first read)."""
    return name in getattr(task, "__dict__", ()) or hasattr(type(task), name) \
        or hasattr(task, name)


def _has_column(task: Task, col: str, strict: bool = True) -> bool:
    """Whether ``task``'s data has the column (or attribute) ``col``: in its ``get_columns()``
    or ``column_names``, as an attribute, or, for a list of records, in the first record. Not
    ``strict``: true too when the data lists no columns at all."""
    get_columns = getattr(task, "get_columns", None)
    if callable(get_columns) and col in get_columns():  # without reading the data
        return True
    data = task.data
    have = get_columns() if callable(get_columns) else getattr(data, "column_names", None)
    if (have is not None and col in have) or hasattr(data, col):
        return True
    if not strict and data is not None and task.num_items == 0:  # every line was malformed:
        return True  # no row lacks the column
    if isinstance(data, list):  # records (audio, images, plugins): check the first one
        if not data:
            return True
        first = data[0]
        return col in first if isinstance(first, dict) else (hasattr(first, col) or not strict)
    return have is None and not strict


def _contains_list(annotation: object) -> bool:
    if get_origin(annotation) is list:
        return True
    if get_origin(annotation) in (UnionType, Union):
        return any(_contains_list(a) for a in get_args(annotation))
    return False


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
        runtime_env: a Ray runtime environment for the stage's workers (Ray executors).
        is_source_stage, is_sink_stage: NeMo Curator's role marks; ``Pipeline.build()`` marks
            the first and last stage when no stage is marked (at most one of each).
        is_resumable: whether the stage's outputs can be traced to source partitions.
        worker_mode: ``"thread"`` (default: cheap, fine for Arrow/NumPy/GPU work that releases the
            GIL) or ``"process"`` (CPU-bound pure-Python work) for the local executor.
        modality, kind: how ``curator stages`` lists the stage.

    ``name``, ``resources``, ``batch_size`` and ``runtime_env`` are plain attributes (a subclass
    defining one as a ``@property`` is a ``TypeError``, as in NeMo Curator, since ``with_()``
    could not override it). A fixed worker count comes from overriding :meth:`num_workers`.
    """

    name: str = ""
    resources: Resources = Resources(cpus=1.0)
    batch_size: int = 1
    __new__, __signature__ = typed_new, init_signature  # types checked as in specs
    runtime_env: ClassVar[dict[str, Any] | None] = None
    worker_mode: Literal["thread", "process"] = "thread"
    is_source_stage: bool = False
    is_sink_stage: bool = False
    is_resumable: bool = True
    modality: ClassVar[str] = "any"
    kind: ClassVar[str] = "stage"

    @property
    @final
    def _name(self) -> str:
        return self.name

    @property
    @final
    def _resources(self) -> Resources:
        return self.resources

    @property
    @final
    def _batch_size(self) -> int | None:
        return self.batch_size

    def num_workers(self) -> int | None:
        """A fixed worker count for this stage (default ``None``: the executor decides)."""
        return None

    # ---- what the stage declares -------------------------------------------------------------
    def inputs(self) -> StageInputSpecs:
        """Task attributes and data columns this stage reads: ``(attributes, columns)``, or a
        dict of them per task type it accepts (the most specific type in a task's MRO wins)."""
        return [], []

    def input_spec_for_task(self, task: Task) -> StageInputSpec:
        """The ``(attributes, columns)`` that apply to ``task``. Raises ``TypeError`` when
        ``inputs()`` is malformed or has no entry for the task's type."""
        specs = self.inputs()
        if isinstance(specs, tuple | list):
            return self._checked_spec(tuple(specs), "inputs()")
        if not isinstance(specs, dict):
            raise TypeError(f"Stage {self.name} inputs() must return an input spec tuple or dict "
                            f"of task type to input spec")
        for klass in type(task).mro():
            if klass in specs:
                return self._checked_spec(specs[klass], f"inputs()[{klass.__name__}]")
        supported = ", ".join(t.__name__ for t in specs) or "<none>"
        raise TypeError(f"Stage {self.name} does not support input task type "
                        f"{type(task).__name__}. Supported input task types: {supported}")

    def _checked_spec(self, spec: object, where: str) -> StageInputSpec:
        if not isinstance(spec, tuple) or len(spec) != 2:
            raise TypeError(f"Stage {self.name} {where} must be a tuple of "
                            f"(required_attributes, required_columns)")
        return spec  # type: ignore[return-value]

    def validate_input(self, task: Task) -> bool:
        """Whether ``task`` has the attributes and data columns :meth:`inputs` asks for (logs
        what is missing)."""
        return self._valid_input(task, strict=True)

    def _valid_input(self, task: Task, strict: bool) -> bool:
        """:meth:`validate_input`; not ``strict``: columns are checked only where the data
        lists them (a table, a DataFrame, records), since Curator stages also declare columns
        of structured data (a video's clips) for the pipeline's chain check."""
        try:
            attrs, cols = self.input_spec_for_task(task)
        except TypeError as e:
            logger.error("%s", e)
            return False
        missing_attrs = [a for a in attrs if not _has_attr(task, a)]
        missing_cols = [c for c in cols if not _has_column(task, c, strict)] if cols else []
        if missing_attrs or missing_cols:
            logger.error("Task %s missing required attributes: %s %s", task.task_id,
                         missing_attrs, missing_cols)
        return not missing_attrs and not missing_cols

    def outputs(self) -> StageIO:
        """Task attributes and data columns this stage writes (``["*"]``: columns not known
        until data is read, e.g. a reader without ``fields``)."""
        return [], []

    def supports_batch_processing(self) -> bool:
        """Whether the class overrides :meth:`process_batch` (NeMo Curator's method)."""
        return type(self).process_batch is not ProcessingStage.process_batch

    def is_fanout_stage(self) -> bool:
        """Whether :meth:`process` may turn one task into several (its return annotation
        contains ``list[...]``)."""
        try:
            hints = get_type_hints(type(self).process)
        except (AttributeError, NameError, TypeError):
            return False
        return _contains_list(hints.get("return"))

    def ray_stage_spec(self) -> dict[str, Any]:
        """Ray options for the stage (NeMo Curator's keys; ``with_(ray_stage_spec=)`` merges
        overrides). Curator's Ray executors read ``num_workers`` from :meth:`num_workers`."""
        return {"is_fanout_stage": self.is_fanout_stage()}

    def xenna_stage_spec(self) -> dict[str, Any]:
        """Xenna options for the stage (``with_(xenna_stage_spec=)`` merges overrides)."""
        return {}

    def get_config(self) -> dict[str, Any]:
        """The stage's name, resources and batch size (NeMo Curator's method)."""
        return {"name": self.name, "resources": self.resources, "batch_size": self.batch_size,
                "supports_batch_processing": self.supports_batch_processing()}

    @property
    def is_source(self) -> bool:
        """A source stage creates tasks from nothing (it ignores the empty root task)."""
        return False

    # ---- lifecycle -----------------------------------------------------------------------------
    def setup_on_node(self, node_info: NodeInfo | None = None,
                      worker_metadata: WorkerMetadata | None = None) -> None:
        """Runs once on every node (Ray node id) that will run the stage, before its workers
        start (downloads, shared caches); once per run on the local executor."""

    def setup(self, worker_metadata: WorkerMetadata | None = None) -> None:
        """Runs once per worker before its first task (load models, open clients);
        ``worker_metadata.worker_id`` names the worker (a ``setup(self)`` works too)."""

    @abstractmethod
    def process(self, task: X) -> Y | list[Y] | None:
        """Process one task; return an output task, a list of them, or ``None`` to drop it."""

    def process_batch(self, tasks: list[X]) -> list[Y]:
        """Process ``batch_size`` tasks at once; the default checks each task with
        :meth:`validate_input` (a ``ValueError`` when it fails, as in NeMo Curator) and calls
        :meth:`process` on it."""
        out: list[Y] = []
        for task in tasks:
            if not self._valid_input(task, strict=False):
                raise ValueError(f"Task {task!s} failed validation for stage {self}: it lacks "
                                 f"what {type(self).__name__}.inputs() requires (see the log)")
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

    # ---- NeMo Curator's custom per-stage metrics (into each output's StagePerf) --------------
    def _log_metrics(self, metrics: dict[str, float]) -> None:
        """Record numeric metrics of the current batch (e.g. sub-step timings)."""
        mine = self.__dict__.setdefault("_custom_metrics", {})
        for key, value in metrics.items():
            if isinstance(value, int | float):
                mine[key] = float(value)
            else:
                logger.warning("Can't record non-numeric metric %s value=%r for stage %s", key,
                               value, self.name)

    def _log_metric(self, name: str, value: float) -> None:
        self._log_metrics({name: value})

    @contextlib.contextmanager
    def _time_metric(self, name: str) -> Iterator[None]:
        """Record the seconds the ``with`` block took as the metric ``name``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self._log_metric(name, time.perf_counter() - start)

    def _consume_custom_metrics(self) -> dict[str, float]:
        """Take the metrics recorded since the last call (used by executors)."""
        return self.__dict__.pop("_custom_metrics", None) or {}

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
              batch_size: int | None = None, runtime_env: dict[str, Any] | None = None,
              ray_stage_spec: dict[str, Any] | None = None,
              xenna_stage_spec: dict[str, Any] | None = None,
              num_workers: int | None = _UNSET,
              worker_mode: str | None = None) -> ProcessingStage[X, Y]:
        """A copy of this stage with a new name, resources, batch size or worker settings.
        Arguments left out (or ``None``) keep the current value, except ``num_workers=None``,
        which resets a fixed worker count to the executor's choice (as in NeMo Curator).
        ``ray_stage_spec`` / ``xenna_stage_spec`` are merged over the stage's own (given keys
        win); ``runtime_env`` is the Ray runtime environment of the stage's workers."""
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
            new.num_workers = _constant(num_workers)  # type: ignore[method-assign]
        if runtime_env is not None:
            new.runtime_env = dict(runtime_env)  # type: ignore[misc]
        if ray_stage_spec is not None:
            new.ray_stage_spec = _constant(  # type: ignore[method-assign]
                {**self.ray_stage_spec(), **dict(ray_stage_spec)})
        if xenna_stage_spec is not None:
            if "num_workers" in xenna_stage_spec:
                raise ValueError(f"{self.name}: use with_(num_workers=...) instead of setting "
                                 f"num_workers in xenna_stage_spec")
            new.xenna_stage_spec = _constant(  # type: ignore[method-assign]
                {**self.xenna_stage_spec(), **dict(xenna_stage_spec)})
        if worker_mode is not None:
            if worker_mode not in ("thread", "process"):
                raise ValueError(f"{self.name}.with_(worker_mode=...) must be 'thread' or "
                                 f"'process', got {worker_mode!r}")
            new.worker_mode = worker_mode  # type: ignore[assignment]
        return new

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _check_overrides(cls)
        if not cls.__dict__.get("name"):
            cls.name = cls.__name__
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


def _check_overrides(cls: type) -> None:
    """NeMo Curator's rules for stage subclasses, checked when the class is defined."""
    for attr in ("_name", "_resources", "_batch_size"):
        if attr in cls.__dict__:
            raise TypeError(f"{cls.__name__} must not override '{attr}' (set "
                            f"'{attr[1:]}' instead)")
    workers = cls.__dict__.get("num_workers")
    annotated = "num_workers" in cls.__dict__.get("__annotations__", {})
    if (workers is not None and not callable(workers)) or (workers is None and annotated):
        raise TypeError(f"{cls.__name__} must not define 'num_workers' as a stage attribute. "
                        f"Override num_workers() for backend worker sizing (def "
                        f"num_workers(self) -> int | None: return N), or use a different field "
                        f"name for stage-specific worker counts.")
    for attr in ("name", "resources", "batch_size", "runtime_env"):
        if isinstance(cls.__dict__.get(attr), property):
            raise TypeError(f"{cls.__name__} must not define '{attr}' as a @property. Use a "
                            f"plain class attribute or dataclass field instead, so that "
                            f"ProcessingStage.with_() can override it.")


class CompositeStage(ProcessingStage[X, Y]):
    """A user-facing stage that the pipeline replaces with simpler stages at build time
    (a reader = file partitioning + reading; a classifier = tokenizer + model).

    ``composite.with_({"SubStageName": {"resources": ..., "batch_size": ...}, ...})`` (NeMo
    Curator's form) records changes to apply to the named sub-stages when the pipeline
    decomposes it; calls apply in order, each to the names left by the previous one."""

    kind: ClassVar[str] = "composite"

    @property
    def _with_operations(self) -> list[dict[str, dict[str, Any]]]:
        return self.__dict__.setdefault("_with_ops", [])

    def with_(self, stage_with_dict: dict[str, dict[str, Any]] | None = None,  # type: ignore[override]
              **kwargs: Any) -> CompositeStage[X, Y]:
        """Record per-sub-stage ``with_()`` arguments (``{sub_stage_name: {arg: value}}``);
        returns this stage. Keyword arguments (``name=``, ``resources=``, …) change the
        composite itself, as on any stage, and return a copy."""
        if stage_with_dict is None:
            return super().with_(**kwargs)  # type: ignore[return-value]
        if kwargs or not isinstance(stage_with_dict, dict):
            raise TypeError(f"{self.name}.with_() takes a dict of sub-stage name -> with_() "
                            f"arguments, or keyword arguments for the composite itself")
        self._with_operations.append(stage_with_dict)
        return self

    def decompose_and_apply_with(self) -> list[ProcessingStage]:
        """:meth:`decompose` with the recorded per-sub-stage changes applied."""
        return self._apply_with_(self.decompose())

    def _apply_with_(self, stages: list[ProcessingStage]) -> list[ProcessingStage]:
        for changes in self._with_operations:
            by_name = {s.name: s for s in stages}
            if len(by_name) != len(stages):
                raise ValueError(f"All stages must have unique names in composite stage "
                                 f"{self.name} to apply configuration changes using with_(); "
                                 f"they are {[s.name for s in stages]}")
            for name in changes:
                if name not in by_name:
                    raise ValueError(f"Stage {name} not found in composite stage {self.name} to "
                                     f"apply configuration changes using with_(); its stages "
                                     f"are {sorted(by_name)}")
            stages = [s.with_(**changes[s.name]) if s.name in changes else s for s in stages]
        return stages

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
