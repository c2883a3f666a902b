"""ImageDuplicateRemovalStage: drop the images listed in a duplicates file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curator import ProcessingStage
from curator.errors import ConfigError

from curator_image.tasks import ImageBatch

__all__ = ["ImageDuplicateRemovalStage"]


@dataclass
class ImageDuplicateRemovalStage(ProcessingStage[ImageBatch, ImageBatch]):
    """Removes images whose ``image_id`` is listed in ``duplicates_path`` (a Parquet file with
    ``image_id`` and ``reason``, written by the image dedup workflow). With ``split=True`` each
    removed image goes to the rejected sink (kind ``"filtered"``) with its reason."""

    duplicates_path: str = ""
    split: bool = True
    name: str = "ImageDuplicateRemovalStage"
    modality = "image"
    kind = "deduplicator"

    def __post_init__(self) -> None:
        if not self.duplicates_path:
            raise ConfigError(f"{self.name}: duplicates_path is required")

    def inputs(self):
        return ["data"], ["image_id"]

    def outputs(self):
        return ["data"], ["image_id"]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        from curator_image.dedup.duplicates import read_duplicate_ids

        self._dups = read_duplicate_ids(self.duplicates_path)

    def process(self, task: ImageBatch) -> ImageBatch:
        kept = []
        for img in task.data:
            reason = self._dups.get(img.image_id)
            if reason is None:
                kept.append(img)
            elif self.split:
                self.reject(task, f"{reason}_duplicate", kind="filtered",
                            record={"image_id": img.image_id, "path": img.image_path})
        return task.derive(kept)  # type: ignore[return-value]
