"""The one table of registrable kinds. The plugin hooks, the YAML component keys, the choices
of ``curator stages --kind`` and the plugin docs are all generated from :data:`KINDS`; add a
kind here and nowhere else."""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["Kind", "KINDS", "KIND_NAMES", "GENERIC_KINDS", "kind_by_hook", "kind_of",
           "kinds_table_markdown", "is_stage_class"]


@dataclass(frozen=True)
class Kind:
    """A kind of registered component.

    ``name`` is the registry kind and the YAML key (``filter: WordCountFilter``); ``hook`` is the
    classic per-kind hook (``curator_register_filters``); ``stage_only`` means the class must
    subclass ``curator.ProcessingStage``; ``spec_key`` whether it names components in YAML
    specs (tasks are not built from specs)."""

    name: str
    description: str
    stage_only: bool = False
    spec_key: bool = True

    @property
    def hook(self) -> str:
        return f"curator_register_{self.name}s"


KINDS: tuple[Kind, ...] = (
    Kind("reader", "sources that turn files into tasks", stage_only=True),
    Kind("writer", "sinks that write tasks to files", stage_only=True),
    Kind("filter", "filter stages and filter objects (score, then keep or reject)"),
    Kind("modifier", "modifier stages and modifier objects (rewrite records)"),
    Kind("classifier", "models that label or score records", stage_only=True),
    Kind("embedder", "stages that add embedding vectors", stage_only=True),
    Kind("deduplicator", "deduplication stages and workflows"),
    Kind("downloader", "downloaders and URL generators (fetch raw data)"),
    Kind("extractor", "extractors and iterators (downloaded files to records)"),
    Kind("executor", "executors: classes with execute(stages, ...)"),
    Kind("stage", "any other stage (partitioning, ids, transforms)", stage_only=True),
    Kind("task", "task classes (`curator.Task` subclasses) that failed tasks and dedup caches "
                 "are stored as and rebuilt from (not a YAML key)", spec_key=False),
)
KIND_NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)
GENERIC_KINDS = frozenset({"stage", "composite"})
"""Class-level ``kind`` values that say nothing specific (the ProcessingStage defaults)."""


def kind_by_hook() -> dict[str, Kind]:
    """Classic hook name -> :class:`Kind`."""
    return {k.hook: k for k in KINDS}


def kind_of(obj: Any, fallback: str | None = None) -> str | None:
    """The kind ``obj`` declares through its class attribute ``kind`` when that is a specific
    kind of :data:`KINDS`; else ``fallback``; else ``"stage"`` for a ProcessingStage subclass and
    ``"executor"`` for a class with ``execute``, ``"task"`` for a ``curator.Task`` subclass;
    else None."""
    declared = getattr(obj, "kind", None)
    if isinstance(declared, str) and declared in KIND_NAMES and declared not in GENERIC_KINDS:
        return declared
    if fallback is not None:
        return fallback
    from curator.tasks import Task

    if is_stage_class(obj):
        return "stage"
    if inspect.isclass(obj) and callable(getattr(obj, "execute", None)):
        return "executor"
    if inspect.isclass(obj) and issubclass(obj, Task):
        return "task"
    return None


def is_stage_class(obj: Any) -> bool:
    """Whether ``obj`` is a ``curator.ProcessingStage`` subclass. The registry sits below the
    stages (the run record names stored tasks through it; see the layers in
    docs/architecture.md), so it does not import them: no class can subclass ProcessingStage
    before ``curator.stages.base`` is loaded, so the base is looked up among loaded modules."""
    base = getattr(sys.modules.get("curator.stages.base"), "ProcessingStage", None)
    return base is not None and inspect.isclass(obj) and issubclass(obj, base)


def kinds_table_markdown() -> str:
    """The kinds as a Markdown table (kind / YAML key, classic hook, what it is) for the docs."""
    rows = ["| kind (YAML key) | classic hook | what |", "|---|---|---|"]
    rows += [f"| `{k.name}` | `{k.hook}` | {k.description} |" for k in KINDS]
    return "\n".join(rows)
