"""MotionFilterStage: drop clips with (almost) no motion."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from curator.errors import ConfigError

from curator_video._config import coerce_numbers
from curator_video.filters.base import ClipFilterStage
from curator_video.tasks import Clip, VideoTask

__all__ = ["MotionFilterStage", "frame_difference_score", "optical_flow_score",
           "per_patch_min_256"]

_log = logging.getLogger(__name__)


def _gray(frames: np.ndarray) -> np.ndarray:
    return frames.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)


def frame_difference_score(frames: np.ndarray) -> float:
    """Mean absolute grey-level difference between consecutive frames, in [0, 1]."""
    if len(frames) < 2:
        return 0.0
    return float(_frame_difference_map(frames).mean())


def _frame_difference_map(frames: np.ndarray) -> np.ndarray:
    """Per-pixel mean absolute grey-level difference over the clip, in [0, 1]."""
    return np.abs(np.diff(_gray(frames), axis=0)).mean(axis=0) / 255.0


def per_patch_min_256(motion_map: np.ndarray, cell: int = 1) -> float:
    """The least mean motion over the ~256 x 256-pixel patches of a frame (NeMo's
    ``per_patch_min_256``): a clip where part of the picture does not move at all scores 0 even
    when its global mean is high. ``motion_map`` holds one motion value per ``cell`` x ``cell``
    pixels; a frame smaller than a patch is one patch."""
    rows = max(1, round(motion_map.shape[0] * cell / 256))
    cols = max(1, round(motion_map.shape[1] * cell / 256))
    return float(min(block.mean() for band in np.array_split(motion_map, rows, axis=0)
                     for block in np.array_split(band, cols, axis=1) if block.size))


def optical_flow_score(frames: np.ndarray, patch: int = 8) -> float:
    """Mean optical-flow magnitude (pixels per frame) between consecutive frames, from a
    Lucas-Kanade least-squares fit on ``patch`` x ``patch`` blocks (textureless blocks count 0)."""
    if len(frames) < 2:
        return 0.0
    return float(_optical_flow_map(frames, patch).mean())


def _optical_flow_map(frames: np.ndarray, patch: int = 8) -> np.ndarray:
    """Mean Lucas-Kanade flow magnitude over the clip, one value per ``patch`` x ``patch``
    block."""
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
        mags.append(np.sqrt(u * u + v * v))
    return np.mean(mags, axis=0)


# method -> (per-location motion map, pixels per map cell)
_METHODS = {"frame_diff": (_frame_difference_map, 1), "optical_flow": (_optical_flow_map, 8)}


class _MotionScore(float):
    """A clip's global mean motion, carrying its per-patch minimum for the keep decision."""

    per_patch_min_256: float = 0.0


@dataclass
class MotionFilterStage(ClipFilterStage):
    """Scores each clip's motion from its extracted frames and drops static clips: global mean
    motion below ``global_mean_threshold``, or (as NeMo Curator) the least moving ~256 x 256-pixel
    patch below ``per_patch_min_256_threshold``. The scores are kept in ``clip.scores["motion"]``
    and ``clip.scores["motion_per_patch_min_256"]``.

    Args:
        method: ``"frame_diff"`` (mean grey-level difference, 0-1) or ``"optical_flow"``
            (mean Lucas-Kanade flow magnitude in pixels per frame).
        global_mean_threshold: clips scoring below this are filtered out.
        per_patch_min_256_threshold: clips whose least moving patch scores below this are
            filtered out (NeMo's default ``1e-6``: a patch with no motion at all).
        score_only: only score, keep every clip.
        split: send removed clips to the rejected sink (kind ``"filtered"``) as well.
        num_gpus_per_worker: accepted for NeMo compatibility; scoring runs on the CPU (numpy),
            so no GPU is reserved.
        motion_filter_batch_size: accepted for NeMo compatibility (NeMo's motion-vector batch);
            the frames of one clip are scored together.
        verbose: log each clip's scores and decision.
    """

    method: str = "frame_diff"
    global_mean_threshold: float = 0.005
    per_patch_min_256_threshold: float = 0.000001
    score_only: bool = False
    split: bool = False
    num_gpus_per_worker: float = 0
    motion_filter_batch_size: int = 256
    verbose: bool = False
    name: str = "MotionFilterStage"

    def __post_init__(self) -> None:
        coerce_numbers(self, "global_mean_threshold", "per_patch_min_256_threshold",
                       "num_gpus_per_worker")
        if self.method not in _METHODS:
            raise ConfigError(f"{self.name}: method must be one of {sorted(_METHODS)}, got "
                              f"{self.method!r}")
        if self.global_mean_threshold < 0:
            raise ConfigError(f"{self.name}: global_mean_threshold must be >= 0")
        if self.per_patch_min_256_threshold < 0:
            raise ConfigError(f"{self.name}: per_patch_min_256_threshold must be >= 0")

    def inputs(self):
        return ["data"], ["clips", "frames"]

    def outputs(self):
        return ["data"], ["clips", "motion"]

    def score_items(self, task: VideoTask, items: list[Clip]) -> list[float]:
        motion_map, cell = _METHODS[self.method]
        scores = []
        for clip in items:
            frames = self.frames_of(clip)
            if len(frames) < 2:
                score, patch_min = _MotionScore(0.0), 0.0
            else:
                grid = motion_map(frames)
                score, patch_min = _MotionScore(grid.mean()), per_patch_min_256(grid, cell)
            score.per_patch_min_256 = patch_min
            clip.scores["motion"] = float(score)
            clip.scores["motion_per_patch_min_256"] = patch_min
            if self.verbose:
                _log.info("%s: clip %s motion global mean %.5f, per-patch min 256 %.6f",
                          self.name, clip.uuid, score, patch_min)
            scores.append(score)
        return scores

    def keep(self, score: float) -> bool:
        patch_min = getattr(score, "per_patch_min_256", float("inf"))
        return self.score_only or (score >= self.global_mean_threshold
                                   and patch_min >= self.per_patch_min_256_threshold)
