"""ImageDuplicateRemovalStage / ImageDuplicatesRemovalStage (NeMo's signature): drop the images
listed in a duplicates file or directory."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from curator import ProcessingStage
from curator.errors import ConfigError

from curator_image.tasks import ImageBatch

__all__ = ["ImageDuplicateRemovalStage", "ImageDuplicatesRemovalStage"]

_log = logging.getLogger(__name__)


def _remove_listed(stage: ProcessingStage, task: ImageBatch, reasons: dict[str, str],
                   split: bool) -> ImageBatch:
    """``task`` without the images whose id is in ``reasons``; with ``split`` each removed image
    goes to the rejected sink (kind ``"filtered"``) with ``{reason}_duplicate``."""
    kept = []
    for img in task.data:
        reason = reasons.get(img.image_id)
        if reason is None:
            kept.append(img)
        elif split:
            stage.reject(task, f"{reason}_duplicate", kind="filtered",
                         record={"image_id": img.image_id, "path": img.image_path})
    return task.derive(kept)  # type: ignore[return-value]


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
        return _remove_listed(self, task, self._dups, self.split)


@dataclass
class ImageDuplicatesRemovalStage(ProcessingStage[ImageBatch, ImageBatch]):
    """NeMo Curator's removal stage: removes images whose ``image_id`` appears in the
    ``duplicate_id_field`` column of the Parquet files in ``removal_parquets_dir`` (a directory,
    a single file or an fsspec URL). A ``reason`` column, where present (Curator's dedup
    output), names why; otherwise the reason is ``listed_duplicate``. With ``split=True`` (the
    default, unlike NeMo, which drops silently) each removed image goes to the rejected sink.

    Args:
        removal_parquets_dir: the Parquet file(s) listing the ids to remove.
        duplicate_id_field: the id column (NeMo's default ``"id"``).
        verbose: log how many ids were loaded and images removed.
        num_workers_per_node: accepted for NeMo compatibility (a Xenna setting); the ids are
            read once per worker.
        split: send each removed image to the rejected sink (kind ``"filtered"``).
    """

    removal_parquets_dir: str = ""
    duplicate_id_field: str = "id"
    verbose: bool = False
    num_workers_per_node: int | None = None
    split: bool = True
    name: str = "ImageDuplicatesRemovalStage"
    modality = "image"
    kind = "deduplicator"

    def __post_init__(self) -> None:
        if not self.removal_parquets_dir:
            raise ConfigError(f"{self.name}: removal_parquets_dir is required")

    def inputs(self):
        return ["data"], ["image_id"]

    def outputs(self):
        return ["data"], ["image_id"]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        import pyarrow.parquet as pq
        from curator.io import get_fs

        fs, root = get_fs(self.removal_parquets_dir)
        files = ([root] if fs.isfile(root) else
                 sorted(f for f in fs.find(root) if f.endswith(".parquet")))
        if not files:
            raise FileNotFoundError(f"{self.name}: no .parquet files in "
                                    f"{self.removal_parquets_dir}; point removal_parquets_dir at "
                                    f"the duplicate ids your dedup step wrote")
        self._ids: dict[str, str] = {}
        for f in files:
            with fs.open(f, "rb") as fh:
                table = pq.read_table(fh)
            if self.duplicate_id_field not in table.column_names:
                raise ValueError(f"{self.name}: {f} has no column {self.duplicate_id_field!r} "
                                 f"(columns: {table.column_names}); set duplicate_id_field")
            ids = table.column(self.duplicate_id_field).to_pylist()
            reasons = (table.column("reason").to_pylist() if "reason" in table.column_names
                       else ["listed"] * len(ids))
            self._ids.update((str(i), r) for i, r in zip(ids, reasons, strict=True)
                             if i is not None)
        if self.verbose:
            _log.info("%s: %d ids to remove from %s", self.name, len(self._ids),
                      self.removal_parquets_dir)

    def process(self, task: ImageBatch) -> ImageBatch:
        out = _remove_listed(self, task, self._ids, self.split)
        if self.verbose:
            _log.info("%s: kept %d/%d images", self.name, len(out.data), len(task.data))
        return out
