"""Semantic deduplication: k-means over embeddings, then cosine similarity within each cluster.

:func:`find_semantic_duplicates` works on an in-memory array (used by the image and video
packages); :class:`SemanticDeduplicationWorkflow` (in :mod:`curator.dedup.semantic_workflow`) runs
it over Parquet files with an id and an embedding column.
"""

from __future__ import annotations

import numpy as np

from curator.dedup.kmeans import kmeans, normalize
from curator.errors import ConfigError

__all__ = ["find_semantic_duplicates", "dedup_cluster", "check_params", "KEEP_STRATEGIES",
           "nearest_kept"]

KEEP_STRATEGIES = ("first", "last", "hard", "easy", "random")
"""Which row of a duplicate group is kept:

- ``first``: the lowest index; ``last``: the highest index;
- ``hard``: the row farthest from its cluster centroid (NeMo's ``which_to_keep="hard"``);
- ``easy``: the row closest to its cluster centroid;
- ``random``: a random row (deterministic with ``seed``).
"""

_TOL = 1e-6  # float32 rounding: identical rows have cosine similarity 1 - O(1e-7)
_BLOCK = 1024


def _order(rank: np.ndarray, sims_to_centroid: np.ndarray, keep: str,
           rng: np.random.Generator) -> np.ndarray:
    """Positions of one cluster's members in the order they are offered to be kept."""
    if keep == "first":
        return np.argsort(rank, kind="stable")
    if keep == "last":
        return np.argsort(-rank, kind="stable")
    if keep == "hard":
        return np.lexsort((rank, sims_to_centroid))
    if keep == "easy":
        return np.lexsort((rank, -sims_to_centroid))
    return rng.permutation(len(rank))


def _greedy(x: np.ndarray, threshold: float) -> np.ndarray:
    """Rows of ``x`` (in order) whose similarity to an earlier kept row is >= threshold."""
    n = len(x)
    dup = np.zeros(n, dtype=bool)
    kept: list[np.ndarray] = []
    for s in range(0, n, _BLOCK):
        block = x[s:s + _BLOCK]
        bdup = np.zeros(len(block), dtype=bool)
        if kept:
            prev = np.concatenate(kept)
            bdup |= (block @ prev.T).max(axis=1) >= threshold
        sims = block @ block.T
        for i in range(len(block)):
            if bdup[i]:
                continue
            bdup[i + 1:] |= sims[i, i + 1:] >= threshold
        dup[s:s + _BLOCK] = bdup
        kept.append(block[~bdup])
    return dup


def dedup_cluster(x: np.ndarray, rank: np.ndarray, centroid: np.ndarray, *, eps: float,
                  keep: str, rng: np.random.Generator) -> np.ndarray:
    """Duplicates within one cluster: ``x`` unit-norm rows, ``rank`` their input order."""
    remove = np.zeros(len(x), dtype=bool)
    if len(x) < 2:
        return remove
    ordered = _order(rank, x @ centroid, keep, rng)
    remove[ordered] = _greedy(x[ordered], 1.0 - float(eps) - _TOL)
    return remove


def nearest_kept(x: np.ndarray, remove: np.ndarray) -> np.ndarray:
    """For each removed row of ``x`` (unit-norm rows of one cluster), the index of the kept row
    it is most similar to: its duplicate group (at least as similar as the kept row that made
    it a duplicate). Computed in blocks of rows."""
    kept = np.flatnonzero(~remove)
    gone = np.flatnonzero(remove)
    out = np.empty(len(gone), np.int64)
    for s in range(0, len(gone), _BLOCK):
        out[s:s + _BLOCK] = kept[np.argmax(x[gone[s:s + _BLOCK]] @ x[kept].T, axis=1)]
    return out


def check_params(owner: str, eps: float, n_clusters: int, keep: str) -> None:
    """Raise a ConfigError naming ``owner`` and the parameter when one is out of range."""
    if keep not in KEEP_STRATEGIES:
        raise ConfigError(f"{owner}: keep={keep!r} is not one of {KEEP_STRATEGIES}")
    if not (0.0 <= float(eps) < 2.0):
        raise ConfigError(f"{owner}: eps={eps!r} must be in [0, 2)")
    if int(n_clusters) < 1:
        raise ConfigError(f"{owner}: n_clusters={n_clusters!r} must be >= 1")


def find_semantic_duplicates(embeddings: np.ndarray, *, eps: float, n_clusters: int = 100,
                             seed: int = 42, keep: str = "first") -> np.ndarray:
    """Which rows of ``embeddings`` are semantic duplicates to remove.

    The rows are clustered by spherical k-means (``n_clusters``, clipped to the number of rows,
    seeded with ``seed``); within each cluster, rows are offered in the order set by ``keep`` (see
    :data:`KEEP_STRATEGIES`) and a row is a duplicate when its cosine similarity to an already
    kept row is ``>= 1 - eps``. One row of each duplicate group is kept.

    Parameters:
        embeddings: ``(N, D)`` array (any float dtype; not modified).
        eps: similarity tolerance in ``[0, 2)``; ``0`` removes only identical directions.
        n_clusters: k-means clusters; more clusters are faster but may split a near-duplicate pair.
        seed: seed of the k-means initialisation and of ``keep="random"``.
        keep: which row of a group is kept (``first`` keeps the lowest index).

    Returns a boolean array of length ``N``: ``True`` means remove.
    """
    check_params("find_semantic_duplicates", eps, n_clusters, keep)
    emb = np.asarray(embeddings)
    if emb.ndim != 2:
        raise ValueError(f"find_semantic_duplicates: embeddings must be 2-D (N, D), got shape "
                         f"{emb.shape}")
    n = len(emb)
    remove = np.zeros(n, dtype=bool)
    if n < 2:
        return remove
    x = normalize(emb)
    labels, centroids = kmeans(x, n_clusters, seed=seed)
    rng = np.random.default_rng(seed)
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    for members in np.split(order, bounds):
        remove[members] = dedup_cluster(x[members], members, centroids[labels[members[0]]],
                                        eps=eps, keep=keep, rng=rng)
    return remove
