"""MotionFilterStage: drop clips with (almost) no motion."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from curator.errors import ConfigError

from curator_video._config import coerce_numbers
from curator_video.filters.base import ClipFilterStage
from curator_video.tasks import Clip, VideoTask

__all__ = ["MotionFilterStage", "frame_difference_score", "optical_flow_score"]


def _gray(frames: np.ndarray) -> np.ndarray:
    return frames.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)


def frame_difference_score(frames: np.ndarray) -> float:
    """Mean absolute grey-level difference between consecutive frames, in [0, 1]."""
    if len(frames) < 2:
        return 0.0
    return float(np.abs(np.diff(_gray(frames), axis=0)).mean() / 255.0)


def optical_flow_score(frames: np.ndarray, patch: int = 8) -> float:
    """Mean optical-flow magnitude (pixels per frame) between consecutive frames, from a
    Lucas-Kanade least-squares fit on ``patch`` x ``patch`` blocks (textureless blocks count 0)."""
    if len(frames) < 2:
        return 0.0
    g = _gray(frames) / 255.0
    h, w = (g.shape[1] // patch) * patch, (g.shape[2] // patch) * patch

    def blocks(x: np.ndarray) -> np.ndarray:
        return x[:h, :w].reshape(h // patch, patch, w // patch, patch).sum(axis=(1, 3))

    mags = []
    for a, b in zip(g[:-1], g[1:], strict=True):
        iy, ix = np.gradient((a + b) / 2)
        it = b - a
        sxx, syy, sxy = blocks(ix * ix), blocks(iy * iy), blocks(ix * iy)
        sxt, syt = blocks(ix * it), blocks(iy * it)
        det = sxx * syy - sxy * sxy
        ok = det > 1e-6
        safe = np.where(ok, det, 1.0)
        u = np.where(ok, (-syy * sxt + sxy * syt) / safe, 0.0)
        v = np.where(ok, (sxy * sxt - sxx * syt) / safe, 0.0)
        mags.append(float(np.sqrt(u * u + v * v).mean()))
    return float(np.mean(mags))


_METHODS = {"frame_diff": frame_difference_score, "optical_flow": optical_flow_score}


@dataclass
class MotionFilterStage(ClipFilterStage):
    """Scores each clip's motion from its extracted frames and drops static clips (score below
    ``global_mean_threshold``); the score is kept in ``clip.scores["motion"]``.

    Args:
        method: ``"frame_diff"`` (mean grey-level difference, 0-1) or ``"optical_flow"``
            (mean Lucas-Kanade flow magnitude in pixels per frame).
        global_mean_threshold: clips scoring below this are filtered out.
        score_only: only score, keep every clip.
        split: send removed clips to the rejected sink (kind ``"filtered"``) as well.
    """

    method: str = "frame_diff"
    global_mean_threshold: float = 0.005
    score_only: bool = False
    split: bool = False
    name: str = "MotionFilterStage"

    def __post_init__(self) -> None:
        coerce_numbers(self, "global_mean_threshold")
        if self.method not in _METHODS:
            raise ConfigError(f"{self.name}: method must be one of {sorted(_METHODS)}, got "
                              f"{self.method!r}")
        if self.global_mean_threshold < 0:
            raise ConfigError(f"{self.name}: global_mean_threshold must be >= 0")

    def inputs(self):
        return ["data"], ["clips", "frames"]

    def outputs(self):
        return ["data"], ["clips", "motion"]

    def score_items(self, task: VideoTask, items: list[Clip]) -> list[float]:
        score = _METHODS[self.method]
        for clip in items:
            clip.scores["motion"] = score(self.frames_of(clip))
        return [clip.scores["motion"] for clip in items]

    def keep(self, score: float) -> bool:
        return self.score_only or score >= self.global_mean_threshold
