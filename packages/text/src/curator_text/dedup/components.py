"""Connected components: in memory (NumPy), and on the cluster as rounds of partitioned stages.

On the cluster the graph is never gathered anywhere: :func:`run_components` runs the alternating
*large-star* / *small-star* algorithm (Kiveris et al., "Connected Components in MapReduce and
Beyond", SoCC 2014), each step one :class:`StarStepStage` over ``num_partitions`` hash partitions
of the nodes. A step directory holds the graph as canonical edges ``(lo, hi)`` with ``lo < hi``,
each written twice: into the partition of ``lo`` (segment ``2 * partition``) and of ``hi``
(segment ``2 * partition + 1``) of its writer's one segmented file
(:mod:`curator.dedup.segments`)::

    work_dir/r{step:03d}/{writer}.arrow                    (columns lo, hi)
    work_dir/r{step:03d}/_done/q{partition:05d}.parquet    (the writer's counts)

Step ``r`` reads ``r{r}`` and writes ``r{r+1}`` (duplicate edges are dropped when read).

* large-star (even steps), at each node ``u`` of the partition: ``m`` = the smallest of ``u`` and
  its neighbours; every edge ``(u, v)`` with ``v > u`` becomes ``(m, v)``.
* small-star (odd steps), at each node ``u``: ``m`` = its smallest neighbour below ``u``; every
  edge ``(w, u)`` with ``w < u`` becomes ``(m, w)``, and ``(m, u)`` is kept.

Both keep each component connected; an edge "changes" when it is replaced. When a large-star step
and a small-star step in a row change nothing, every component is a star around its smallest node:
the final step's edges ``(root, node)`` list each non-root node once with its root. The driver only
reads each partition's counts (a few numbers) to decide when to stop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
from curator.dedup.io import read_table, write_parquet
from curator.dedup.memory import releases_memory
from curator.dedup.segments import read_segment, segment_files, write_segments
from curator.dedup.workflow import done
from curator.io import join_path
from curator.stages.base import ProcessingStage
from curator.tasks import Task

__all__ = ["connected_components", "jaccard", "hash_partition", "scatter_edges", "read_edges",
           "unique_pairs", "step_dir", "StarStepStage", "run_components"]

log = logging.getLogger(__name__)


def connected_components(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Components of the graph with edges ``a[i] — b[i]`` (integer node keys), in memory.

    Returns ``(nodes, roots)``: the sorted unique nodes and, for each, the smallest node of its
    component (union-find by minimum label with pointer jumping, vectorised).
    """
    nodes = np.unique(np.concatenate([a, b]))
    if len(nodes) == 0:
        return nodes, nodes
    ia, ib = np.searchsorted(nodes, a), np.searchsorted(nodes, b)
    parent = np.arange(len(nodes))
    while True:
        pa_, pb = parent[ia], parent[ib]
        low = np.minimum(pa_, pb)
        before = parent.copy()
        np.minimum.at(parent, pa_, low)
        np.minimum.at(parent, pb, low)
        while True:  # pointer jumping until every node points at a root
            nxt = parent[parent]
            if (nxt == parent).all():
                break
            parent = nxt
        if (parent == before).all():
            break
    return nodes, nodes[parent]


def jaccard(x: np.ndarray, y: np.ndarray) -> float:
    """Jaccard similarity of two sorted unique arrays (1.0 for two empty sets)."""
    if len(x) == 0 and len(y) == 0:
        return 1.0
    inter = len(np.intersect1d(x, y, assume_unique=True))
    return inter / (len(x) + len(y) - inter)


def hash_partition(keys: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """The partition (``0 .. n-1``) of each integer key: a SplitMix64 hash of ``key`` and
    ``seed`` modulo ``n`` (different seeds give independent partitionings)."""
    x = np.asarray(keys).astype(np.uint64)
    with np.errstate(over="ignore"):
        x = x + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x % np.uint64(max(1, n))).astype(np.int64)


def split_by(part: np.ndarray, n: int) -> list[tuple[int, np.ndarray]]:
    """``(p, rows)`` for each non-empty partition ``p`` of ``part`` (rows in their order)."""
    order = np.argsort(part, kind="stable")
    bounds = np.searchsorted(part[order], np.arange(n + 1))
    return [(p, order[bounds[p]:bounds[p + 1]]) for p in np.flatnonzero(np.diff(bounds)).tolist()]


def unique_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs ``(a[i], b[i])``, sorted by ``a`` then ``b``."""
    if len(a) == 0:
        return a, b
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    new = np.concatenate(([True], (a[1:] != a[:-1]) | (b[1:] != b[:-1])))
    return a[new], b[new]


def step_dir(work_dir: str, step: int) -> str:
    """The directory of the graph that step ``step`` reads."""
    return join_path(work_dir, f"r{step:03d}")


def scatter_edges(a: np.ndarray, b: np.ndarray, out_dir: str, writer: str,
                  num_partitions: int) -> int:
    """Write the undirected edges ``a[i] — b[i]`` into a step directory (see the module doc):
    made canonical (``lo < hi``), self-loops dropped, each edge into the partition of ``lo`` and
    of ``hi``, in the one file ``{writer}.arrow`` (unique per writer). Returns the edges
    written."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keep = lo != hi
    lo, hi = lo[keep], hi[keep]
    segment = np.concatenate([2 * hash_partition(lo, num_partitions),
                              2 * hash_partition(hi, num_partitions) + 1])
    write_segments(pa.table({"lo": np.concatenate([lo, lo]), "hi": np.concatenate([hi, hi])}),
                   segment, join_path(out_dir, f"{writer}.arrow"))
    return len(lo)


def read_edges(directory: str, q: int, role: str) -> tuple[np.ndarray, np.ndarray]:
    """The distinct edges ``(lo, hi)`` of partition ``q`` of a step directory whose ``role``
    (``"lo"`` or ``"hi"``) node is in that partition, sorted."""
    t = read_segment(segment_files(directory), 2 * q + (role == "hi"))
    if t is None:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return unique_pairs(t.column("lo").to_numpy(), t.column("hi").to_numpy())


def _smallest_per(key: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct ``key`` values and the smallest ``value`` of each."""
    order = np.lexsort((value, key))
    key, value = key[order], value[order]
    first = np.concatenate(([True], key[1:] != key[:-1])) if len(key) else np.empty(0, bool)
    return key[first], value[first]


class StarStepStage(ProcessingStage[Task, Task]):
    """One large-star (even ``step``) or small-star (odd ``step``) step over one node partition
    (``task.metadata["partition_index"]``): reads ``step_dir(work_dir, step)``, writes the next
    step's directory and a marker with its counts, which a re-run reuses instead of recomputing.
    Sets ``task.metadata["changed"]`` (edges replaced) and ``["edges"]`` (edges written)."""

    name = "ComponentsStep"

    def __init__(self, work_dir: str, step: int, num_partitions: int) -> None:
        self.work_dir, self.step, self.num_partitions = work_dir, step, num_partitions
        self.name = "LargeStar" if step % 2 == 0 else "SmallStar"

    @releases_memory
    def process(self, task: Task) -> Task:
        q = int(task.metadata["partition_index"])
        src, dst = step_dir(self.work_dir, self.step), step_dir(self.work_dir, self.step + 1)
        marker = join_path(dst, "_done", f"q{q:05d}.parquet")
        if not done(marker):
            lo, hi, changed = (large_star if self.step % 2 == 0 else small_star)(src, q)
            edges = scatter_edges(lo, hi, dst, f"p{q:05d}", self.num_partitions)
            write_parquet(pa.table({"changed": [changed], "edges": [edges]}), marker)
        counts = read_table(marker).to_pylist()[0]
        task.metadata["changed"], task.metadata["edges"] = counts["changed"], counts["edges"]
        return task


def large_star(src: str, q: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Large-star at the nodes of partition ``q``: ``(new_lo, new_hi, changed)``."""
    lo, hi = read_edges(src, q, "lo")            # u = lo is here: (u, v) with v > u
    below_lo, below_hi = read_edges(src, q, "hi")  # u = hi is here: its neighbours below
    nodes, smallest = _smallest_per(below_hi, below_lo)
    at = np.minimum(np.searchsorted(nodes, lo), max(len(nodes) - 1, 0))
    has_below = (nodes[at] == lo) if len(nodes) else np.zeros(len(lo), bool)
    m = np.where(has_below, smallest[at] if len(nodes) else lo, lo)
    return m, hi, int(has_below.sum())


def small_star(src: str, q: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Small-star at the nodes of partition ``q``: ``(new_lo, new_hi, changed)``."""
    lo, hi = read_edges(src, q, "hi")  # u = hi is here: (w, u) with w < u
    nodes, smallest = _smallest_per(hi, lo)
    m = smallest[np.searchsorted(nodes, hi)] if len(nodes) else lo
    moved = lo != m
    return (np.concatenate([m[moved], smallest]), np.concatenate([lo[moved], nodes]),
            int(moved.sum()))


def run_components(run_stage: Callable[[ProcessingStage, list[Task]], Sequence[Task]],
                   partition_tasks: Callable[[int], list[Task]], work_dir: str,
                   num_partitions: int, *, max_steps: int = 400) -> str:
    """Run star steps until a large-star and a small-star step in a row change nothing; the
    graph's first step directory (``step_dir(work_dir, 0)``, written with
    :func:`scatter_edges`) must be complete. Returns the final step directory, whose edges
    ``(lo, hi)`` are ``(root, node)`` for every node that is not the smallest of its component.

    ``run_stage(stage, tasks)`` runs one phase (e.g.
    :meth:`~curator.dedup.DeduplicationWorkflow.run_stage`) and returns the output tasks;
    ``partition_tasks(n)`` makes one task per partition. Finished steps are reused by a re-run.
    """
    quiet, step = 0, 0
    while True:
        out = run_stage(StarStepStage(work_dir, step, num_partitions),
                        partition_tasks(num_partitions))
        changed = sum(int(t.metadata["changed"]) for t in out)
        edges = sum(int(t.metadata["edges"]) for t in out)
        step += 1
        quiet = quiet + 1 if changed == 0 else 0
        if quiet >= 2 or edges == 0:
            log.info("connected components: %d star steps over %d partitions, %d edges left",
                     step, num_partitions, edges)
            return step_dir(work_dir, step)
        if step >= max_steps:
            raise RuntimeError(f"run_components: no convergence after {max_steps} steps in "
                               f"{work_dir} ({changed} edges still changing); this is a bug")
