"""Score filters over CLIP embeddings: aesthetic (keep high) and NSFW (drop high)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from curator.stages.filter import FilterStage

from curator_image.stages.base import ImageModelStage
from curator_image.tasks import ImageBatch, ImageObject

__all__ = ["ImageScoreFilterStage", "ImageAestheticFilterStage", "ImageNSFWFilterStage"]


@dataclass
class ImageScoreFilterStage(FilterStage[ImageBatch], ImageModelStage):
    """Base: scores embeddings with an MLP from ``model_dir``, writes ``score_field`` and keeps
    or drops each image against ``score_threshold`` (core's filter contract,
    :class:`curator.stages.filter.FilterStage`). With ``split=True`` the images it removes go to
    the rejected sink (kind ``"filtered"``) with the filter's name and score. An image without an
    embedding goes to the sink as ``no_embedding``."""

    score_threshold: float = 0.5
    split: bool = False
    score_field: ClassVar[str] = "score"
    scorer_class: ClassVar[str] = "MLPScorer"

    def inputs(self):
        return ["data"], ["embedding"]

    def outputs(self):
        return ["data"], [self.score_field]

    def load_model(self) -> Any:
        from curator_image.models import aesthetic

        scorer = getattr(aesthetic, self.scorer_class)(self.model_dir, device=self.device)
        scorer.load()
        return scorer

    def items(self, task: ImageBatch) -> list[ImageObject]:
        return task.data

    def with_kept(self, task: ImageBatch, mask: list[bool]) -> ImageBatch:
        return task.derive([img for img, k in zip(task.data, mask, strict=True) if k])

    def item_record(self, item: ImageObject) -> dict[str, Any]:
        return {"image_id": item.image_id, "path": item.image_path,
                "threshold": self.score_threshold}

    def score_items(self, task: ImageBatch, items: list[ImageObject]) -> list[float | None]:
        scores: list[float | None] = [None] * len(items)
        ready = []
        for i, img in enumerate(items):
            if img.embedding is None:
                self.reject(task, "no_embedding", record={"image_id": img.image_id},
                            error=f"{self.name} needs ImageEmbeddingStage upstream")
            else:
                ready.append(i)
        for part in self.batches(len(ready)):
            idx = ready[part]
            values = self.model().score(np.stack([items[i].embedding for i in idx]))
            for i, score in zip(idx, values, strict=True):
                scores[i] = float(score)
                setattr(items[i], self.score_field, float(score))
        return scores


@dataclass
class ImageAestheticFilterStage(ImageScoreFilterStage):
    """Scores images with a LAION-style aesthetic MLP over their CLIP embedding, writes
    ``aesthetic_score`` and keeps images scoring >= ``score_threshold``.

    Parameters: model_dir (local MLP directory), score_threshold, model_inference_batch_size,
    num_gpus_per_worker, split (send removed images to the rejected sink), verbose.
    """

    name: str = "ImageAestheticFilterStage"
    score_field: ClassVar[str] = "aesthetic_score"
    scorer_class: ClassVar[str] = "AestheticScorer"

    def keep(self, score: float) -> bool:
        return score >= self.score_threshold


@dataclass
class ImageNSFWFilterStage(ImageScoreFilterStage):
    """Scores images with an NSFW MLP over their CLIP embedding, writes ``nsfw_score`` and drops
    images scoring above ``score_threshold``.

    Parameters: model_dir (local MLP directory), score_threshold, model_inference_batch_size,
    num_gpus_per_worker, split (send removed images to the rejected sink), verbose.
    """

    name: str = "ImageNSFWFilterStage"
    score_field: ClassVar[str] = "nsfw_score"
    scorer_class: ClassVar[str] = "NSFWScorer"

    def keep(self, score: float) -> bool:
        return score <= self.score_threshold
