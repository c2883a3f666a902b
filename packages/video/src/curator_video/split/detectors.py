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

    ``setup()`` runs once per worker (load weights there); ``detect(frames, fps)`` gets the
    frames ``(N, H, W, 3)`` uint8 of a video, or of a stretch of it (downscaled), and returns
    the indices of the frames that start a new shot (never 0).

    ``context_frames``: how many frames before a frame ``detect`` looks at to decide whether
    that frame starts a shot. A window of a long video is then detected with that many frames
    before it, and past its end only until its last shot ends, which gives the same shots as
    the whole video. ``None`` (the default: unknown) hands ``detect`` the whole video in every
    window's task (exact, but as slow and as large as reading the video whole).
    """

    context_frames: int | None = None

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
    consecutive frames exceeds ``threshold`` (0-1), unless it also does at one of the
    ``min_scene_frames - 1`` frames before (a burst of changed frames is one cut, at its first
    frame). A frame's decision reads the ``min_scene_frames`` frames before it
    (``context_frames``).

    Args:
        threshold: histogram distance above which a frame starts a new shot.
        bins: histogram bins per colour channel.
        min_scene_frames: frames a cut must follow the previous changed frame by.
    """

    threshold: float = 0.35
    bins: int = 16
    min_scene_frames: int = 2

    def __post_init__(self) -> None:
        if not 0 < self.threshold < 1:
            raise ConfigError(f"HistogramSceneDetector: threshold must be in (0, 1), got "
                              f"{self.threshold}")

    @property
    def context_frames(self) -> int:  # type: ignore[override]
        return max(1, self.min_scene_frames)

    def detect(self, frames: np.ndarray, fps: float) -> list[int]:
        changed = np.flatnonzero(histogram_differences(frames, self.bins) > self.threshold) + 1
        gaps = np.diff(changed, prepend=-self.min_scene_frames)
        return [int(i) for i in changed[gaps >= self.min_scene_frames]]
