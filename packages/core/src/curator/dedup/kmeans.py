"""Spherical k-means in NumPy: deterministic for a given seed, no extra dependency."""

from __future__ import annotations

import numpy as np

__all__ = ["normalize", "kmeans"]


def normalize(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit L2 norm (zero rows stay zero), as float32."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return x / norms


def _assign(x: np.ndarray, centroids: np.ndarray, chunk: int = 65536) -> np.ndarray:
    labels = np.empty(len(x), dtype=np.int64)
    for s in range(0, len(x), chunk):
        labels[s:s + chunk] = np.argmax(x[s:s + chunk] @ centroids.T, axis=1)
    return labels


def kmeans(x: np.ndarray, n_clusters: int, *, seed: int = 42, max_iter: int = 30,
           tol: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    """Cluster unit-norm rows of ``x`` by cosine similarity (spherical k-means).

    Parameters:
        x: ``(N, D)`` array of unit-norm rows (see :func:`normalize`).
        n_clusters: number of clusters, clipped to ``[1, N]``.
        seed: seed of the k-means++ initialisation (same seed, same clusters).
        max_iter: maximum Lloyd iterations; tol: stop when centroids move less than this.

    Returns ``(labels, centroids)``: ``labels[i]`` is row ``i``'s cluster.
    """
    n = len(x)
    if n == 0:
        return np.empty(0, dtype=np.int64), np.empty((0, x.shape[1] if x.ndim == 2 else 0))
    k = max(1, min(int(n_clusters), n))
    rng = np.random.default_rng(seed)
    # k-means++ initialisation on (a sample of) the rows
    sample = x if n <= 50_000 else x[np.sort(rng.choice(n, 50_000, replace=False))]
    m = len(sample)
    centroids = np.empty((k, x.shape[1]), dtype=np.float32)
    first = int(rng.integers(m))
    centroids[0] = sample[first]
    dist = np.maximum(1.0 - sample @ centroids[0], 0.0).astype(np.float64)
    for c in range(1, k):
        total = dist.sum()
        idx = int(rng.choice(m, p=dist / total)) if total > 0 else int(rng.integers(m))
        centroids[c] = sample[idx]
        dist = np.minimum(dist, np.maximum(1.0 - sample @ centroids[c], 0.0))
    labels = _assign(x, centroids)
    for _ in range(max_iter):
        new = np.zeros_like(centroids)
        order = np.argsort(labels, kind="stable")
        counts = np.bincount(labels, minlength=k)
        present = np.flatnonzero(counts)
        starts = np.concatenate(([0], np.cumsum(counts[present])[:-1]))
        new[present] = np.add.reduceat(x[order], starts, axis=0)
        empty = counts == 0
        new[empty] = centroids[empty]
        new = normalize(new)
        shift = float(np.max(np.abs(new - centroids))) if k else 0.0
        centroids = new
        labels = _assign(x, centroids)
        if shift < tol:
            break
    return labels, centroids
