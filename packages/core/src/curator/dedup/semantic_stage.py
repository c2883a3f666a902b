"""SemanticDeduplicationStage: semantic deduplication as one stage of a linear pipeline.

An all-to-all step built from three ordinary stages, so it runs on every executor:

1. ``SpillEmbeddingsStage`` (per task, parallel): writes the task as data (``*.task.json``
   naming its registered task class, plus Parquet / image / audio files; see
   :mod:`curator.task_files`, never a pickle) and its ids and unit-norm embeddings (Parquet)
   under ``spill_dir`` and passes on a small marker task;
2. ``SemanticGatherStage`` (one worker, a ``batch_size`` larger than any run): gathers every
   marker, then runs the semantic dedup workflow's own steps on the spilled embeddings: k-means
   on a sample, ``AssignClustersStage`` (file by file), ``ClusterDedupStage`` (cluster by cluster);
   it holds markers and one cluster at a time, never all tasks or all embeddings;
3. ``ApplySemanticDedupStage`` (per marker, parallel): reloads the task, drops its duplicate rows
   and emits it downstream.

Rows are offered for keeping in the order of their task's id, then row (``keep="first"`` keeps
the first of a duplicate group in that order), the same whatever order the executor delivered
tasks in.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from curator.dedup.io import read_table, write_parquet
from curator.dedup.kmeans import normalize
from curator.dedup.semantic import check_params
from curator.dedup.semantic_workflow import (
    AssignClustersStage,
    ClusterDedupStage,
    embeddings_to_numpy,
    fit_centroids,
)
from curator.io import expand_paths, get_fs, join_path
from curator.stages.base import CompositeStage, ProcessingStage
from curator.task_files import load_task, save_task
from curator.tasks import FileGroupTask, Task

__all__ = ["SemanticDeduplicationStage", "SpillEmbeddingsStage", "SemanticGatherStage",
           "ApplySemanticDedupStage", "GATHER_ALL"]

GATHER_ALL = 2**31 - 1
"""``batch_size`` of a stage that must see every task of the run in one call."""

_REMOVE = "_semantic_remove"  # marker metadata: rows of the task to drop
_TEMP_PREFIX = "curator-semdedup-"  # the default spill folder, removed once empty
_ROW_ID = "row_key"  # spilled column: "<spill name>/<row>", unique in the run
_SPILLED = "_semantic_spilled"  # marker metadata: the files of the spilled task


# ---- rows of a task: a pyarrow.Table (DocumentBatch) or a list of records (ImageBatch, …) ------
def _column(task: Task, field: str, owner: str, param: str) -> list[Any] | pa.ChunkedArray:
    data = task.data
    if isinstance(data, pa.Table):
        if field not in data.column_names:
            raise KeyError(f"{owner}: {param}={field!r} is not a column of task {task.task_id} "
                           f"(columns: {data.column_names}); set {param} to one of them")
        return data.column(field)
    if isinstance(data, list):
        return [_field(rec, field, owner, param) for rec in data]
    raise TypeError(f"{owner}: task {task.task_id} holds {type(data).__name__}; expected a "
                    f"pyarrow.Table or a list of records")


def _field(rec: Any, field: str, owner: str, param: str) -> Any:
    if isinstance(rec, dict):
        if field in rec:
            return rec[field]
    elif hasattr(rec, field):
        return getattr(rec, field)
    elif field in (getattr(rec, "metadata", None) or {}):
        return rec.metadata[field]
    raise KeyError(f"{owner}: a record of type {type(rec).__name__} has no {param}={field!r} "
                   f"(attribute, key or metadata entry)")


def _keep_rows(task: Task, keep: np.ndarray) -> None:
    if isinstance(task.data, pa.Table):
        task.data = task.data.filter(pa.array(keep))
    else:
        task.data = [rec for rec, k in zip(task.data, keep, strict=True) if k]


class SpillEmbeddingsStage(ProcessingStage[Task, FileGroupTask]):
    """Write a task and its embeddings under ``spill_dir``; emit a marker naming both files."""

    path_params: ClassVar[tuple[str, ...]] = ("spill_dir",)

    def __init__(self, id_field: str, embedding_field: str, spill_dir: str,
                 name: str = "SemanticDedup.spill") -> None:
        self.id_field, self.embedding_field, self.spill_dir = id_field, embedding_field, spill_dir
        self.name = name

    def inputs(self):
        return ["data"], []

    def process(self, task: Task) -> FileGroupTask:
        ids = _column(task, self.id_field, self.name, "id_field")
        emb = _column(task, self.embedding_field, self.name, "embedding_field")
        if isinstance(emb, pa.ChunkedArray):
            x = embeddings_to_numpy(emb)
        else:
            x = np.stack([np.asarray(e, dtype=np.float32).ravel() for e in emb]) if emb else \
                np.empty((0, 0), np.float32)
        key = f"{task.task_id}-{uuid.uuid4().hex[:12]}"
        x = normalize(x) if len(x) else x
        n, dim = x.shape if x.ndim == 2 else (0, 0)
        table = pa.table({
            _ROW_ID: [f"{key}/{i}" for i in range(n)],
            "user_id": pa.array([str(v) for v in (ids.to_pylist() if isinstance(
                ids, pa.ChunkedArray) else ids)], pa.string()),
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel(), pa.float32()),
                                                           max(dim, 1)) if n else
            pa.array([], pa.list_(pa.float32()))})
        emb_path = join_path(self.spill_dir, "embeddings", f"{key}.parquet")
        stem = join_path(self.spill_dir, "tasks", key)
        write_parquet(table, emb_path)
        written = save_task(task, stem, stage=self.name)  # data, not a pickle
        folder = stem.rsplit("/", 1)[0]
        task_files = [f"{folder}/{name}" for name in written]
        return FileGroupTask(task_id=task.task_id, dataset_name=task.dataset_name,
                             data=[task_files[-1], emb_path],
                             metadata={**task.metadata, "rows": n, "spill_key": key,
                                       _SPILLED: task_files})


class SemanticGatherStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """Gather every marker; find the duplicates with the semantic workflow's steps."""

    batch_size = GATHER_ALL
    path_params: ClassVar[tuple[str, ...]] = ("spill_dir",)

    def num_workers(self) -> int:
        return 1  # one gatherer sees every marker

    def __init__(self, spill_dir: str, n_clusters: int, eps: float, keep: str, seed: int,
                 kmeans_sample: int, name: str = "SemanticDedup.gather") -> None:
        self.spill_dir, self.n_clusters, self.eps = spill_dir, n_clusters, eps
        self.keep, self.seed, self.kmeans_sample = keep, seed, kmeans_sample
        self.name = name

    def process(self, task: FileGroupTask) -> FileGroupTask:
        return self.process_batch([task])[0]

    def _fit(self, files: list[str]) -> np.ndarray:
        return fit_centroids(files, "embedding", n_clusters=self.n_clusters,
                             kmeans_sample=self.kmeans_sample, seed=self.seed)

    def process_batch(self, tasks: list[FileGroupTask]) -> list[FileGroupTask]:
        tasks = sorted(tasks, key=lambda t: (t.task_id, t.metadata["spill_key"]))
        files = [t.data[1] for t in tasks if t.metadata.get("rows")]
        for t in tasks:
            t.metadata[_REMOVE] = []
        centroids = self._fit(files)
        if centroids.size == 0:
            return tasks
        work = join_path(self.spill_dir, f"run-{uuid.uuid4().hex[:12]}")
        try:
            assign = AssignClustersStage(_ROW_ID, "embedding", centroids, join_path(work, "c"))
            for i, f in enumerate(files):
                assign.process(FileGroupTask(task_id=f"f{i}", dataset_name="semantic",
                                             data=[f], metadata={"file_index": i}))
            find = ClusterDedupStage(join_path(work, "c"), centroids, join_path(work, "dup"),
                                     self.eps, self.keep, self.seed)
            for c in range(len(centroids)):
                find.process(Task(task_id=f"c{c}", dataset_name="semantic", data=None,
                                  metadata={"partition_index": c}))
            for name, counts in find.drain_counts().items():  # group sizes, for the reports
                self.publish_counts(name, counts)
            by_key = {t.metadata["spill_key"]: t for t in tasks}
            for path in expand_paths(join_path(work, "dup"), [".parquet"]):
                for row_key in read_table(path, ["id"]).column("id").to_pylist():
                    key, row = row_key.rsplit("/", 1)
                    by_key[key].metadata[_REMOVE].append(int(row))
        finally:
            fs, root = get_fs(work)
            with contextlib.suppress(FileNotFoundError):
                fs.rm(root, recursive=True)
        return tasks


class ApplySemanticDedupStage(ProcessingStage[FileGroupTask, Task]):
    """Reload a spilled task, drop its duplicate rows, emit it (and delete the spill files)."""

    def __init__(self, name: str = "SemanticDedup.apply") -> None:
        self.name = name

    def process(self, task: FileGroupTask) -> Task:
        task_path, emb_path = task.data
        original = load_task(task_path)  # rebuilt through its registered task class
        remove = task.metadata.get(_REMOVE) or []
        keep = np.ones(int(task.metadata.get("rows", 0)), dtype=bool)
        keep[np.asarray(remove, dtype=np.int64)] = False
        _keep_rows(original, keep)
        original.metadata["semantic_duplicates_removed"] = len(remove)
        for p in (*(task.metadata.get(_SPILLED) or [task_path]), emb_path):
            pfs, pp = get_fs(p)
            with contextlib.suppress(FileNotFoundError):
                pfs.rm(pp)
        _remove_empty_spill_folders(task_path, emb_path)
        return original


def _remove_empty_spill_folders(*files: str) -> None:
    """Remove the spill folders this stage made once the last spilled file is gone (local paths;
    a folder that still holds another task's files is not empty and stays)."""
    for f in files:
        sub = os.path.dirname(f)
        for folder in (sub, os.path.dirname(sub)):
            if os.path.basename(folder) in ("embeddings", "tasks") or \
                    os.path.basename(folder).startswith(_TEMP_PREFIX):
                with contextlib.suppress(OSError):
                    os.rmdir(folder)


class SemanticDeduplicationStage(CompositeStage[Task, Task]):
    """Remove items whose embeddings are nearly parallel (cosine similarity ``>= 1 - eps``), as
    one stage of a linear pipeline; the kept items flow on downstream.

    Works on tasks whose data is a ``pyarrow.Table`` (``DocumentBatch``) or a list of records
    (``ImageBatch``: attributes, dict keys or ``metadata`` entries). It waits for every upstream
    task (an all-to-all step), keeping only markers in memory: tasks and embeddings are spilled
    to ``spill_dir`` and clustered with the semantic dedup workflow's own steps.

    Parameters (NeMo Curator's):
        id_field: the item id column/attribute (must be present; it names the removed items).
        embedding_field: the embedding column/attribute (a vector per item).
        n_clusters: k-means clusters (clipped to the number of items fitted).
        eps: similarity tolerance in ``[0, 2)``; ``0`` removes identical directions only.
        keep: which item of a duplicate group is kept (see ``curator.dedup.KEEP_STRATEGIES``).
        seed: seed of k-means and of ``keep="random"``.
        kmeans_sample: at most this many embeddings fit the centroids.
        spill_dir: where tasks and embeddings are spilled (default: a new temporary directory
            made when the pipeline is built; on a multi-node cluster give a path every node can
            read).
    """

    kind: ClassVar[str] = "deduplicator"

    def __init__(self, id_field: str = "id", embedding_field: str = "embeddings",
                 n_clusters: int = 100, eps: float = 0.01, keep: str = "first", seed: int = 42,
                 kmeans_sample: int = 200_000, spill_dir: str | None = None,
                 name: str = "SemanticDeduplicationStage") -> None:
        check_params(name, eps, n_clusters, keep)
        self.id_field, self.embedding_field = id_field, embedding_field
        self.n_clusters, self.eps, self.keep, self.seed = n_clusters, eps, keep, seed
        self.kmeans_sample = kmeans_sample
        self.spill_dir = spill_dir
        self.name = name

    def decompose(self) -> list[ProcessingStage]:
        if not self.spill_dir:  # made once, when the pipeline is built
            self.spill_dir = tempfile.mkdtemp(prefix=_TEMP_PREFIX)
        return [
            SpillEmbeddingsStage(self.id_field, self.embedding_field, self.spill_dir,
                                 name=f"{self.name}.spill"),
            SemanticGatherStage(self.spill_dir, self.n_clusters, self.eps, self.keep, self.seed,
                                self.kmeans_sample, name=f"{self.name}.gather"),
            ApplySemanticDedupStage(name=f"{self.name}.apply"),
        ]
