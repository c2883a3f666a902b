"""ImageBatch: the task of the image pipeline, a list of image records."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from curator import Task

__all__ = ["ImageObject", "ImageBatch", "IMAGE_FIELDS"]

IMAGE_FIELDS = ["image_id", "image_path", "image_data", "caption", "metadata", "embedding",
                "aesthetic_score", "nsfw_score"]
"""The record fields stages declare in ``inputs()`` / ``outputs()``."""


@dataclass
class ImageObject:
    """One image record.

    Attributes:
        image_id: deterministic id (the WebDataset key within its shard).
        image_path: where it came from (``shard.tar`` path; the member is ``image_id``).
        image_data: decoded HxWx3 uint8 RGB array (``None`` once dropped to save memory).
        caption: the sample's ``.txt`` text, if any.
        metadata: the sample's ``.json`` fields and anything stages add.
        embedding: L2-normalised CLIP embedding (float32), once embedded.
        aesthetic_score, nsfw_score: filter scores, once computed.
        raw: the encoded image bytes (kept for writing and content hashing).
        image_ext: the encoded format's extension (``jpg``, ``png`` …).
    """

    image_id: str
    image_path: str = ""
    image_data: np.ndarray | None = None
    caption: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    embedding: np.ndarray | None = None
    aesthetic_score: float | None = None
    nsfw_score: float | None = None
    raw: bytes | None = None
    image_ext: str = "jpg"

    @property
    def image_embedding(self) -> np.ndarray | None:
        """:attr:`embedding` under the name NeMo Curator's migration guide gives it
        (``SemanticDeduplicationStage(embedding_field="image_embedding")``)."""
        return self.embedding


@dataclass
class ImageBatch(Task[list[ImageObject]]):
    """A batch of :class:`ImageObject` records (one slice of one tar shard)."""

    data: list[ImageObject] = field(default_factory=list)

    def validate(self) -> bool:
        return all(isinstance(x, ImageObject) for x in self.data)

    def with_images(self, images: list[ImageObject]) -> ImageBatch:
        """A 1:1 derived batch (same id and metadata) holding ``images``."""
        return self.derive(images)  # type: ignore[return-value]

    def dump_data(self, files: Any) -> list[dict[str, Any]]:
        """Each image's encoded bytes as its own file (``{stem}.{i}-{image_id}.{ext}``), decoded
        pixels and embeddings as ``.npy``, the other fields as JSON (see
        :mod:`curator.task_files`)."""
        from curator.task_files import dump_value

        out = []
        for i, image in enumerate(self.data):
            state: dict[str, Any] = {}
            for f in fields(ImageObject):
                value = getattr(image, f.name)
                if f.name == "raw" and value is not None:
                    state["raw"] = files.put(f"{i}-{image.image_id}.{image.image_ext or 'bin'}",
                                             bytes(value))
                else:
                    state[f.name] = dump_value(value, files)
            out.append(state)
        return out

    @classmethod
    def load_data(cls, state: Any, files: Any) -> list[ImageObject]:
        from curator.task_files import load_value

        known = {f.name for f in fields(ImageObject)}
        images = []
        for rec in state or []:
            kwargs = {k: load_value(v, files) for k, v in rec.items() if k in known and k != "raw"}
            if rec.get("raw") is not None:
                kwargs["raw"] = files.read(rec["raw"])
            images.append(ImageObject(**kwargs))
        return images
