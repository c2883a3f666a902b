"""Tasks stored as data, never as pickles: a JSON document naming a registered task class plus
the files of the bytes the task carries (see :mod:`curator.task_data`).

``save_task(task, stem)`` writes ``{stem}.task.json`` and ``{stem}.<key>`` files beside it;
``load_task(path)`` rebuilds the task through its registered class (kind ``task``), so reading a
stored task runs no code from the file. A task class takes part through two methods (see
:class:`curator.Task`): ``dump_data(files) -> state`` and ``load_data(state, files) -> data``;
the default stores a ``pyarrow.Table`` as Parquet and anything else made of JSON values, bytes,
NumPy arrays and tables with :func:`dump_value`.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from curator.errors import ConfigError
from curator.io import get_fs
from curator.task_data import (
    TaskFiles,
    TaskNotSerializable,
    dump_array,
    dump_data,
    dump_value,
    load_value,
)

if TYPE_CHECKING:
    from curator.plugins.registry import Registry
    from curator.tasks import Task

__all__ = ["TASK_FORMAT", "TASK_SUFFIX", "TaskFiles", "TaskNotSerializable", "dump_value",
           "load_value", "dump_data", "dump_array", "save_task", "load_task", "task_class_name"]

TASK_FORMAT = "curator-task/1"
TASK_SUFFIX = ".task.json"
_BASE_FIELDS = ("task_id", "dataset_name", "data", "metadata", "stage_perf")


# ---- whole tasks ------------------------------------------------------------------------------
def task_class_name(cls: type, registry: Registry | None = None) -> str | None:
    """The ``plugin:Name`` under which ``cls`` is registered as a ``task``, or None."""
    from curator.plugins import get_registry

    registry = registry or get_registry()
    for entry in registry.list(kind="task"):
        if entry.obj is cls:
            return entry.qualified_name
    return None


def save_task(task: Task, stem: str, *, stage: str = "", registry: Registry | None = None,
              extra: dict[str, Any] | None = None) -> list[str]:
    """Write ``task`` as ``{stem}.task.json`` plus the files of its bytes; returns the names
    written (the JSON document last). Raises :class:`TaskNotSerializable` (leaving nothing
    behind) when its class is not registered as a ``task`` or it holds an object that cannot be
    stored as data."""
    cls = type(task)
    name = task_class_name(cls, registry)
    if name is None:
        raise TaskNotSerializable(
            f"task class {cls.__module__}.{cls.__qualname__} is not registered as a task, so it "
            f"could not be rebuilt from files; register it in your plugin: "
            f"register({cls.__name__}, kind='task')")
    files = TaskFiles(stem)
    try:
        doc = {
            "format": TASK_FORMAT, "task_class": name, "stage": stage,
            "task_id": task.task_id, "dataset_name": task.dataset_name,
            "metadata": dump_value(dict(task.metadata), files),
            "stage_perf": [dataclasses.asdict(p) for p in task.stage_perf],
            "fields": {f.name: dump_value(getattr(task, f.name), files)
                       for f in dataclasses.fields(task)
                       if f.init and f.name not in _BASE_FIELDS},
            "data": task.dump_data(files),
            **(extra or {}),
        }
        text = json.dumps(doc, ensure_ascii=False, allow_nan=False)
        files.put(TASK_SUFFIX.lstrip("."), text.encode())
    except BaseException:
        _remove(files)
        raise
    return files.written


def _remove(files: TaskFiles) -> None:
    import contextlib

    for name in files.written:
        fs, path = get_fs(files.path(name))
        with contextlib.suppress(OSError):
            fs.rm(path)


def load_task(path: str, *, registry: Registry | None = None) -> Task:
    """Rebuild the task stored at ``path`` (a ``*.task.json`` written by :func:`save_task`)
    through its registered class; no code is read from the files."""
    from curator.errors import UnknownNameError
    from curator.plugins import get_registry
    from curator.tasks import StagePerf, Task

    if not path.endswith(TASK_SUFFIX):
        raise ConfigError(f"{path}: a stored task is a *{TASK_SUFFIX} file")
    fs, local = get_fs(path)
    with fs.open(local, "r") as fh:
        doc = json.load(fh)
    if not isinstance(doc, dict) or doc.get("format") != TASK_FORMAT:
        raise ConfigError(f"{path}: not a stored Curator task (format {TASK_FORMAT!r})")
    registry = registry or get_registry()
    name = str(doc.get("task_class", ""))
    try:
        entry = registry.get(name, kind="task")
    except UnknownNameError:
        plain = name.rpartition(":")[2]
        try:
            entry = registry.get(plain, kind="task")
        except UnknownNameError as exc:
            raise ConfigError(f"{path}: its task class {name!r} is not registered as a task "
                              f"(is the plugin that provides it installed?): {exc}") from None
    cls = entry.obj
    if not (isinstance(cls, type) and issubclass(cls, Task)):  # pragma: no cover - registry checks
        raise ConfigError(f"{path}: {name!r} is not a task class")
    files = TaskFiles(path[: -len(TASK_SUFFIX)])
    data = cls.load_data(doc.get("data"), files)
    fields = {k: load_value(v, files) for k, v in (doc.get("fields") or {}).items()}
    return cls(task_id=doc["task_id"], dataset_name=doc.get("dataset_name", ""), data=data,
               metadata=load_value(doc.get("metadata") or {}, files),
               stage_perf=[StagePerf(**p) for p in doc.get("stage_perf") or []], **fields)
