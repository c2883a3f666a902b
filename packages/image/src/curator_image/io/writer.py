"""ImageWriterStage: ImageBatch -> WebDataset tar shard + Parquet metadata, atomically."""

from __future__ import annotations

import hashlib
import io
import json
import uuid
from dataclasses import dataclass
from typing import Any

from curator import FileGroupTask, ProcessingStage
from curator.errors import ConfigError
from curator.output_dir import DEFAULT_MODE, ManagedOutput, SaveMode, check_mode

from curator_image.io.paths import safe_member_name
from curator_image.tasks import ImageBatch, ImageObject

__all__ = ["ImageWriterStage", "content_hash"]


def content_hash(img: ImageObject) -> str:
    """A hex digest of the image's encoded bytes (or of its pixels when no bytes are kept)."""
    if img.raw is not None:
        return hashlib.blake2b(img.raw, digest_size=16).hexdigest()
    data = img.image_data
    if data is None:
        return ""
    return hashlib.blake2b(data.tobytes() + str(data.shape).encode(), digest_size=16).hexdigest()


@dataclass
class ImageWriterStage(ManagedOutput, ProcessingStage[ImageBatch, FileGroupTask]):
    """Writes each ImageBatch as ``{task_id}.tar`` (WebDataset: image, ``.txt`` caption,
    ``.json`` metadata and scores, optional ``.npy`` embedding) plus ``{task_id}.parquet``
    (one row per image: id, key, source, caption, scores, content hash, embedding).

    Both files are written atomically with names from the task id, so a re-run overwrites.
    Member names are made relative and free of ``..``: nothing lands outside ``output_dir``.

    Parameters:
        output_dir: local directory or fsspec URL.
        write_embeddings: store the embedding in the tar (``.npy``) and the Parquet file.
        remove_image_data_after_write: drop pixels and bytes from the returned records.
        mode: NeMo Curator's save modes: ``"ignore"`` (default: write into the directory,
            replacing same-named files), ``"overwrite"`` (first delete the files earlier
            Curator runs wrote there; other files stay), ``"append"`` (keep earlier files) or
            ``"error"`` (refuse a directory holding other files); see
            :mod:`curator.output_dir`.
        images_per_tar: at most this many images per tar; a bigger batch is written as
            ``{task_id}-{k:06d}.tar`` / ``.parquet`` pairs (NeMo Curator's parameter).
        deterministic_name: names from the task id (default); ``False`` adds a random suffix
            (NeMo Curator's parameter; a re-run then writes new files instead of overwriting).
        remove_image_data: NeMo Curator's name for ``remove_image_data_after_write`` (when given,
            it wins).
        verbose: accepted for NeMo Curator compatibility (the run summary counts what was
            written and rejected).
    """

    output_dir: str = ""
    write_embeddings: bool = True
    remove_image_data_after_write: bool = True
    mode: SaveMode = DEFAULT_MODE
    images_per_tar: int = 1000
    deterministic_name: bool = True
    remove_image_data: bool | None = None
    verbose: bool = False
    name: str = "ImageWriterStage"
    modality = "image"
    kind = "writer"
    output_dir_field = "output_dir"

    def __post_init__(self) -> None:
        if not self.output_dir:
            raise ConfigError(f"{self.name}: output_dir is required")
        check_mode(self.mode, self.name)
        if int(self.images_per_tar) < 1:
            raise ConfigError(f"{self.name}: images_per_tar={self.images_per_tar!r} must be >= 1")
        if self.remove_image_data is not None:
            self.remove_image_data_after_write = bool(self.remove_image_data)

    def inputs(self):
        return ["data"], []

    def outputs(self):
        return ["data"], []

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        import pyarrow.parquet  # noqa: F401

    def process(self, task: ImageBatch) -> FileGroupTask:
        stem = safe_member_name(task.task_id)
        if not self.deterministic_name:
            stem = f"{stem}-{uuid.uuid4().hex[:12]}"
        n = int(self.images_per_tar)
        chunks = [task.data[i:i + n] for i in range(0, len(task.data), n)] or [[]]
        files: list[str] = []
        for k, chunk in enumerate(chunks):
            files += self._write_shard(task, chunk, stem if len(chunks) == 1 else f"{stem}-{k:06d}")
        if self.remove_image_data_after_write:
            for img in task.data:
                img.image_data = None
                img.raw = None
        return task.derive(files, cls=FileGroupTask)  # type: ignore[return-value]

    def _write_shard(self, task: ImageBatch, images: list[ImageObject], stem: str) -> list[str]:
        """Write ``images`` as ``{stem}.tar`` + ``{stem}.parquet``; returns both paths."""
        import pyarrow as pa
        import pyarrow.parquet as pq
        from curator.io import atomic_write

        from curator_image.io.tar_write import TarShardWriter

        tar_path = self.output_file(f"{stem}.tar")
        pq_path = self.output_file(f"{stem}.parquet")
        rows: list[dict[str, Any]] = []
        with atomic_write(tar_path, "wb") as fh:
            writer = TarShardWriter(fh)
            for img in images:
                key = safe_member_name(img.image_id).replace(".", "_")
                sample = self._sample(img, key)
                if sample is None:
                    self.reject(task, "nothing_to_write", record={"image_id": img.image_id})
                    continue
                writer.write(sample)
                rows.append(self._row(img, key))
            writer.close()
        table = pa.Table.from_pylist(rows, schema=self._schema(pa))
        with atomic_write(pq_path, "wb") as fh:
            pq.write_table(table, fh)
        return [tar_path, pq_path]

    def _sample(self, img: ImageObject, key: str) -> dict[str, Any] | None:
        if img.raw is not None:
            data, ext = img.raw, img.image_ext
        elif img.image_data is not None:
            from curator_image.testing import encode_image

            data, ext = encode_image(img.image_data), "jpg"
        else:
            return None
        meta = dict(img.metadata)
        meta.update(image_id=img.image_id, aesthetic_score=img.aesthetic_score,
                    nsfw_score=img.nsfw_score)
        sample: dict[str, Any] = {"__key__": key, ext: data,
                                  "json": json.dumps(meta, default=str).encode()}
        if img.caption is not None:
            sample["txt"] = img.caption.encode()
        if self.write_embeddings and img.embedding is not None:
            buf = io.BytesIO()
            import numpy as np

            np.save(buf, np.asarray(img.embedding, dtype=np.float32))
            sample["npy"] = buf.getvalue()
        return sample

    def _row(self, img: ImageObject, key: str) -> dict[str, Any]:
        emb = img.embedding
        return {"image_id": img.image_id, "key": key, "source": img.image_path,
                "caption": img.caption, "aesthetic_score": img.aesthetic_score,
                "nsfw_score": img.nsfw_score, "content_hash": content_hash(img),
                "metadata": json.dumps(img.metadata, default=str),
                "embedding": (None if emb is None or not self.write_embeddings
                              else [float(x) for x in emb])}

    @staticmethod
    def _schema(pa: Any) -> Any:
        return pa.schema([("image_id", pa.string()), ("key", pa.string()),
                          ("source", pa.string()), ("caption", pa.string()),
                          ("aesthetic_score", pa.float64()), ("nsfw_score", pa.float64()),
                          ("content_hash", pa.string()), ("metadata", pa.string()),
                          ("embedding", pa.list_(pa.float32()))])
