"""Image deduplication across interleaved documents: exact (same bytes, by content hash) and
near (CLIP image embeddings within ``eps`` in cosine distance), with core's semantic
deduplication (:func:`curator.dedup.find_semantic_duplicates`: spherical k-means, then a greedy
pass per cluster: the implementation every modality's semantic dedup uses).

Two passes, as every dedup workflow: :func:`find_image_duplicates` over the batches of a first
read names the image rows to remove (the first occurrence of a group is kept), and
:class:`InterleavedImageDuplicateRemovalStage` removes them in the pipeline that writes (split
to the rejected sink on request, like any filter; positions renumbered).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from curator_interleaved.stages import BaseInterleavedFilterStage
from curator_interleaved.tasks import InterleavedBatch
from curator_interleaved.utils.image_utils import image_bytes_to_array
from curator_interleaved.utils.materialization import materialize_table

__all__ = ["InterleavedImageDuplicateRemovalStage", "find_image_duplicates"]


def find_image_duplicates(batches: Iterable[InterleavedBatch], *, model_dir: str | None = None,
                          eps: float = 0.02, n_clusters: int = 100, seed: int = 42
                          ) -> list[dict[str, Any]]:
    """The image rows to remove: ``{"sample_id", "position", "kind": "exact" | "near",
    "duplicate_of": (sample_id, position)}``. Exact duplicates by content hash always; near
    duplicates when ``model_dir`` (a local CLIP directory) is given. Rows whose bytes cannot be
    fetched are left alone (the stage that reads them rejects them)."""
    from curator.dedup import find_semantic_duplicates

    keys: list[tuple[str, int]] = []
    blobs: list[bytes] = []
    for batch in batches:
        table = materialize_table(batch.to_pyarrow())
        for r in table.select(["sample_id", "position", "modality", "binary_content"]).to_pylist():
            if r["modality"] == "image" and r["binary_content"] is not None:
                keys.append((r["sample_id"], int(r["position"])))
                blobs.append(r["binary_content"])
    out: list[dict[str, Any]] = []
    first: dict[str, int] = {}
    unique: list[int] = []
    for i, data in enumerate(blobs):
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        if digest in first:
            out.append({"sample_id": keys[i][0], "position": keys[i][1], "kind": "exact",
                        "duplicate_of": keys[first[digest]]})
        else:
            first[digest] = i
            unique.append(i)
    if model_dir and len(unique) > 1:
        from curator_image.models.clip import ClipImageEmbedder

        arrays = [image_bytes_to_array(blobs[i]) for i in unique]
        ok = [i for i, a in zip(unique, arrays, strict=True) if a is not None]
        emb = ClipImageEmbedder(model_dir).embed([a for a in arrays if a is not None])
        remove = find_semantic_duplicates(emb, eps=eps, n_clusters=n_clusters, seed=seed)
        kept = [k for k, r in zip(ok, remove, strict=True) if not r]
        kept_emb = emb[~remove]
        for k, r, e in zip(ok, remove, emb, strict=True):
            if r:
                near = kept[int(np.argmax(kept_emb @ e))]
                out.append({"sample_id": keys[k][0], "position": keys[k][1], "kind": "near",
                            "duplicate_of": keys[near]})
    return out


@dataclass
class InterleavedImageDuplicateRemovalStage(BaseInterleavedFilterStage):
    """Removes the image rows :func:`find_image_duplicates` named (``duplicates``: its list,
    or ``(sample_id, position)`` pairs). Positions are renumbered; ``split=True`` sends the
    removed rows to the rejected sink (kind ``filtered``, score ``exact`` / ``near``).

    Positions refer to the documents as read: put this stage before stages that renumber."""

    binary_in_frame: ClassVar[bool] = False

    duplicates: list[Any] = field(default_factory=list)
    name: str = "interleaved_image_duplicate_removal"

    def __post_init__(self) -> None:
        self._remove: dict[tuple[str, int], str] = {}
        for d in self.duplicates:
            if isinstance(d, dict):
                self._remove[(str(d["sample_id"]), int(d["position"]))] = d.get("kind", "exact")
            else:
                self._remove[(str(d[0]), int(d[1]))] = "exact"

    def content_keep_mask(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.Series:
        images = (df["modality"] == "image").fillna(False).to_numpy(dtype=bool)
        keep = np.ones(len(df), dtype=bool)
        sids, positions = df["sample_id"].tolist(), df["position"].tolist()
        for i in np.flatnonzero(images):
            kind = self._remove.get((str(sids[i]), int(positions[i])))
            if kind is not None:
                keep[i] = False
                self.record_score(df.index[i], kind)
        return pd.Series(keep, index=df.index, dtype=bool)
