"""InterleavedImageToTextRatioFilterStage: drops documents with too many or too few images per
word."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

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
        text = pa.array(df["text_content"].astype(object).where(
            df["text_content"].notna(), None), pa.string()) if "text_content" in df.columns \
            else None
        codes = pd.factorize(df["sample_id"])[0]
        return pd.Series(self._keep(modality, text, codes, df.index), index=df.index, dtype=bool)

    def table_keep_mask(self, task: InterleavedBatch, table: pa.Table) -> np.ndarray:
        if "sample_id" not in table.column_names or table.num_rows == 0:
            return np.ones(table.num_rows, dtype=bool)
        text = table["text_content"] if "text_content" in table.column_names else None
        codes = pd.factorize(np.asarray(table["sample_id"].to_pylist(), dtype=object))[0]
        return self._keep(table["modality"], text, codes, np.arange(table.num_rows))

    def _keep(self, modality: pa.Array | pa.ChunkedArray, text: pa.Array | pa.ChunkedArray | None,
              codes: np.ndarray, labels: Any) -> np.ndarray:
        """Keep per row from its document's images per word (``codes``: the document of each
        row, -1 for none: kept); the ratio of each removed row is recorded."""
        n = len(codes)
        if text is not None:
            words = pc.list_value_length(pc.utf8_split_whitespace(text)).fill_null(0)
            words = pc.if_else(pc.equal(modality, "text").fill_null(False), words, 0)
            words = np.asarray(words.to_numpy(zero_copy_only=False), dtype=np.float64)
        else:
            words = np.zeros(n, dtype=np.float64)
        is_image = np.asarray(pc.equal(modality, "image").fill_null(False).to_numpy(
            zero_copy_only=False), dtype=np.float64)
        docs = int(codes.max()) + 1 if n else 0
        valid = codes >= 0
        images = np.bincount(codes[valid], weights=is_image[valid], minlength=docs)
        n_words = np.bincount(codes[valid], weights=words[valid], minlength=docs)
        ratio = images / np.maximum(n_words, 1)
        keep_doc = (ratio >= self.min_ratio) & (ratio <= self.max_ratio)
        keep = np.where(valid, keep_doc[np.clip(codes, 0, None)], True)
        for idx, r in zip(np.asarray(labels)[~keep], ratio[codes[~keep]], strict=True):
            self.record_score(idx, float(r))
        return keep


def _text_word_count(text: str | None) -> int:
    """Whitespace-separated words of ``text`` (0 for null); NeMo Curator's helper."""
    if text is None or (isinstance(text, float) and text != text):
        return 0
    return len(str(text).split())
