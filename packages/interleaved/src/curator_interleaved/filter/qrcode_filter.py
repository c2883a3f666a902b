"""InterleavedQRCodeFilterStage: drops images mostly covered by QR codes."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from curator_interleaved.stages import BaseInterleavedFilterStage
from curator_interleaved.tasks import InterleavedBatch

__all__ = ["DEFAULT_QRCODE_SCORE_THRESHOLD", "InterleavedQRCodeFilterStage", "qr_code_ratio"]

DEFAULT_QRCODE_SCORE_THRESHOLD: float = 0.05


def qr_code_ratio(image: np.ndarray, row_index: Hashable | None = None) -> float:
    """The fraction of the image's area inside detected QR codes (OpenCV's detector), in
    ``[0, 1]``."""
    import cv2

    height, width = image.shape[:2]
    area = float(height * width)
    if area <= 0:
        return 0.0
    try:
        found, _, points, _ = cv2.QRCodeDetector().detectAndDecodeMulti(image)
    except cv2.error:
        return 0.0
    if not found or points is None or points.size == 0:
        return 0.0
    pts = np.asarray(points, dtype=np.float32)
    total = sum(float(cv2.contourArea(pts[i].reshape(-1, 1, 2))) for i in range(len(pts)))
    return min(total / area, 1.0)


@dataclass
class InterleavedQRCodeFilterStage(BaseInterleavedFilterStage):
    """Keeps image rows whose QR-code area ratio is below ``score_threshold`` (NeMo Curator's
    default 0.05). An image that cannot be fetched or decoded goes to the rejected sink.

    Parameters:
        score_threshold: the largest QR-covered fraction kept (exclusive).
        drop_invalid_rows, split: see :class:`~curator_interleaved.stages.BaseInterleavedFilterStage`.
    """

    binary_in_frame: ClassVar[bool] = False

    score_threshold: float = DEFAULT_QRCODE_SCORE_THRESHOLD
    name: str = "interleaved_qrcode_filter"

    def content_keep_mask(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.Series:
        return self.image_score_keep_mask(
            task, df, lambda image, idx: qr_code_ratio(image, row_index=idx),
            lambda value: value < self.score_threshold)


_qr_code_ratio = qr_code_ratio  # NeMo Curator's (private) name
