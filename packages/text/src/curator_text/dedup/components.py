"""Connected components over candidate pairs, and Jaccard verification of pairs (NumPy)."""

from __future__ import annotations

import numpy as np

__all__ = ["connected_components", "jaccard"]


def connected_components(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Components of the graph with edges ``a[i] — b[i]`` (integer node keys).

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
