"""Scene detectors: find the frames where a new shot starts.

A detector is pluggable: subclass :class:`SceneDetector` (for example a learned model that
loads local weights in ``setup()``) and hand an instance to ``SceneCutSplitStage``.
TransNetV2 has its own stage, ``TransNetV2ClipExtractionStage``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from curator.errors import ConfigError

__all__ = ["SceneDetector", "HistogramSceneDetector", "histogram_differences"]


class SceneDetector(ABC):
    """Finds shot boundaries in a sequence of frames.

    ``setup()`` runs once per worker (load weights there); ``detect(frames, fps)`` gets all
    frames ``(N, H, W, 3)`` uint8 of a video (downscaled) and returns the indices of the frames
    that start a new shot (never 0).
    """

    def setup(self) -> None:  # noqa: B027 - optional hook
        """Load models or weights (once per worker)."""

    @abstractmethod
    def detect(self, frames: np.ndarray, fps: float) -> list[int]:
        """Indices of the frames that start a new shot."""


def histogram_differences(frames: np.ndarray, bins: int = 16) -> np.ndarray:
    """Distance in [0, 1] between each frame's colour histogram and the previous one's
    (total variation, averaged over the 3 channels); element ``i`` compares frames ``i`` and
    ``i+1``."""
    n = len(frames)
    if n < 2:
        return np.zeros(0, np.float32)
    q = (frames.reshape(n, -1, 3).astype(np.int32) * bins) // 256          # (N, P, 3)
    offsets = np.arange(3) * bins + np.arange(n)[:, None, None] * 3 * bins
    hist = np.bincount((q + offsets).ravel(), minlength=n * 3 * bins).reshape(n, 3, bins)
    hist = hist / q.shape[1]
    return (0.5 * np.abs(np.diff(hist, axis=0)).sum(axis=2).mean(axis=1)).astype(np.float32)


@dataclass
class HistogramSceneDetector(SceneDetector):
    """Content-based cuts: a new shot starts where the colour-histogram difference between
    consecutive frames exceeds ``threshold`` (0-1).

    Args:
        threshold: histogram distance above which a frame starts a new shot.
        bins: histogram bins per colour channel.
        min_scene_frames: ignore a cut closer than this to the previous one.
    """

    threshold: float = 0.35
    bins: int = 16
    min_scene_frames: int = 2

    def __post_init__(self) -> None:
        if not 0 < self.threshold < 1:
            raise ConfigError(f"HistogramSceneDetector: threshold must be in (0, 1), got "
                              f"{self.threshold}")

    def detect(self, frames: np.ndarray, fps: float) -> list[int]:
        diffs = histogram_differences(frames, self.bins)
        cuts: list[int] = []
        for i in np.flatnonzero(diffs > self.threshold) + 1:
            if not cuts or i - cuts[-1] >= self.min_scene_frames:
                cuts.append(int(i))
        return cuts
