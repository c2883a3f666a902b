"""Clip embedders: turn a clip's frames into one vector.

Pluggable: subclass :class:`ClipEmbedder` for a video-native model (load local weights in
``setup()``) and pass an instance to ``ClipEmbeddingStage(embedder=...)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from curator.stages.lifecycle import ensure_setup

__all__ = ["ClipEmbedder", "FrameMeanClipEmbedder", "mean_pool"]


def mean_pool(frame_embeddings: np.ndarray, counts: list[int]) -> np.ndarray:
    """L2-normalised means of consecutive groups of ``counts[i]`` rows."""
    out = []
    start = 0
    for n in counts:
        v = frame_embeddings[start:start + n].mean(axis=0)
        out.append(v / max(float(np.linalg.norm(v)), 1e-12))
        start += n
    return np.stack(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)


class ClipEmbedder(ABC):
    """Embeds clips: ``setup()`` loads the model once per worker; ``embed_clips(frames)`` gets a
    list of ``(N_i, H, W, 3)`` uint8 frame arrays and returns ``(len(frames), D)`` float32."""

    def setup(self) -> None:  # noqa: B027 - optional hook
        """Load the model (once per worker)."""

    @abstractmethod
    def embed_clips(self, frames: list[np.ndarray]) -> np.ndarray:
        """One embedding per clip."""


class FrameMeanClipEmbedder(ClipEmbedder):
    """The L2-normalised mean of the clip's frame embeddings from the image package's CLIP
    embedder (``curator_image.models.clip.ClipImageEmbedder``).

    Args:
        model_dir: local CLIP model directory (``save_pretrained`` format).
        device: ``"cpu"``, ``"cuda"`` or ``"auto"``.
        max_batch: frames per embedder call.
    """

    def __init__(self, model_dir: str, device: str = "cpu", max_batch: int = 64) -> None:
        self.model_dir, self.device, self.max_batch = model_dir, device, max_batch
        self._embedder: Any = None

    def setup(self) -> None:
        if self._embedder is None:
            from curator_image.models.clip import ClipImageEmbedder
            self._embedder = ClipImageEmbedder(self.model_dir, device=self.device)
            self._embedder.load()

    def embed_frames(self, frames: list[np.ndarray]) -> np.ndarray:
        """``(sum N_i, D)`` embeddings of every frame of every clip, in order."""
        ensure_setup(self)
        flat = [f for clip in frames for f in clip]
        parts = [self._embedder.embed(flat[i:i + self.max_batch])
                 for i in range(0, len(flat), self.max_batch)]
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)

    def embed_clips(self, frames: list[np.ndarray]) -> np.ndarray:
        return mean_pool(self.embed_frames(frames), [len(f) for f in frames])
