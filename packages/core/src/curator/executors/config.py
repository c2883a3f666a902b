"""Executors' configuration: one dataclass per executor, each key's type, default and one-line
doc in one place.

An executor takes its keys as a dict or as keyword arguments (``LocalExecutor(num_workers=4)``,
NeMo Curator's ``XennaExecutor(config={...})``); :meth:`ExecutorConfig.from_dict` converts each
value with the project's one converter (:func:`curator.params.check_values`: ``"4"`` becomes
``4``, ``"many"`` is an error naming the executor, the key, the type and the value), ignores
unknown keys with a warning that names them (NeMo Curator's handling), and checks the values a
type cannot (``fuse_stages``, Xenna's modes). The key tables of ``docs/executors.md`` are
generated from these classes (:func:`config_table_markdown`; :func:`config_docs` gives them
all) and a test keeps the two equal.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

from curator.params import check_values

__all__ = ["ExecutorConfig", "LocalConfig", "RayConfig", "PoolConfig", "RayDataConfig",
           "ActorPoolConfig",
           "XennaConfig", "CONFIG_CLASSES", "config_table_markdown", "config_tables_in",
           "config_docs", "Workers"]

Workers = int | dict[str, int] | None
"""One count for every stage, or ``{stage name: count}``."""

QUEUE_BYTES = 64 * 2**20
SOURCE_WINDOW = 100_000
_VERBOSITY = ("actor_pool_verbosity_level", "monitoring_verbosity_level",
              "autoscaler_verbosity_level", "executor_verbosity_level")


def key(default: Any, doc: str) -> Any:
    """A config key: its default and its one-line doc (shown in the docs' tables)."""
    return field(default=default, metadata={"doc": doc})


@dataclass
class ExecutorConfig:
    """Keys every executor takes."""

    executor: ClassVar[str] = "executor"

    num_workers: Workers = key(None, "workers per stage group, int or `{stage_name: int}`; "
                                     "default: sized from `Resources` (see Worker sizing)")
    max_retries: int | None = key(None, "overrides the run's retry count")
    collect_outputs: bool = key(True, "keep the output tasks on the result; `False`: only "
                                      "`num_outputs` and `output_paths`")

    @classmethod
    def keys(cls) -> frozenset[str]:
        """The keys this executor knows."""
        return frozenset(f.name for f in dataclasses.fields(cls))

    @classmethod
    def convert(cls, label: str, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` with each known key's value converted to its type by the project's one
        converter (:func:`~curator.params.check_values`); unknown keys are passed through.
        ``label`` names the executor in errors."""
        return check_values(label, values, _hints(cls))

    @classmethod
    def from_dict(cls, label: str, values: dict[str, Any]) -> ExecutorConfig:
        """The config of ``values``: converted, checked (:meth:`check`), unknown keys left out
        (the executor warns about them: :meth:`BaseExecutor.warn_unknown_keys`)."""
        values = cls.convert(label, values)
        cfg = cls(**{k: v for k, v in values.items() if k in cls.keys()})
        cfg.check(label)
        return cfg

    def __post_init__(self) -> None:
        # per-stage counts: the converter checked them and replaces scalars only
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, dict) and f.type in (Workers, "Workers"):
                setattr(self, f.name, {k: int(v) for k, v in value.items()})

    def check(self, label: str) -> None:
        """Raise ``ValueError`` for values their type does not rule out."""

    def per_stage(self, name: str, stage: str) -> Any:
        """Key ``name`` for the stage named ``stage``: a plain value, or ``{stage_name: value}``."""
        value = getattr(self, name)
        return value.get(stage) if isinstance(value, dict) else value


@dataclass
class LocalConfig(ExecutorConfig):
    """``LocalExecutor``."""

    executor: ClassVar[str] = "LocalExecutor"

    queue_size: int | None = key(None, "tasks buffered between two stage groups; default: 2 "
                                       "per consumer worker, at least `batch_size`")
    queue_bytes: int | None = key(QUEUE_BYTES, "bytes of task data (Arrow tables, arrays) "
                                               "buffered between two groups beyond the first "
                                               "task (64 MiB)")
    cpus: float | None = key(None, "cores to plan for; default: the cores this process may run "
                                   "on (`taskset`, container CPU sets)")
    fuse_stages: bool | str = key("thread", "`\"thread\"`, `\"process\"` (or `True`) or "
                                            "`False`: see below")

    def check(self, label: str) -> None:
        if self.fuse_stages not in (False, True, "process", "thread"):
            raise ValueError(f"{label}: fuse_stages must be False, True, 'process' or "
                             f"'thread', got {self.fuse_stages!r}")


@dataclass
class RayConfig(ExecutorConfig):
    """Keys of every Ray executor."""

    executor: ClassVar[str] = "Ray executors"

    fuse_stages: bool = key(True, "consecutive stages with equal `Resources` share one worker")
    address: str | None = key(None, "the Ray cluster to join; default: `RAY_ADDRESS`, the Ray "
                                    "this process is connected to, else one started for the run")
    num_cpus: float | None = key(None, "CPUs of a cluster started for the run")
    num_gpus: float | None = key(None, "GPUs of a cluster started for the run")
    object_store_memory: int | None = key(None, "object store bytes of a cluster started for "
                                                "the run")
    ray_timeout_s: float = key(120.0, "the longest a Ray start or connect may take")
    gpu_memory_gb_per_gpu: float | None = key(
        None, "GPU memory that `Resources(gpu_memory_gb=...)` is sized against where the GPU "
              "type is unknown (fake GPUs)")
    source_window: int | None = key(SOURCE_WINDOW, "the most partitions taken from a lazily "
                                                    "listing source before they run")
    ignore_head_node: bool = key(False, "run nothing on the cluster's head node (NeMo's option)")


@dataclass
class PoolConfig(RayConfig):
    """Pool sizes of the executors that size Ray pools themselves."""

    executor: ClassVar[str] = "RayDataExecutor and RayActorPoolExecutor"

    min_workers: Workers = key(None, "the fewest workers of a group's pool, int or per stage; "
                                     "default: the planned size (1 with `autoscale`)")
    max_workers: Workers = key(None, "the most workers of a group's pool, int or per stage; "
                                     "default: the planned size (what the cluster holds with "
                                     "`autoscale`)")
    autoscale: bool = key(False, "pools grow and shrink between `min_workers` and "
                                 "`max_workers`")


@dataclass
class RayDataConfig(PoolConfig):
    """``RayDataExecutor``."""

    executor: ClassVar[str] = "RayDataExecutor"

    tasks_per_block: int | None = key(None, "tasks per input block; default: 1 while there are "
                                            "at most 16 tasks per cluster CPU, then up to 64")
    max_worker_restarts: int = key(4, "how often Ray may retry a block whose worker died "
                                      "(raised to what the dead-worker policy needs)")


@dataclass
class ActorPoolConfig(PoolConfig):
    """``RayActorPoolExecutor``."""

    executor: ClassVar[str] = "RayActorPoolExecutor"

    streaming: bool = key(True, "all groups' pools at once; `False`: one group after the other")
    batches_in_flight: int = key(2, "batches queued on each actor")
    setup_timeout_s: float = key(600.0, "how long an actor may take to start and run `setup()`")
    scale_interval_s: float = key(2.0, "seconds between two pool-size decisions")


@dataclass
class XennaConfig(RayConfig):
    """``XennaExecutor`` (NeMo Curator's keys and defaults)."""

    executor: ClassVar[str] = "XennaExecutor"

    execution_mode: str = key("streaming", "`\"streaming\"` or `\"batch\"`")
    logging_interval: float = key(60, "seconds between Xenna's status logs")
    autoscale_interval_s: float = key(180, "seconds between Xenna's autoscaler decisions")
    cpu_allocation_percentage: float = key(0.95, "share of each node's CPUs Xenna gives stages")
    log_worker_allocation_layout: bool = key(True, "log where Xenna placed its workers")
    actor_pool_verbosity_level: str = key("INFO", "`\"NONE\"`, `\"INFO\"` or `\"DEBUG\"`")
    monitoring_verbosity_level: str = key("INFO", "as above")
    autoscaler_verbosity_level: str = key("INFO", "as above")
    executor_verbosity_level: str = key("INFO", "as above")
    tasks_per_block: int | None = key(None, "tasks per Xenna call (as Ray Data's blocks)")

    def check(self, label: str) -> None:
        modes = ("streaming", "batch")
        if self.execution_mode not in modes:
            raise ValueError(f"{label}: config execution_mode={self.execution_mode!r}; use one "
                             f"of {modes}")
        for name in _VERBOSITY:
            value = getattr(self, name)
            if str(value).upper() not in ("NONE", "INFO", "DEBUG"):
                raise ValueError(f"{label}: config {name}={value!r}; use 'NONE', 'INFO' or "
                                 f"'DEBUG'")
        pct = self.cpu_allocation_percentage
        if not 0 < pct <= 1:
            raise ValueError(f"{label}: config cpu_allocation_percentage={pct!r}; use a "
                             f"fraction in (0, 1]")
        if self.ignore_head_node:
            raise ValueError(f"{label}: ignore_head_node is not supported by Xenna; use "
                             f"RayActorPoolExecutor or RayDataExecutor to keep the head node "
                             f"free")


CONFIG_CLASSES: tuple[type[ExecutorConfig], ...] = (
    ExecutorConfig, LocalConfig, RayConfig, PoolConfig, RayDataConfig, ActorPoolConfig,
    XennaConfig)
"""The classes whose tables the docs show (each lists the keys it adds to its base)."""


def _hints(cls: type) -> dict[str, Any]:
    return {k: v for k, v in typing.get_type_hints(cls).items()
            if typing.get_origin(v) is not ClassVar and v is not ClassVar}


def _own_fields(cls: type) -> list[dataclasses.Field]:
    """The fields ``cls`` adds to (or redefines from) its bases."""
    own = cls.__dict__.get("__annotations__", {})
    return [f for f in dataclasses.fields(cls) if f.name in own]


def _type_text(annotation: Any) -> str:
    text = (str(annotation).replace("typing.", "").replace("NoneType", "None")
            .replace("<class '", "").replace("'>", ""))
    return text.replace("|", "\\|")  # a pipe ends a Markdown table cell, even in code


def config_table_markdown(cls: type[ExecutorConfig]) -> str:
    """The keys ``cls`` adds to its base as a Markdown table (key, type, default, what)."""
    hints = _hints(cls)
    rows = ["| key | type | default | what |", "|---|---|---|---|"]
    for f in _own_fields(cls):
        default = "`[]`" if f.default is dataclasses.MISSING else f"`{f.default!r}`"
        rows.append(f"| `{f.name}` | `{_type_text(hints[f.name])}` | {default} | "
                    f"{f.metadata.get('doc', '')} |")
    return "\n".join(rows)


def config_tables_in(text: str) -> dict[str, str]:
    """The tables a document shows between ``<!-- config-table NAME -->`` and
    ``<!-- /config-table -->``, by class name."""
    out = {}
    for part in text.split("<!-- config-table ")[1:]:
        name, rest = part.split(" -->", 1)
        out[name.strip()] = rest.split("<!-- /config-table -->", 1)[0].strip()
    return out


def config_docs() -> str:
    """Every table with its markers, as ``docs/executors.md`` shows them. Regenerate with
    ``uv run python -c "from curator.executors import config as c; print(c.config_docs())"``."""
    return "\n\n".join(f"<!-- config-table {cls.__name__} -->\n{config_table_markdown(cls)}\n"
                       f"<!-- /config-table -->" for cls in CONFIG_CLASSES)
