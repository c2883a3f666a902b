"""Score filters over CLIP embeddings: aesthetic (keep high) and NSFW (drop high)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from curator_image.stages.base import ImageModelStage
from curator_image.tasks import ImageBatch, ImageObject

__all__ = ["ImageScoreFilterStage", "ImageAestheticFilterStage", "ImageNSFWFilterStage"]


@dataclass
class ImageScoreFilterStage(ImageModelStage):
    """Base: scores embeddings with an MLP from ``model_dir``, writes ``score_field`` and keeps
    or drops each image against ``score_threshold``. With ``split=True`` the images it removes go
    to the rejected sink (kind ``"filtered"``) with the reason and score instead of vanishing."""

    score_threshold: float = 0.5
    split: bool = True
    score_field: ClassVar[str] = "score"
    scorer_class: ClassVar[str] = "MLPScorer"
    kind = "filter"

    def inputs(self):
        return ["data"], ["embedding"]

    def outputs(self):
        return ["data"], [self.score_field]

    def keep(self, score: float) -> bool:
        raise NotImplementedError

    def load_model(self) -> Any:
        from curator_image.models import aesthetic

        scorer = getattr(aesthetic, self.scorer_class)(self.model_dir, device=self.device)
        scorer.load()
        return scorer

    def process(self, task: ImageBatch) -> ImageBatch:
        ready: list[ImageObject] = []
        for img in task.data:
            if img.embedding is None:
                self.reject(task, "no_embedding", record={"image_id": img.image_id},
                            error=f"{self.name} needs ImageEmbeddingStage upstream")
            else:
                ready.append(img)
        kept: list[ImageObject] = []
        for part in self.batches(len(ready)):
            chunk = ready[part]
            scores = self.model().score(np.stack([img.embedding for img in chunk]))
            for img, score in zip(chunk, scores, strict=True):
                setattr(img, self.score_field, float(score))
                if self.keep(float(score)):
                    kept.append(img)
                elif self.split:
                    self.reject(task, f"{self.score_field}_filtered", kind="filtered",
                                record={"image_id": img.image_id, "path": img.image_path,
                                        self.score_field: float(score),
                                        "threshold": self.score_threshold})
        return task.derive(kept)  # type: ignore[return-value]


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
