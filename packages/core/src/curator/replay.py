"""Replay: run the tasks a run kept whole in its rejected sink again, from the stage where they
failed, through the same pipeline (after the cause was fixed: space freed, a bug patched).

``Pipeline.replay(rejected_dir)`` (or ``curator replay REJECTED_DIR --spec spec.yaml``) loads
every failed-task entry of the directory, groups the tasks by the stage they failed in and runs
each group through that stage and everything after it. A task that succeeds has its entry moved
to ``{rejected_dir}/.replayed/``; one that fails again gets its entry rewritten with the new
reason. Writers keep their deterministic names, so replayed output lands where it would have.

Failed tasks are stored as data (``*.failed.task.json`` naming a registered task class, plus
Parquet / image / audio / clip files) and rebuilt through their class, so replaying a rejected
directory runs no code from it. A task kept as a pickle (``*.failed.task.pkl``: its class was
not registered, or an older Curator wrote it) is read only with ``trust_pickles=True``
(``curator replay --trust-pickles``): unpickling runs whatever code the file holds, so do that
only for a directory nobody else can write to.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from curator.errors import ConfigError
from curator.io import atomic_write, get_fs, join_path
from curator.run.sink import FAILED_SUFFIX, FailedTask
from curator.run.stats import RunStats
from curator.task_files import TASK_SUFFIX, TaskFiles, load_task
from curator.tasks import Task

if TYPE_CHECKING:
    from curator.executors.base import BaseExecutor
    from curator.run.context import RunContext
    from curator.run.result import RunResult
    from curator.stages.base import ProcessingStage

__all__ = ["FailedEntry", "load_failed", "replay_run", "supersede_failed", "REPLAYED_DIR",
           "SUPERSEDED_DIR"]

REPLAYED_DIR = ".replayed"
SUPERSEDED_DIR = ".superseded"


@dataclass
class FailedEntry:
    """One failed task found in a rejected directory: where it failed, the task, its files."""

    stage: str
    task: Task
    error: str
    run_id: str
    files: list[str]


def load_failed(source: str | RunResult, *, trust_pickles: bool = False) -> list[FailedEntry]:
    """The failed tasks kept by a run: from a rejected directory (``{stage}/*.failed.jsonl``
    entries) or from a :class:`~curator.run.result.RunResult` whose sink kept them in
    memory. Tasks are rebuilt from their data files; an entry kept as a pickle raises
    :class:`ConfigError` unless ``trust_pickles`` (checked for every entry before any task is
    loaded)."""
    if not isinstance(source, str):
        return _from_result(source)
    fs, root = get_fs(source)
    pattern = f"{root.rstrip('/')}/*/*{FAILED_SUFFIX}*.jsonl"
    found = []
    for path in sorted(fs.glob(pattern)):
        with fs.open(path, "r") as fh:
            rec = json.loads(fh.readline())
        files = rec.get("record", {}).get("files") or {}
        if not isinstance(files, dict) or not isinstance(files.get("task"), str):
            raise ConfigError(f"{path}: this failed-task entry names no task file, so it cannot "
                              f"be replayed")
        found.append((path, rec, files))
    pickled = [p for p, _, files in found if not files["task"].endswith(TASK_SUFFIX)]
    if pickled and not trust_pickles:
        raise ConfigError(
            f"{len(pickled)} failed task(s) in {source} are stored as pickles (e.g. "
            f"{pickled[0].rsplit('/', 1)[0]}/{_task_name(pickled[0], found)}), written by an "
            f"older Curator or for a task class that is not registered as a task. Reading a "
            f"pickle runs whatever code it holds, so Curator reads none by default. If you trust "
            f"everyone who can write to {source}, opt in: `curator replay {source} --spec ... "
            f"--trust-pickles` (Python: Pipeline.replay(..., trust_pickles=True))")
    entries = []
    for path, rec, files in found:
        folder = path.rsplit("/", 1)[0]
        data = files.get("data") or []
        names = [files["task"], *([data] if isinstance(data, str) else data)]
        task = _load_task(fs, folder, files["task"], data if isinstance(data, str) else None)
        paths = [path] + [_in(folder, name) for name in names]
        entries.append(FailedEntry(rec["stage"], task, rec.get("error", ""),
                                   rec.get("record", {}).get("run_id", ""), paths))
    return entries


def _task_name(path: str, found: list[tuple[str, dict, dict]]) -> str:
    return next(files["task"] for p, _, files in found if p == path)


def _in(folder: str, name: str) -> str:
    """``folder/name`` for a plain file name from an entry (no path separators)."""
    return TaskFiles(f"{folder}/x").path(name)


def _failed_files(rejected_dir: str) -> Iterator[str]:
    fs, root = get_fs(rejected_dir)
    yield from sorted(fs.glob(f"{root.rstrip('/')}/*/*{FAILED_SUFFIX}*"))


def supersede_failed(rejected_dir: str) -> int:
    """Before a resumed run: move earlier runs' failed-task entries to ``.superseded/``.

    Their partitions were not checkpointed as done, so the resumed run redoes them from the
    source (and writes new entries for whatever fails again); replaying the old entries as well
    would do that work twice. Returns how many files moved."""
    files = list(_failed_files(rejected_dir))
    _move(files, SUPERSEDED_DIR)
    return len(files)


def _move(paths: list[str], folder: str) -> None:
    """Move ``{root}/{stage}/{name}`` to ``{root}/{folder}/{stage}/{name}``."""
    for path in paths:
        fs, _ = get_fs(path)
        parent, name = path.rsplit("/", 1)
        root, stage_dir = parent.rsplit("/", 1)
        target = join_path(root, folder, stage_dir, name)
        fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            fs.mv(path, target)


def _from_result(result: RunResult) -> list[FailedEntry]:
    out = []
    for f in result.failed:
        if f.task is None:
            raise ConfigError(f"{f.stage}/{f.task_id} was written to {result.rejected.path}; "
                              f"replay that directory instead")
        out.append(FailedEntry(f.stage, f.task, f.error, "", []))
    return out


def _load_task(fs: Any, folder: str, task_name: str, legacy_data: str | None) -> Task:
    """A task from its stored data; a pickle (and an older entry's separate Parquet data) only
    gets here once the caller has checked ``trust_pickles``."""
    if task_name.endswith(TASK_SUFFIX):
        return load_task(_in(folder, task_name))
    import cloudpickle

    with fs.open(_in(folder, task_name), "rb") as fh:
        task = cloudpickle.load(fh)
    if legacy_data is not None:
        import pyarrow.parquet as pq

        with fs.open(_in(folder, legacy_data), "rb") as fh:
            task.data = pq.read_table(fh)
    return task


@contextlib.contextmanager
def _same_run(run_ids: set[str]) -> Iterator[str | None]:
    """A throw-away checkpoint directory that carries the original run id, so writers' output
    directories see the replay as the same run (their save mode does not refuse it)."""
    if len(run_ids) != 1 or not next(iter(run_ids)):
        yield None
        return
    tmp = tempfile.mkdtemp(prefix="curator-replay-")
    try:
        with atomic_write(os.path.join(tmp, "run-id.json"), "w") as fh:
            json.dump({"run_id": next(iter(run_ids)), "created_at": time.time()}, fh)
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def replay_run(stages: list[ProcessingStage], entries: list[FailedEntry],
               executor: BaseExecutor, context: RunContext, *,
               claim: Any = None) -> RunResult:
    """Run each entry's task through ``stages`` from the stage it failed in; returns one
    :class:`RunResult` over all of them. ``claim(stages, checkpoint_dir)`` is a context
    manager claiming the writers' output directories (see :meth:`curator.Pipeline.replay`)."""
    from curator.executors.base import BaseExecutor

    index = {s.name: i for i, s in enumerate(stages)}
    groups: dict[int, list[Task]] = {}
    for e in entries:
        if e.stage not in index:
            raise ConfigError(f"a failed task ({e.task.task_id}) failed in stage {e.stage!r}, "
                              f"which this pipeline does not have (stages: {list(index)}); "
                              f"replay it with the pipeline that wrote it")
        groups.setdefault(index[e.stage], []).append(e.task)
    stats = RunStats.for_stages([s.name for s in stages], executor=executor.name)
    outputs: list[Task] = []
    summary, context.summary = context.summary, False
    start = time.perf_counter()
    with _same_run({e.run_id for e in entries}) as ckpt:
        for first in sorted(groups):
            part = stages[first:]
            with claim(part, ckpt) if claim is not None else contextlib.nullcontext():
                result = executor.execute(part, groups[first], context=context)
            outputs.extend(result)
            for k, s in enumerate(result.stats.stages):
                _add(stats.stages[first + k], s)
    stats.wall_s = time.perf_counter() - start
    context.summary = summary
    result = BaseExecutor.finish(context, stats, outputs)
    _retire(entries, result.failed)
    return result


def _add(into: Any, s: Any) -> None:
    for f in fields(s):
        value = getattr(s, f.name)
        if f.name == "workers":
            into.workers = max(into.workers, value)
        elif isinstance(value, int | float) and f.name != "name":
            setattr(into, f.name, getattr(into, f.name) + value)


def _retire(entries: list[FailedEntry], still: list[FailedTask]) -> None:
    """Move the entries of tasks that no longer fail to ``.replayed/`` (an audit trail)."""
    again = {(f.stage, f.task_id) for f in still}
    rewritten = {f.entry for f in still}
    for e in entries:
        if (e.stage, e.task.task_id) in again or not e.files or e.files[0] in rewritten:
            continue
        _move(e.files, REPLAYED_DIR)
