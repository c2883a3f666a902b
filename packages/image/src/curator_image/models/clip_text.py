"""CLIP's text tower, next to the image tower of :mod:`curator_image.models.clip`: text
embeddings in the same space, for image-text similarity (the interleaved CLIP-score filter).

Loads from the published Hugging Face layout: a ``CLIPModel`` directory (``config.json`` with
``model_type == "clip"``, weights, ``tokenizer.json`` or ``vocab.json`` + ``merges.txt``), e.g.
``openai/clip-vit-large-patch14`` (NeMo Curator's model root, with the model under
``openai/clip-vit-large-patch14``, works too), or a ``CLIPTextModelWithProjection`` directory.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from curator_image.models.clip import find_hf_clip_dir, resolve_device

__all__ = ["ClipTextEmbedder"]


class ClipTextEmbedder:
    """Embeds texts with a CLIP text tower; returns L2-normalised float32 vectors comparable
    (by dot product) with :class:`~curator_image.models.clip.ClipImageEmbedder`'s of the same
    model.

    Parameters:
        model_dir: a Hugging Face CLIP directory (see the module doc).
        device: ``"cpu"``, ``"cuda"`` (CPU when no GPU is present) or ``"auto"``.
        max_length: tokens per text (default: the model's ``max_position_embeddings``); longer
            texts are truncated, as CLIP was trained.

    The model loads on the first call (torch and transformers are imported then).
    """

    def __init__(self, model_dir: str, device: str = "cpu", max_length: int | None = None) -> None:
        self.hf_dir = find_hf_clip_dir(model_dir)
        if self.hf_dir is None:
            raise FileNotFoundError(
                f"ClipTextEmbedder: model_dir {model_dir!r} has no config.json: give a CLIP "
                f"model saved with save_pretrained (CLIPModel with its tokenizer, e.g. "
                f"openai/clip-vit-large-patch14; see curator_image.testing.make_tiny_clip_model)")
        self.model_dir = model_dir
        self.device = device
        self.max_length = max_length
        self._model: Any = None
        self._tokenizer: Any = None

    def load(self) -> None:
        """Load the text tower and tokenizer (idempotent)."""
        from curator_image.models import LOAD_LOCK

        with LOAD_LOCK:
            if self._model is None:
                self._load()

    def _load(self) -> None:
        import torch
        from transformers import AutoTokenizer, CLIPModel, CLIPTextModelWithProjection

        with open(os.path.join(self.hf_dir, "config.json")) as fh:
            model_type = json.load(fh).get("model_type", "clip")
        have = set(os.listdir(self.hf_dir))
        if "tokenizer.json" not in have and not {"vocab.json", "merges.txt"} <= have:
            raise FileNotFoundError(
                f"ClipTextEmbedder: {self.hf_dir} has no CLIP tokenizer (tokenizer.json, or "
                f"vocab.json + merges.txt): save the tokenizer with the model "
                f"(tokenizer.save_pretrained), as the published CLIP directories have it")
        tokenizer = AutoTokenizer.from_pretrained(self.hf_dir, local_files_only=True)
        if model_type == "clip":
            full = CLIPModel.from_pretrained(self.hf_dir, local_files_only=True)
            model = _TextTower(full)
        else:
            model = CLIPTextModelWithProjection.from_pretrained(self.hf_dir,
                                                                local_files_only=True)
        self.device = resolve_device(self.device)
        if self.device.startswith("cuda"):
            model = model.half()
        self._model = model.to(self.device).eval()
        self._tokenizer = tokenizer
        self._torch = torch
        cfg = getattr(model, "config", None)
        text_cfg = getattr(cfg, "text_config", cfg)
        limit = int(getattr(text_cfg, "max_position_embeddings", 77))
        self.max_length = min(self.max_length or limit, limit)

    @property
    def embed_dim(self) -> int:
        self.load()
        return int(self._model.config.projection_dim)

    def embed(self, texts: list[str]) -> np.ndarray:
        """(N, D) float32 L2-normalised embeddings of ``texts``."""
        self.load()
        if not texts:
            return np.zeros((0, self.embed_dim), dtype=np.float32)
        torch = self._torch
        enc = self._tokenizer(list(texts), padding=True, truncation=True,
                              max_length=self.max_length, return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items() if k in ("input_ids",
                                                                     "attention_mask")}
        with torch.inference_mode():
            out = self._model(**enc)
            feats = out if isinstance(out, torch.Tensor) else out.text_embeds
            feats = feats.float()
            feats = feats / feats.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        return feats.cpu().numpy().astype(np.float32)

    __call__ = embed


class _TextTower:
    """The text half of a ``CLIPModel`` (its text model and text projection), so the image
    tower's weights need not stay on the device."""

    def __init__(self, full: Any) -> None:
        self.config = full.config
        self.text_model = full.text_model
        self.text_projection = full.text_projection

    def half(self) -> _TextTower:
        self.text_model.half()
        self.text_projection.half()
        return self

    def to(self, device: str) -> _TextTower:
        self.text_model.to(device)
        self.text_projection.to(device)
        return self

    def eval(self) -> _TextTower:
        self.text_model.eval()
        self.text_projection.eval()
        return self

    def __call__(self, input_ids: Any, attention_mask: Any = None) -> Any:
        pooled = self.text_model(input_ids=input_ids, attention_mask=attention_mask).pooler_output
        return self.text_projection(pooled)
