"""SemanticDeduplicationWorkflow: semantic deduplication over Parquet files of embeddings.

Phases (each a pipeline on the workflow's executor, resumable through ``cache_path``):

1. ``SampleEmbeddingsStage`` samples each file on the workers (at most ``kmeans_sample`` rows in
   all); k-means centroids are fitted on that sample;
2. ``AssignClustersStage``: each input file's rows go to their nearest centroid's partition;
3. ``ClusterDedupStage``: each cluster keeps one row of every group whose cosine similarity is
   ``>= 1 - eps`` (order set by ``keep``) and writes the others' ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from curator.dedup.io import read_table, write_parquet
from curator.dedup.kmeans import kmeans, normalize
from curator.dedup.semantic import check_params, dedup_cluster, nearest_kept
from curator.dedup.workflow import DeduplicationWorkflow, done, group_size_counts, write_by_file
from curator.io import expand_paths, join_path
from curator.run.stats import DEDUP_GROUP_SIZES
from curator.stages.base import ProcessingStage
from curator.tasks import FileGroupTask, Task

__all__ = ["SemanticDeduplicationWorkflow", "AssignClustersStage", "ClusterDedupStage",
           "SampleEmbeddingsStage", "embeddings_to_numpy", "fit_centroids", "sample_rows",
           "centroids_of"]


def embeddings_to_numpy(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A list or fixed-size-list column of equal-length vectors as an ``(N, D)`` float32 array."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    n = len(arr)
    if n == 0:
        return np.empty((0, 0), dtype=np.float32)
    if arr.null_count:
        raise ValueError("the embedding column has null values")
    flat = arr.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    if flat.size % n:
        raise ValueError("the embedding vectors do not all have the same length")
    return flat.reshape(n, flat.size // n)


def sample_rows(path: str, column: str, k: int, seed: int, index: int) -> np.ndarray:
    """At most ``k`` vectors of ``column`` in ``path``: a random subset seeded by ``seed`` and the
    file's ``index`` (the same rows whichever worker samples the file)."""
    x = embeddings_to_numpy(read_table(path, [column]).column(column))
    if len(x) > k:
        x = x[np.sort(np.random.default_rng([seed, index]).choice(len(x), k, replace=False))]
    return x


def centroids_of(parts: Sequence[np.ndarray], n_clusters: int, seed: int) -> np.ndarray:
    """K-means centroids of the L2-normalised rows of ``parts``; ``(0, 0)`` when empty."""
    parts = [x for x in parts if len(x)]
    if not parts:
        return np.empty((0, 0), np.float32)
    return kmeans(normalize(np.concatenate(parts)), n_clusters, seed=seed)[1]


def fit_centroids(files: Sequence[str], column: str, *, n_clusters: int, kmeans_sample: int,
                  seed: int) -> np.ndarray:
    """K-means centroids of the L2-normalised vectors in ``column`` of ``files``, fitted on at
    most ``kmeans_sample`` rows spread evenly over the files (:func:`sample_rows` of each), read
    in this process; an empty ``(0, 0)`` array when the files hold no vectors."""
    per_file = max(1, kmeans_sample // max(1, len(files)))
    return centroids_of([sample_rows(f, column, per_file, seed, i) for i, f in enumerate(files)],
                        n_clusters, seed)


class SampleEmbeddingsStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """Writes :func:`sample_rows` of one input file to ``sample_dir`` (on the workers, so the
    driver reads only the sample, never every embedding file)."""

    name = "SampleEmbeddings"

    def __init__(self, column: str, per_file: int, seed: int, sample_dir: str) -> None:
        self.column, self.per_file, self.seed, self.sample_dir = column, per_file, seed, sample_dir

    def process(self, task: FileGroupTask) -> FileGroupTask:
        i = int(task.metadata["file_index"])
        out = join_path(self.sample_dir, f"f{i:05d}.parquet")
        if not done(out):
            x = sample_rows(task.data[0], self.column, self.per_file, self.seed, i)
            dim = x.shape[1] if x.ndim == 2 else 0
            write_parquet(pa.table({"embedding": pa.FixedSizeListArray.from_arrays(
                pa.array(x.ravel(), pa.float32()), dim)}), out)
        return task.derive([out])


class AssignClustersStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """Assign each row of one file to its nearest centroid; write it to that cluster's partition."""

    name = "AssignClusters"

    def __init__(self, id_field: str, embedding_field: str, centroids: np.ndarray,
                 cache_dir: str) -> None:
        self.id_field, self.embedding_field = id_field, embedding_field
        self.centroids, self.cache_dir = centroids, cache_dir

    def process(self, task: FileGroupTask) -> FileGroupTask:
        i = int(task.metadata["file_index"])
        marker = join_path(self.cache_dir, "_done", f"f{i:05d}.parquet")
        if done(marker):
            return task
        table = read_table(task.data[0], [self.id_field, self.embedding_field])
        x = normalize(embeddings_to_numpy(table.column(self.embedding_field)))
        if len(x):
            labels = np.argmax(x @ self.centroids.T, axis=1)
            ids = table.column(self.id_field)
            for c in np.unique(labels):
                sel = np.flatnonzero(labels == c)
                emb = pa.FixedSizeListArray.from_arrays(pa.array(x[sel].ravel()), x.shape[1])
                write_parquet(pa.table({"id": ids.take(sel), "file": np.full(len(sel), i, np.int32),
                                        "row": sel, "embedding": emb}),
                              join_path(self.cache_dir, f"c{c:05d}", f"f{i:05d}.parquet"))
        write_parquet(pa.table({"rows": [table.num_rows]}), marker)
        return task


class ClusterDedupStage(ProcessingStage[Task, Task]):
    """Find the duplicates within one cluster and write their ids (``id``) and the id of the
    kept row most similar to each (``duplicate_of``); publishes the group sizes."""

    name = "ClusterDedup"

    def __init__(self, cache_dir: str, centroids: np.ndarray, duplicates_dir: str, eps: float,
                 keep: str, seed: int, by_file_dir: str | None = None) -> None:
        self.cache_dir, self.centroids, self.duplicates_dir = cache_dir, centroids, duplicates_dir
        self.eps, self.keep, self.seed, self.by_file_dir = eps, keep, seed, by_file_dir

    def process(self, task: Task) -> Task:
        c = int(task.metadata["partition_index"])
        out = join_path(self.duplicates_dir, f"semantic_c{c:05d}.parquet")
        if done(out):
            table = read_table(out)
            task.metadata["duplicates"] = table.num_rows
            if "duplicate_of" in table.column_names:
                self.publish_counts(DEDUP_GROUP_SIZES,
                                    group_size_counts(table.column("duplicate_of").to_numpy()))
            return task
        try:
            files = expand_paths(join_path(self.cache_dir, f"c{c:05d}"), [".parquet"])
        except FileNotFoundError:
            files = []
        task.metadata["duplicates"] = 0
        if not files:
            return task
        t = pa.concat_tables([read_table(f) for f in files], promote_options="default")
        rank = np.lexsort((t.column("row").to_numpy(), t.column("file").to_numpy()))
        rank_of = np.empty(len(rank), np.int64)
        rank_of[rank] = np.arange(len(rank))
        x = embeddings_to_numpy(t.column("embedding"))
        remove = dedup_cluster(x, rank_of, self.centroids[c], eps=self.eps, keep=self.keep,
                               rng=np.random.default_rng(self.seed + c))
        kept_of = nearest_kept(x, remove)
        ids, gone = t.column("id"), np.flatnonzero(remove)
        if self.by_file_dir:
            write_by_file(self.by_file_dir, ids.take(gone), t.column("file").to_numpy()[gone],
                          f"c{c:05d}")
        write_parquet(pa.table({"id": ids.take(gone), "duplicate_of": ids.take(kept_of)}), out)
        task.metadata["duplicates"] = int(remove.sum())
        self.publish_counts(DEDUP_GROUP_SIZES, group_size_counts(kept_of))
        return task


class SemanticDeduplicationWorkflow(DeduplicationWorkflow):
    """Remove records whose embeddings are nearly parallel (cosine similarity ``>= 1 - eps``).

    Works for any modality: the input is Parquet (or JSONL) files with an id column and an
    embedding column (a list of floats). Duplicate ids go to ``output_path/duplicates``; with
    ``perform_removal`` the input minus the duplicates goes to ``output_path/deduplicated``.

    Parameters (besides those of :class:`DeduplicationWorkflow`):
        embedding_field: the embedding column.
        n_clusters: k-means clusters (clipped to the number of rows fitted).
        eps: similarity tolerance; ``0`` removes identical directions only.
        keep: which record of a group is kept: ``first`` (input order), ``last``, ``hard``
            (farthest from the centroid), ``easy`` (closest) or ``random``.
        seed: seed of k-means and of ``keep="random"``.
        kmeans_sample: at most this many rows are used to fit the centroids.
    """

    name = "semantic_dedup"
    cache_subdir = "semantic"
    writes_by_file = True
    duplicates_glob = "semantic_c*.parquet"

    def __init__(self, input_path: str | Sequence[str], output_path: str, *,
                 embedding_field: str = "embeddings", n_clusters: int = 100, eps: float = 0.01,
                 keep: str = "first", seed: int = 42, kmeans_sample: int = 200_000,
                 **kwargs: Any) -> None:
        super().__init__(input_path, output_path, **kwargs)
        check_params("SemanticDeduplicationWorkflow", eps, n_clusters, keep)
        self.embedding_field, self.n_clusters, self.eps = embedding_field, n_clusters, eps
        self.keep, self.seed, self.kmeans_sample = keep, seed, kmeans_sample

    def _fit(self, files: list[str]) -> np.ndarray:
        path = join_path(self.cache_path, "semantic", "centroids.parquet")
        if done(path):
            cols = read_table(path, ["centroid"]).column("centroid")
            return embeddings_to_numpy(cols)
        per_file = max(1, self.kmeans_sample // max(1, len(files)))
        samples = self.run_stage(
            SampleEmbeddingsStage(self.embedding_field, per_file, self.seed,
                                  join_path(self.cache_path, "semantic", "sample")),
            self.file_tasks(files))
        parts = [embeddings_to_numpy(read_table(t.data[0], ["embedding"]).column("embedding"))
                 for t in sorted(samples, key=lambda t: t.data[0])]
        centroids = centroids_of(parts, self.n_clusters, self.seed)
        if centroids.size == 0:
            return centroids
        write_parquet(pa.table({"centroid": pa.FixedSizeListArray.from_arrays(
            pa.array(centroids.ravel()), centroids.shape[1])}), path)
        return centroids

    def identify(self, files: list[str]) -> int:
        centroids = self._fit(files)
        if centroids.size == 0:
            return 0
        cache = join_path(self.cache_path, "semantic", "clusters")
        self.run_stage(AssignClustersStage(self.id_field, self.embedding_field, centroids, cache),
                       self.file_tasks(files))
        out = self.run_stage(ClusterDedupStage(cache, centroids, self.duplicates_path, self.eps,
                                               self.keep, self.seed, self.by_file_dir),
                             self.partition_tasks(len(centroids)))
        return sum(int(t.metadata.get("duplicates", 0)) for t in out)
