"""ConvertImageBatchToDocumentBatchStage: hand image records to the text stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from curator import ProcessingStage

from curator_image.tasks import ImageBatch

__all__ = ["ConvertImageBatchToDocumentBatchStage"]


@dataclass
class ConvertImageBatchToDocumentBatchStage(ProcessingStage[ImageBatch, Any]):
    """Turns each :class:`~curator_image.ImageBatch` into a ``curator_text.DocumentBatch`` (a
    pandas DataFrame, one row per image, as NeMo Curator builds) with the ``fields`` of each
    :class:`~curator_image.ImageObject` as columns (a field an image lacks is ``None``); no
    ``fields``: only ``image_id``. The batch keeps the image batch's id, dataset name, metadata
    and stage timings. Needs ``curator-text``.

    Args:
        fields: ``ImageObject`` attributes to copy (``image_id``, ``image_path``, ``caption``,
            ``aesthetic_score``, ``nsfw_score``, ``embedding``, ``metadata`` …).
    """

    fields: list[str] = field(default_factory=list)
    name: str = "ConvertImageBatchToDocumentBatchStage"
    modality: ClassVar[str] = "image"

    def inputs(self):
        return ["data"], []

    def outputs(self):
        return ["data"], list(self.fields or ["image_id"])

    def process(self, task: ImageBatch) -> Any:
        import pandas as pd
        try:
            from curator_text.tasks import DocumentBatch
        except ImportError as exc:
            raise ImportError(f"{self.name} builds a curator_text.DocumentBatch: install "
                              f"curator-text (pip install curator-text)") from exc
        columns = self.fields or ["image_id"]
        frame = pd.DataFrame({c: [getattr(img, c, None) for img in task.data] for c in columns},
                             columns=columns)
        return task.derive(frame, cls=DocumentBatch)
