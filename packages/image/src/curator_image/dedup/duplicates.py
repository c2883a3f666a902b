"""Find exact and semantic duplicates among the images listed in Parquet metadata files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["DuplicateReport", "find_exact_duplicates", "find_image_duplicates",
           "write_duplicates", "read_duplicate_ids"]


@dataclass
class DuplicateReport:
    """Ids to remove and why (``"exact"`` or ``"semantic"``); ``group_sizes``: the duplicate
    groups found, by size (members, the kept one included) -> number of groups."""

    ids: list[str]
    reasons: list[str]
    n_images: int
    group_sizes: dict[int, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)


def find_exact_duplicates(ids: Sequence[str], hashes: Sequence[str]) -> np.ndarray:
    """Bool mask (True = remove): every image whose content hash an earlier id (in sorted id
    order) already has. Empty hashes never match."""
    remove = np.zeros(len(ids), dtype=bool)
    seen: set[str] = set()
    for i in sorted(range(len(ids)), key=lambda j: ids[j]):
        h = hashes[i]
        if not h:
            continue
        if h in seen:
            remove[i] = True
        seen.add(h)
    return remove


def find_image_duplicates(parquet_paths: str | Sequence[str], *, eps: float = 0.01,
                          n_clusters: int = 100, seed: int = 42, keep: str = "first",
                          exact: bool = True, semantic: bool = True,
                          id_field: str = "image_id", embedding_field: str = "embedding",
                          hash_field: str = "content_hash") -> DuplicateReport:
    """Exact duplicates by content hash, then semantic duplicates among the rest with
    :func:`curator.dedup.semantic.find_semantic_duplicates` (k-means, cosine within clusters,
    one kept per group closer than ``eps``). Rows are sorted by id first, so the result does
    not depend on file order."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from curator.dedup.kmeans import normalize
    from curator.dedup.semantic import find_semantic_duplicates, nearest_kept
    from curator.dedup.workflow import group_size_counts
    from curator.io import expand_paths

    paths = expand_paths(parquet_paths, extensions=[".parquet"])
    cols = [id_field] + ([hash_field] if exact else []) + ([embedding_field] if semantic else [])
    table = pa.concat_tables([pq.read_table(p, columns=cols) for p in paths])
    table = table.sort_by(id_field)
    ids = [str(x) for x in table.column(id_field).to_pylist()]
    remove = np.zeros(len(ids), dtype=bool)
    reasons = [""] * len(ids)
    sizes: dict[int, int] = {}
    if exact:
        hashes = table.column(hash_field).to_pylist()
        mask = find_exact_duplicates(ids, hashes)
        for i in np.flatnonzero(mask):
            remove[i], reasons[i] = True, "exact"
        _add(sizes, group_size_counts([hashes[i] for i in np.flatnonzero(mask)]))
    if semantic:
        embs = table.column(embedding_field).to_pylist()
        rest = [i for i in range(len(ids)) if not remove[i] and embs[i] is not None]
        if len(rest) > 1:
            matrix = np.asarray([embs[i] for i in rest], dtype=np.float32)
            mask = find_semantic_duplicates(matrix, eps=eps, n_clusters=n_clusters, seed=seed,
                                            keep=keep)
            for j in np.flatnonzero(mask):
                remove[rest[j]], reasons[rest[j]] = True, "semantic"
            _add(sizes, group_size_counts(nearest_kept(normalize(matrix), mask)))
    picked = np.flatnonzero(remove)
    return DuplicateReport(ids=[ids[i] for i in picked], reasons=[reasons[i] for i in picked],
                           n_images=len(ids), group_sizes=dict(sorted(sizes.items())))


def _add(into: dict[int, int], sizes: dict[int, int]) -> None:
    for size, n in sizes.items():
        into[size] = into.get(size, 0) + n


def write_duplicates(report: DuplicateReport, path: str) -> str:
    """Write ``report`` as Parquet (``image_id``, ``reason``) atomically; returns ``path``."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from curator.io import atomic_write

    table = pa.table({"image_id": pa.array(report.ids, pa.string()),
                      "reason": pa.array(report.reasons, pa.string())})
    with atomic_write(path, "wb") as fh:
        pq.write_table(table, fh)
    return path


def read_duplicate_ids(path: str) -> dict[str, str]:
    """``{image_id: reason}`` from a file written by :func:`write_duplicates`."""
    import pyarrow.parquet as pq
    from curator.io import get_fs

    fs, p = get_fs(path)
    with fs.open(p, "rb") as fh:
        table = pq.read_table(fh)
    return dict(zip(table.column("image_id").to_pylist(), table.column("reason").to_pylist(),
                    strict=True))
