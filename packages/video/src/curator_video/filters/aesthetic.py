"""ClipAestheticFilterStage: keep clips whose sampled frames look good enough."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from curator.errors import ConfigError
from curator.stages.lifecycle import ensure_setup

from curator_video._config import coerce_numbers
from curator_video.filters.base import ClipFilterStage
from curator_video.tasks import Clip, VideoTask

__all__ = ["ClipAestheticFilterStage"]

_REDUCE = {"mean": np.mean, "min": np.min, "max": np.max}


@dataclass
class ClipAestheticFilterStage(ClipFilterStage):
    """Scores each clip with the image package's aesthetic model over its extracted frames
    (CLIP frame embeddings → ``AestheticScorer``, reduced over frames) into
    ``clip.scores["aesthetic"]`` and filters out clips below ``score_threshold``.

    Args:
        model_dir: local CLIP model directory (``save_pretrained`` format).
        aesthetic_model_dir: local aesthetic MLP directory (image package format).
        score_threshold: clips scoring below this are filtered out.
        reduction: how frame scores combine: ``"mean"``, ``"min"`` or ``"max"``.
        num_frames: score at most this many evenly spaced frames per clip (``None``: all).
        score_only: only score, keep every clip.
        device: ``"cpu"``, ``"cuda"`` or ``"auto"``.
        split: send removed clips to the rejected sink (kind ``"filtered"``) as well.
    """

    model_dir: str = ""
    aesthetic_model_dir: str = ""
    path_params: ClassVar[tuple[str, ...]] = ("model_dir", "aesthetic_model_dir")  # resolved on the driver
    score_threshold: float = 0.5
    reduction: str = "min"
    num_frames: int | None = 4
    score_only: bool = False
    device: str = "cpu"
    split: bool = False
    name: str = "ClipAestheticFilterStage"
    _models: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        coerce_numbers(self, "score_threshold")
        if not self.model_dir or not self.aesthetic_model_dir:
            raise ConfigError(f"{self.name}: model_dir (CLIP) and aesthetic_model_dir are required")
        if self.reduction not in _REDUCE:
            raise ConfigError(f"{self.name}: reduction must be one of {sorted(_REDUCE)}, got "
                              f"{self.reduction!r}")
        if self.num_frames is not None and self.num_frames < 1:
            raise ConfigError(f"{self.name}: num_frames must be >= 1 or None")

    def inputs(self):
        return ["data"], ["clips", "frames"]

    def outputs(self):
        return ["data"], ["clips", "aesthetic"]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        from curator_image.models.aesthetic import AestheticScorer

        from curator_video.embed.embedders import FrameMeanClipEmbedder
        embedder = FrameMeanClipEmbedder(self.model_dir, self.device)
        ensure_setup(embedder)
        scorer = AestheticScorer(self.aesthetic_model_dir, device=self.device)
        scorer.load()
        self._models = (embedder, scorer)

    def score_items(self, task: VideoTask, items: list[Clip]) -> list[float]:
        embedder, scorer = self._models
        sampled = []
        for c in items:
            frames = self.frames_of(c, allow_empty=False)
            n = len(frames) if self.num_frames is None else min(self.num_frames, len(frames))
            sampled.append(frames[np.linspace(0, len(frames) - 1, n).round().astype(int)])
        scores = scorer.score(embedder.embed_frames(sampled))
        start = 0
        for clip, frames in zip(items, sampled, strict=True):
            clip.scores["aesthetic"] = float(_REDUCE[self.reduction](scores[start:start + len(frames)]))
            start += len(frames)
        return [clip.scores["aesthetic"] for clip in items]

    def keep(self, score: float) -> bool:
        return self.score_only or score >= self.score_threshold
