"""InterleavedImageToTextRatioFilterStage: drops documents with too many or too few images per
word."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from curator_interleaved.stages import BaseInterleavedFilterStage
from curator_interleaved.tasks import InterleavedBatch

__all__ = ["DEFAULT_IMAGE_TO_TEXT_MAX_RATIO", "DEFAULT_IMAGE_TO_TEXT_MIN_RATIO",
           "InterleavedImageToTextRatioFilterStage"]

DEFAULT_IMAGE_TO_TEXT_MIN_RATIO: float = 0.0
DEFAULT_IMAGE_TO_TEXT_MAX_RATIO: float = float("inf")


@dataclass
class InterleavedImageToTextRatioFilterStage(BaseInterleavedFilterStage):
    """Keeps documents whose ``images / max(words, 1)`` lies in ``[min_ratio, max_ratio]``
    (images: image rows; words: whitespace-separated words over the text rows); a document
    outside goes whole. Reads no image bytes.

    Parameters:
        min_ratio, max_ratio: the bounds (default 0 and infinity: keep all).
        drop_invalid_rows, split: see :class:`~curator_interleaved.stages.BaseInterleavedFilterStage`.
    """

    binary_in_frame: ClassVar[bool] = False

    min_ratio: float = DEFAULT_IMAGE_TO_TEXT_MIN_RATIO
    max_ratio: float = DEFAULT_IMAGE_TO_TEXT_MAX_RATIO
    name: str = "interleaved_image_to_text_ratio_filter"

    def content_keep_mask(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.Series:
        if "sample_id" not in df.columns or df.empty:
            return pd.Series(True, index=df.index, dtype=bool)
        modality = pa.array(df["modality"].astype(object), pa.string())
        if "text_content" in df.columns:
            text = pa.array(df["text_content"].astype(object).where(
                df["text_content"].notna(), None), pa.string())
            words = pc.list_value_length(pc.utf8_split_whitespace(text)).fill_null(0)
            words = pc.if_else(pc.equal(modality, "text").fill_null(False), words, 0)
        else:
            words = pa.array(np.zeros(len(df), dtype=np.int64))
        is_image = pc.equal(modality, "image").fill_null(False).cast(pa.int64())
        codes, _ = pd.factorize(df["sample_id"])
        n = int(codes.max()) + 1 if len(codes) else 0
        valid = codes >= 0
        images = np.bincount(codes[valid], weights=is_image.to_numpy()[valid], minlength=n)
        n_words = np.bincount(codes[valid], weights=np.asarray(words, dtype=np.float64)[valid],
                              minlength=n)
        ratio = images / np.maximum(n_words, 1)
        keep_doc = (ratio >= self.min_ratio) & (ratio <= self.max_ratio)
        keep = np.where(valid, keep_doc[np.clip(codes, 0, None)], True)
        for idx, r in zip(df.index[~keep], ratio[codes[~keep]], strict=True):
            self.record_score(idx, float(r))
        return pd.Series(keep, index=df.index, dtype=bool)


def _text_word_count(text: str | None) -> int:
    """Whitespace-separated words of ``text`` (0 for null); NeMo Curator's helper."""
    if text is None or (isinstance(text, float) and text != text):
        return 0
    return len(str(text).split())
