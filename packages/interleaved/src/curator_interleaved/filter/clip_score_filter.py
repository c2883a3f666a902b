"""InterleavedCLIPScoreFilterStage: drops images unrelated to their document's text (CLIP)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from curator import Resources
from curator.errors import ConfigError

from curator_interleaved.stages import BaseInterleavedFilterStage
from curator_interleaved.tasks import InterleavedBatch
from curator_interleaved.utils.image_utils import image_bytes_to_array

__all__ = ["DEFAULT_CLIP_MIN_SCORE", "InterleavedCLIPScoreFilterStage"]

DEFAULT_CLIP_MIN_SCORE: float = 0.15


def _sample_texts(df: pd.DataFrame, sample_id: Any) -> list[str]:
    rows = df[(df["sample_id"] == sample_id) & (df["modality"] == "text")]
    return [s.strip() for s in rows["text_content"].dropna().astype(str) if s.strip()]


@dataclass
class InterleavedCLIPScoreFilterStage(BaseInterleavedFilterStage):
    """Keeps an image row when its CLIP similarity (cosine of the image and text embeddings)
    with at least one text row of the same document reaches ``min_score``; an image in a
    document without text is removed (NeMo Curator's rules). The image and text towers come
    from one local CLIP directory (:class:`~curator_image.models.clip.ClipImageEmbedder`,
    :class:`~curator_image.models.clip_text.ClipTextEmbedder`).

    Parameters:
        model_dir: a Hugging Face CLIP directory (``openai/clip-vit-large-patch14`` layout,
            with its tokenizer), or NeMo Curator's model root holding it.
        min_score: the similarity an image needs with some text of its document.
        num_gpus_per_worker: GPUs per worker (0, the default: CPU); CUDA is used when present.
        drop_invalid_rows, split: see :class:`~curator_interleaved.stages.BaseInterleavedFilterStage`.
    """

    binary_in_frame: ClassVar[bool] = False

    model_dir: str | None = None
    min_score: float = DEFAULT_CLIP_MIN_SCORE
    num_gpus_per_worker: float = 0.0
    name: str = "interleaved_clip_score_filter"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))

    def __post_init__(self) -> None:
        if self.num_gpus_per_worker:
            self.resources = Resources(cpus=1.0, gpus=self.num_gpus_per_worker)

    def setup_on_node(self, node_info: Any = None, worker_metadata: Any = None) -> None:
        if not self.model_dir:
            raise ConfigError(f"{self.name}: model_dir is required (a local CLIP directory "
                              f"with its tokenizer; nothing is downloaded at run time)")

    def setup(self, worker_metadata: Any = None) -> None:
        from curator_image.models.clip import ClipImageEmbedder
        from curator_image.models.clip_text import ClipTextEmbedder

        if not self.model_dir:
            raise ConfigError(f"{self.name}: model_dir is required")
        device = "auto" if self.resources.requires_gpu else "cpu"
        self._image_model = ClipImageEmbedder(self.model_dir, device=device)
        self._text_model = ClipTextEmbedder(self.model_dir, device=device)
        self._image_model.load()
        self._text_model.load()

    def teardown(self) -> None:
        self.__dict__.pop("_image_model", None)
        self.__dict__.pop("_text_model", None)

    def content_keep_mask(self, task: InterleavedBatch, df: pd.DataFrame) -> pd.Series:
        keep = pd.Series(True, index=df.index, dtype=bool)
        images = (df["modality"] == "image").fillna(False).astype(bool)
        if not images.any():
            return keep
        if "_image_model" not in self.__dict__:
            self.setup()
        by_sample: dict[Any, list[tuple[Any, bytes]]] = {}
        for idx, data in self.iter_materialized_bytes(task, df, images):
            if data is None:
                keep.loc[idx] = False
                continue
            by_sample.setdefault(df.at[idx, "sample_id"], []).append((idx, data))
        for sample_id, rows in by_sample.items():
            texts = _sample_texts(df, sample_id)
            if not texts:
                for idx, _ in rows:
                    keep.loc[idx] = False
                continue
            indices, arrays = [], []
            for idx, data in rows:
                arr = image_bytes_to_array(data, row_index=idx)
                if arr is None:
                    self.mark_bad(idx, "undecodable_image", "OpenCV and PIL cannot decode it")
                    keep.loc[idx] = False
                    continue
                indices.append(idx)
                arrays.append(arr)
            if not arrays:
                continue
            scores = self._image_model.embed(arrays) @ self._text_model.embed(texts).T
            best = np.max(scores, axis=1)
            for idx, score in zip(indices, best, strict=True):
                self.record_score(idx, float(score))
                keep.loc[idx] = bool(score >= self.min_score)
        return keep
