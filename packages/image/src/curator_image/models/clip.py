"""CLIP image embeddings from a local Hugging Face ``CLIPModel`` directory or an OpenCLIP
checkpoint."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

__all__ = ["ClipImageEmbedder", "resolve_device", "find_hf_clip_dir", "HF_CLIP_MODEL_ID"]


def resolve_device(device: str) -> str:
    """``"cuda"`` only when asked for and present; ``"auto"`` picks CUDA when present."""
    import torch

    if device in ("auto", "cuda") or device.startswith("cuda:"):
        if torch.cuda.is_available():
            return "cuda" if device == "auto" else device
        return "cpu"
    return device


HF_CLIP_MODEL_ID = "openai/clip-vit-large-patch14"
"""The CLIP NeMo Curator uses; its model root holds it under ``<root>/openai/clip-vit-large-patch14``."""


def find_hf_clip_dir(model_dir: str) -> str | None:
    """``model_dir`` when it holds a ``config.json``, else NeMo Curator's nested
    ``<model_dir>/openai/clip-vit-large-patch14`` when that does; else None."""
    for d in (model_dir, os.path.join(model_dir, *HF_CLIP_MODEL_ID.split("/"))):
        if os.path.isfile(os.path.join(d, "config.json")):
            return d
    return None


class ClipImageEmbedder:
    """Embeds RGB images with a CLIP vision tower; returns L2-normalised float32 vectors.

    Parameters:
        model_dir: one of
            - a Hugging Face directory (``save_pretrained`` / a hub download of e.g.
              ``openai/clip-vit-large-patch14``): ``config.json`` + weights of a ``CLIPModel`` or
              ``CLIPVisionModelWithProjection`` + ``preprocessor_config.json``; NeMo Curator's
              model root (the model under ``openai/clip-vit-large-patch14``) works too;
            - an OpenCLIP ViT checkpoint (``open_clip_pytorch_model.bin`` /
              ``open_clip_model.safetensors``, or a directory holding one), mapped onto the
              transformers model (see :mod:`curator_image.models.open_clip`).
        device: ``"cpu"``, ``"cuda"`` (falls back to CPU when no GPU is present) or ``"auto"``.
        quick_gelu: OpenCLIP only - the tower uses QuickGELU (OpenAI-trained weights and the
            ``-quickgelu`` models); OpenCLIP's LAION ViTs use GELU (the default).

    The model loads on the first call to :meth:`embed` (torch and transformers are imported then).
    On CUDA it runs in float16. :meth:`preprocess` (resize, crop, normalise on the CPU) and
    :meth:`embed_pixels` (the forward pass) can run on different threads.
    """

    def __init__(self, model_dir: str, device: str = "cpu", quick_gelu: bool = False) -> None:
        from curator_image.models.open_clip import find_open_clip_checkpoint

        self.hf_dir = find_hf_clip_dir(model_dir)
        self.open_clip_file = None if self.hf_dir else find_open_clip_checkpoint(model_dir)
        if self.hf_dir is None and self.open_clip_file is None:
            raise FileNotFoundError(
                f"ClipImageEmbedder: model_dir {model_dir!r} has no config.json (a CLIP model "
                f"saved with save_pretrained, see curator_image.testing.make_tiny_clip_model) and "
                f"no OpenCLIP checkpoint (open_clip_pytorch_model.bin / "
                f"open_clip_model.safetensors)")
        self.model_dir = model_dir
        self.device = device
        self.quick_gelu = quick_gelu
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

        model, self._processor = self._load_hf() if self.hf_dir else self._load_open_clip()
        self.device = resolve_device(self.device)
        if self.device.startswith("cuda"):
            model = model.half()
        self._model = model.to(self.device).eval()
        self._torch = torch

    def _load_hf(self) -> tuple[Any, Any]:
        from transformers import CLIPImageProcessor, CLIPModel, CLIPVisionModelWithProjection

        with open(os.path.join(self.hf_dir, "config.json")) as fh:
            model_type = json.load(fh).get("model_type", "clip")
        cls = CLIPModel if model_type == "clip" else CLIPVisionModelWithProjection
        model = cls.from_pretrained(self.hf_dir, local_files_only=True)
        return model, CLIPImageProcessor.from_pretrained(self.hf_dir, local_files_only=True)

    def _load_open_clip(self) -> tuple[Any, Any]:
        from transformers import CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModelWithProjection

        from curator_image.models.open_clip import (
            load_open_clip_state,
            open_clip_to_hf,
            open_clip_vision_config,
        )

        state = load_open_clip_state(self.open_clip_file)
        config = CLIPVisionConfig(**open_clip_vision_config(state, self.quick_gelu))
        model = CLIPVisionModelWithProjection(config)
        model.load_state_dict(open_clip_to_hf(state), strict=True)
        size = config.image_size  # OpenCLIP: bicubic resize of the short side, centre crop
        processor = CLIPImageProcessor(size={"shortest_edge": size},
                                       crop_size={"height": size, "width": size})
        return model, processor

    @property
    def embed_dim(self) -> int:
        """The embedding size (loads the model)."""
        self.load()
        return int(self._model.config.projection_dim)

    def preprocess(self, images: list[np.ndarray]) -> Any:
        """(N, 3, S, S) float32 CPU tensor of HxWx3 uint8 RGB arrays (resize, crop, normalise)."""
        self.load()
        return self._processor(images=list(images), return_tensors="pt")["pixel_values"]

    def embed_pixels(self, pixels: Any) -> np.ndarray:
        """(N, D) float32 L2-normalised embeddings of :meth:`preprocess` output."""
        self.load()
        torch = self._torch
        pixels = pixels.to(self.device, dtype=next(self._model.parameters()).dtype,
                           non_blocking=True)
        with torch.inference_mode():
            if hasattr(self._model, "get_image_features"):
                out = self._model.get_image_features(pixel_values=pixels)
            else:
                out = self._model(pixel_values=pixels)
            feats = out if isinstance(out, torch.Tensor) else getattr(out, "image_embeds", None)
            if feats is None:
                feats = out.pooler_output
            feats = feats.float()
            feats = feats / feats.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        return feats.cpu().numpy().astype(np.float32)

    def embed(self, images: list[np.ndarray]) -> np.ndarray:
        """(N, D) float32 L2-normalised embeddings of HxWx3 uint8 RGB arrays."""
        self.load()
        if not images:
            return np.zeros((0, self.embed_dim), dtype=np.float32)
        return self.embed_pixels(self.preprocess(images))
