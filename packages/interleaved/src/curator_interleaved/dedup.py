"""Image deduplication across interleaved documents: exact (same bytes, by content hash) and
near (CLIP image embeddings within ``eps`` in cosine distance) through core's
:class:`curator.dedup.SemanticDeduplicationWorkflow`, the workflow every modality's semantic
dedup uses.

Two passes, as every dedup workflow:

1. :class:`InterleavedImageEmbeddingStage` (the last stage of a first pipeline, after the reader)
   writes one Parquet file per task to ``{path}/{task_id}.parquet``: a row per image with its
   ``image_id`` (``[sample_id, position]`` as JSON), ``sample_id``, ``position``,
   ``content_hash`` and, with ``model_dir`` (a local CLIP directory, curator-image's image
   tower), its ``embeddings``.
2. :func:`find_image_duplicates` over those files: exact duplicates by hash (the first in file
   and row order is kept), then the remaining images' embeddings through
   ``SemanticDeduplicationWorkflow`` (k-means, then cosine similarity ``>= 1 - eps`` within each
   cluster, the first kept); it returns the image rows to remove and, with ``output_path``,
   writes them to ``{output_path}/image_duplicates.parquet``.
3. :class:`InterleavedImageDuplicateRemovalStage` in the pipeline that writes removes those image
   rows (split to the rejected sink on request, like any filter). As every interleaved filter
   (NeMo Curator's rule), the surviving segments of a document are renumbered ``0..n-1`` and a
   document left without content is dropped.

Images whose bytes cannot be fetched or decoded are left out of the dedup (neither kept nor
removed by it); the stage that needs their bytes rejects them with the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from curator_interleaved.io.writers.base import BaseInterleavedWriter
from curator_interleaved.stages import BaseInterleavedFilterStage
from curator_interleaved.tasks import InterleavedBatch
from curator_interleaved.utils.image_utils import image_bytes_to_array

__all__ = ["DUPLICATES_FILE", "InterleavedImageDuplicateRemovalStage",
           "InterleavedImageEmbeddingStage", "find_image_duplicates", "image_id",
           "read_image_duplicates", "write_image_duplicates"]

#: the file :func:`find_image_duplicates` writes under its ``output_path``
DUPLICATES_FILE = "image_duplicates.parquet"


def image_id(sample_id: str, position: int) -> str:
    """The id of an image row in the embedding files and the duplicate lists:
    ``[sample_id, position]`` as JSON (unambiguous whatever the sample id holds)."""
    return json.dumps([str(sample_id), int(position)], ensure_ascii=False)


def _content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass
class InterleavedImageEmbeddingStage(BaseInterleavedWriter):
    """The first pass of image dedup (see the module doc): writes ``{path}/{task_id}.parquet``
    with a row per image of the batch: ``image_id``, ``sample_id``, ``position``,
    ``content_hash`` and, when ``model_dir`` is given, ``embeddings`` (L2-normalised CLIP image
    embeddings, a list of float32). Image bytes are fetched first; an image whose bytes cannot
    be fetched or decoded has no row (``on_materialize_error`` defaults to ``"warn"``: the pass
    that needs the bytes rejects it). Deterministic names, atomic files, run manifest, save
    modes and resume as every interleaved writer.

    Parameters (besides those of
    :class:`~curator_interleaved.io.writers.base.BaseInterleavedWriter`):
        model_dir: a local CLIP directory (Hugging Face layout or an OpenCLIP checkpoint, see
            :class:`curator_image.models.clip.ClipImageEmbedder`); ``None``: hashes only
            (exact dedup).
        model_inference_batch_size: images per forward pass.
        device: ``"cpu"``, ``"cuda"`` or ``"auto"``.
    """

    model_dir: str | None = None
    model_inference_batch_size: int = 64
    device: str = "cpu"
    file_extension: str = "parquet"
    on_materialize_error: str = "warn"
    name: str = "interleaved_image_embedding"
    kind: ClassVar[str] = "embedder"

    def __post_init__(self) -> None:
        super().__post_init__()
        self._embedder: Any = None

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        if self.model_dir and self._embedder is None:
            from curator_image.models.clip import ClipImageEmbedder

            self._embedder = ClipImageEmbedder(self.model_dir, device=self.device)
            self._embedder.load()

    def embedding_table(self, table: pa.Table) -> pa.Table:
        """The rows this stage writes for ``table`` (interleaved rows with bytes)."""
        images = table.filter(pc.and_(pc.equal(table["modality"], "image"),
                                      pc.is_valid(table["binary_content"])).fill_null(False))
        ids, sids, positions, hashes, arrays = [], [], [], [], []
        for r in images.select(["sample_id", "position", "binary_content"]).to_pylist():
            data = r["binary_content"]
            array = image_bytes_to_array(data) if self.model_dir else None
            if self.model_dir and array is None:
                continue  # undecodable: left to the stage that needs the pixels
            ids.append(image_id(r["sample_id"], r["position"]))
            sids.append(r["sample_id"])
            positions.append(int(r["position"]))
            hashes.append(_content_hash(data))
            arrays.append(array)
        columns: dict[str, pa.Array] = {
            "image_id": pa.array(ids, pa.string()), "sample_id": pa.array(sids, pa.string()),
            "position": pa.array(positions, pa.int32()),
            "content_hash": pa.array(hashes, pa.string())}
        if self.model_dir:
            if self._embedder is None:
                self.setup()
            n = self.model_inference_batch_size
            parts = [self._embedder.embed(arrays[i:i + n]) for i in range(0, len(arrays), n)]
            emb = (np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)).astype(
                np.float32)
            columns["embeddings"] = pa.array(list(emb), pa.list_(pa.float32()))
        return pa.table(columns)

    def write_table(self, table: pa.Table, file_path: str) -> None:
        import pyarrow.parquet as pq
        from curator.io import atomic_write

        out = self.embedding_table(table)
        self._log_metric("images_embedded", float(out.num_rows))
        with atomic_write(file_path, "wb") as fh:
            pq.write_table(out, fh)


def _embedding_files(embeddings_path: str | Sequence[str]) -> list[str]:
    from curator.io import expand_paths

    return sorted(expand_paths(embeddings_path, [".parquet"]))


def find_image_duplicates(batches: Iterable[InterleavedBatch] | None = None, *,
                          embeddings_path: str | Sequence[str] | None = None,
                          model_dir: str | None = None, eps: float = 0.02,
                          n_clusters: int = 100, seed: int = 42,
                          output_path: str | None = None, executor: Any = None
                          ) -> list[dict[str, Any]]:
    """The image rows to remove: ``{"sample_id", "position", "kind": "exact" | "near",
    "duplicate_of": (sample_id, position)}``, exact duplicates by content hash, then near
    duplicates by core's ``SemanticDeduplicationWorkflow`` over the CLIP embeddings (when the
    embedding files have them). In each group the first image (in file, then row order) is kept.

    Give either ``embeddings_path`` (the files :class:`InterleavedImageEmbeddingStage` wrote)
    or ``batches`` (embedded here with ``model_dir``, into a temporary directory). With
    ``output_path`` the workflow's files are kept there and the list is also written to
    ``{output_path}/image_duplicates.parquet`` (what
    :class:`InterleavedImageDuplicateRemovalStage` reads with ``duplicates_path``); otherwise a
    temporary directory is used and removed."""
    if (batches is None) == (embeddings_path is None):
        raise ValueError("find_image_duplicates: give either batches or embeddings_path (the "
                         "files InterleavedImageEmbeddingStage wrote)")
    work = output_path or tempfile.mkdtemp(prefix="curator-il-dedup-")
    try:
        if batches is not None:
            stage = InterleavedImageEmbeddingStage(path=os.path.join(work, "embeddings"),
                                                   model_dir=model_dir, mode="overwrite")
            for k, batch in enumerate(batches):
                named = InterleavedBatch(task_id=f"batch_{k:05d}", dataset_name="dedup",
                                         data=batch.data, metadata=dict(batch.metadata))
                stage.process(named)
            embeddings_path = os.path.join(work, "embeddings")
        out = _find(_embedding_files(embeddings_path), work, eps=eps, n_clusters=n_clusters,
                    seed=seed, executor=executor)
        if output_path:
            write_image_duplicates(out, os.path.join(output_path, DUPLICATES_FILE))
        return out
    finally:
        if not output_path:
            shutil.rmtree(work, ignore_errors=True)


def _find(files: list[str], work: str, *, eps: float, n_clusters: int, seed: int,
          executor: Any) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq
    from curator.dedup import SemanticDeduplicationWorkflow
    from curator.dedup.workflow import read_id_table
    from curator.io import atomic_write

    out: list[dict[str, Any]] = []
    first: dict[str, str] = {}
    unique_dir = os.path.join(work, "unique_embeddings")
    semantic_inputs: list[str] = []
    for k, path in enumerate(files):
        table = pq.read_table(path)
        keep = np.ones(table.num_rows, dtype=bool)
        for i, (iid, digest) in enumerate(zip(table["image_id"].to_pylist(),
                                              table["content_hash"].to_pylist(), strict=True)):
            if digest in first:
                keep[i] = False
                out.append(_duplicate(iid, "exact", first[digest]))
            else:
                first[digest] = iid
        if "embeddings" in table.column_names and keep.any():
            unique = table.filter(pa.array(keep)).select(["image_id", "embeddings"])
            dest = os.path.join(unique_dir, f"{k:05d}.parquet")
            os.makedirs(unique_dir, exist_ok=True)
            with atomic_write(dest, "wb") as fh:
                pq.write_table(unique, fh)
            semantic_inputs.append(dest)
    if sum(pq.ParquetFile(f).metadata.num_rows for f in semantic_inputs) > 1:
        workflow = SemanticDeduplicationWorkflow(
            semantic_inputs, os.path.join(work, "semantic"), id_field="image_id",
            embedding_field="embeddings", assign_id=False, n_clusters=n_clusters, eps=eps,
            keep="first", seed=seed, executor=executor, input_filetype="parquet")
        result = workflow.run()
        found = read_id_table(result.duplicates_path)
        if found.num_rows:
            near = sorted(zip(found["id"].to_pylist(), found["duplicate_of"].to_pylist(),
                              strict=True))
            out.extend(_duplicate(iid, "near", of) for iid, of in near)
    return out


def _duplicate(iid: str, kind: str, of: str) -> dict[str, Any]:
    sid, pos = json.loads(iid)
    return {"sample_id": sid, "position": int(pos), "kind": kind,
            "duplicate_of": tuple(json.loads(of))}


def write_image_duplicates(duplicates: list[dict[str, Any]], path: str) -> None:
    """Write :func:`find_image_duplicates`' list as Parquet (``sample_id``, ``position``,
    ``kind``, ``duplicate_of`` as an image id), atomically."""
    import pyarrow.parquet as pq
    from curator.io import atomic_write

    table = pa.table({
        "sample_id": pa.array([d["sample_id"] for d in duplicates], pa.string()),
        "position": pa.array([int(d["position"]) for d in duplicates], pa.int32()),
        "kind": pa.array([d.get("kind", "exact") for d in duplicates], pa.string()),
        "duplicate_of": pa.array([image_id(*d["duplicate_of"]) if d.get("duplicate_of")
                                  else None for d in duplicates], pa.string())})
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with atomic_write(path, "wb") as fh:
        pq.write_table(table, fh)


def read_image_duplicates(path: str) -> list[dict[str, Any]]:
    """The list :func:`write_image_duplicates` wrote (``path``: the file, or the
    ``output_path`` directory of :func:`find_image_duplicates`)."""
    import fsspec
    import pyarrow.parquet as pq

    fs, inner = fsspec.core.url_to_fs(path)
    if fs.isdir(inner):
        inner = inner.rstrip("/") + "/" + DUPLICATES_FILE
    with fs.open(inner, "rb") as fh:
        rows = pq.read_table(fh).to_pylist()
    for r in rows:
        r["duplicate_of"] = tuple(json.loads(r["duplicate_of"])) if r["duplicate_of"] else None
    return rows


@dataclass
class InterleavedImageDuplicateRemovalStage(BaseInterleavedFilterStage):
    """Removes the image rows :func:`find_image_duplicates` named: ``duplicates`` (its list, or
    ``(sample_id, position)`` pairs) and/or ``duplicates_path`` (the file or ``output_path`` it
    wrote, read in :meth:`setup`). Positions are renumbered and a document left without content
    is dropped (the rule of every interleaved filter); ``split=True`` sends the removed rows to
    the rejected sink (kind ``filtered``, score ``exact`` / ``near``).

    Positions refer to the documents as read: put this stage before stages that renumber."""

    binary_in_frame: ClassVar[bool] = False

    duplicates: list[Any] = field(default_factory=list)
    duplicates_path: str | None = None
    name: str = "interleaved_image_duplicate_removal"

    def __post_init__(self) -> None:
        self._remove: dict[tuple[str, int], str] = {}
        self._add(self.duplicates)

    def _add(self, duplicates: Iterable[Any]) -> None:
        for d in duplicates:
            if isinstance(d, dict):
                self._remove[(str(d["sample_id"]), int(d["position"]))] = d.get("kind", "exact")
            else:
                self._remove[(str(d[0]), int(d[1]))] = "exact"

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        if self.duplicates_path and not getattr(self, "_loaded", False):
            self._add(read_image_duplicates(self.duplicates_path))
            self._loaded = True

    def content_keep_mask(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.Series:
        if self.duplicates_path and not getattr(self, "_loaded", False):
            self.setup()
        images = (df["modality"] == "image").fillna(False).to_numpy(dtype=bool)
        keep = np.ones(len(df), dtype=bool)
        sids, positions = df["sample_id"].tolist(), df["position"].tolist()
        for i in np.flatnonzero(images):
            kind = self._remove.get((str(sids[i]), int(positions[i])))
            if kind is not None:
                keep[i] = False
                self.record_score(df.index[i], kind)
        return pd.Series(keep, index=df.index, dtype=bool)
