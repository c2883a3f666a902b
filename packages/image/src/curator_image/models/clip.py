"""CLIP image embeddings from a local Hugging Face ``transformers`` model directory."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

__all__ = ["ClipImageEmbedder", "resolve_device"]


def resolve_device(device: str) -> str:
    """``"cuda"`` only when asked for and present; ``"auto"`` picks CUDA when present."""
    import torch

    if device in ("auto", "cuda") or device.startswith("cuda:"):
        if torch.cuda.is_available():
            return "cuda" if device == "auto" else device
        return "cpu"
    return device


class ClipImageEmbedder:
    """Embeds RGB images with a CLIP vision tower; returns L2-normalised float32 vectors.

    Parameters:
        model_dir: a local directory written by ``save_pretrained`` holding a ``CLIPModel`` or a
            ``CLIPVisionModelWithProjection`` and a ``CLIPImageProcessor``.
        device: ``"cpu"``, ``"cuda"`` (falls back to CPU when no GPU is present) or ``"auto"``.

    The model loads on the first call to :meth:`embed` (torch and transformers are imported then).
    """

    def __init__(self, model_dir: str, device: str = "cpu") -> None:
        if not os.path.isfile(os.path.join(model_dir, "config.json")):
            raise FileNotFoundError(
                f"ClipImageEmbedder: model_dir {model_dir!r} has no config.json; save a CLIP model "
                f"there with save_pretrained (see curator_image.testing.make_tiny_clip_model)")
        self.model_dir = model_dir
        self.device = device
        self._model: Any = None
        self._processor: Any = None

    def load(self) -> None:
        """Load the model and image processor (idempotent)."""
        from curator_image.models import LOAD_LOCK

        with LOAD_LOCK:
            if self._model is None:
                self._load()

    def _load(self) -> None:
        import torch
        from transformers import CLIPImageProcessor, CLIPModel, CLIPVisionModelWithProjection

        with open(os.path.join(self.model_dir, "config.json")) as fh:
            model_type = json.load(fh).get("model_type", "clip")
        cls = CLIPModel if model_type == "clip" else CLIPVisionModelWithProjection
        self.device = resolve_device(self.device)
        model = cls.from_pretrained(self.model_dir)
        if self.device.startswith("cuda"):
            model = model.half()
        self._model = model.to(self.device).eval()
        self._processor = CLIPImageProcessor.from_pretrained(self.model_dir)
        self._torch = torch

    @property
    def embed_dim(self) -> int:
        """The embedding size (loads the model)."""
        self.load()
        return int(self._model.config.projection_dim)

    def embed(self, images: list[np.ndarray]) -> np.ndarray:
        """(N, D) float32 L2-normalised embeddings of HxWx3 uint8 RGB arrays."""
        self.load()
        if not images:
            return np.zeros((0, self.embed_dim), dtype=np.float32)
        torch = self._torch
        pixels = self._processor(images=list(images), return_tensors="pt")["pixel_values"]
        pixels = pixels.to(self.device, dtype=next(self._model.parameters()).dtype)
        with torch.inference_mode():
            if hasattr(self._model, "get_image_features"):
                out = self._model.get_image_features(pixel_values=pixels)
            else:
                out = self._model(pixel_values=pixels)
            feats = getattr(out, "image_embeds", None)
            if feats is None:
                feats = getattr(out, "pooler_output", out)
            feats = feats.float()
            feats = feats / feats.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        return feats.cpu().numpy().astype(np.float32)
