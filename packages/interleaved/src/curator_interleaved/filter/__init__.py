"""The interleaved filters (NeMo Curator's ``stages.interleaved.filter``)."""

from __future__ import annotations

from curator_interleaved.filter.blur_filter import InterleavedBlurFilterStage
from curator_interleaved.filter.clip_score_filter import InterleavedCLIPScoreFilterStage
from curator_interleaved.filter.image_to_text_ratio_filter import (
    InterleavedImageToTextRatioFilterStage,
)
from curator_interleaved.filter.qrcode_filter import InterleavedQRCodeFilterStage

__all__ = ["InterleavedBlurFilterStage", "InterleavedCLIPScoreFilterStage",
           "InterleavedImageToTextRatioFilterStage", "InterleavedQRCodeFilterStage"]
