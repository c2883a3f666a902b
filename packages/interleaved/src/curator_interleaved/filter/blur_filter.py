"""InterleavedBlurFilterStage: drops blurry images (variance of the Laplacian)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from curator_interleaved.stages import BaseInterleavedFilterStage
from curator_interleaved.tasks import InterleavedBatch

__all__ = ["DEFAULT_BLUR_SCORE_THRESHOLD", "InterleavedBlurFilterStage", "sharpness_score"]


DEFAULT_BLUR_SCORE_THRESHOLD: float = 100.0


def sharpness_score(image: np.ndarray, row_index: Hashable | None = None) -> float:
    """Variance of the image's Laplacian (OpenCV); higher is sharper."""
    import cv2

    try:
        return float(cv2.Laplacian(image, cv2.CV_64F).var())
    except cv2.error:
        return 0.0


@dataclass
class InterleavedBlurFilterStage(BaseInterleavedFilterStage):
    """Keeps image rows whose sharpness (variance of the Laplacian of the RGB image) is at least
    ``score_threshold`` (NeMo Curator's default 100). Text and metadata rows are kept; an image
    that cannot be fetched or decoded goes to the rejected sink with its reason.

    Parameters:
        score_threshold: the minimum sharpness.
        drop_invalid_rows, split: see :class:`~curator_interleaved.stages.BaseInterleavedFilterStage`.
    """

    binary_in_frame: ClassVar[bool] = False

    score_threshold: float = DEFAULT_BLUR_SCORE_THRESHOLD
    name: str = "interleaved_blur_filter"

    def content_keep_mask(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.Series:
        return self.image_score_keep_mask(
            task, df, lambda image, idx: sharpness_score(image, row_index=idx),
            lambda value: value >= self.score_threshold)


_sharpness_score = sharpness_score  # NeMo Curator's (private) name
