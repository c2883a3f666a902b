"""LAION-style MLP scorers over CLIP embeddings (aesthetic and NSFW)."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

__all__ = ["AestheticScorer", "MLPScorer", "NSFWScorer", "build_mlp", "save_mlp_model", "CONFIG_NAME",
           "WEIGHTS_NAME"]

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"


def build_mlp(embed_dim: int, hidden: list[int] | None = None, sigmoid: bool = False) -> Any:
    """The LAION aesthetic predictor's MLP (embed_dim → 1024 → 128 → 64 → 16 → 1)."""
    import torch.nn as nn

    sizes = [embed_dim, *(hidden if hidden is not None else [1024, 128, 64, 16])]
    layers: list[Any] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.Dropout(0.1))
    layers.append(nn.Linear(sizes[-1], 1))
    if sigmoid:
        layers.append(nn.Sigmoid())
    return nn.Sequential(*layers)


class MLPScorer:
    """Scores CLIP embeddings with an MLP saved in ``model_dir`` (``config.json`` with
    ``embed_dim``, ``hidden`` and ``sigmoid``, plus ``model.safetensors``). Loads lazily.

    Parameters:
        model_dir: the local directory holding the MLP.
        device: ``"cpu"``, ``"cuda"`` (CPU when no GPU is present) or ``"auto"``.
    """

    kind = "mlp"

    def __init__(self, model_dir: str, device: str = "cpu") -> None:
        for name in (CONFIG_NAME, WEIGHTS_NAME):
            if not os.path.isfile(os.path.join(model_dir, name)):
                raise FileNotFoundError(
                    f"{type(self).__name__}: model_dir {model_dir!r} has no {name}; build one "
                    f"with curator_image.testing.make_tiny_aesthetic_model or save_mlp_model")
        self.model_dir = model_dir
        self.device = device
        self._model: Any = None

    def load(self) -> None:
        """Load the MLP (idempotent, thread-safe)."""
        from curator_image.models import LOAD_LOCK

        with LOAD_LOCK:
            if self._model is None:
                self._load()

    def _load(self) -> None:
        import torch
        from safetensors.torch import load_file

        from curator_image.models.clip import resolve_device

        with open(os.path.join(self.model_dir, CONFIG_NAME)) as fh:
            cfg = json.load(fh)
        model = build_mlp(int(cfg["embed_dim"]), cfg.get("hidden"), bool(cfg.get("sigmoid")))
        model.load_state_dict(load_file(os.path.join(self.model_dir, WEIGHTS_NAME)))
        self.device = resolve_device(self.device)
        self.embed_dim = int(cfg["embed_dim"])
        self._model = model.to(self.device).eval()
        self._torch = torch

    def score(self, embeddings: np.ndarray) -> np.ndarray:
        """(N,) float32 scores of (N, D) embeddings."""
        self.load()
        emb = np.asarray(embeddings, dtype=np.float32)
        if emb.ndim != 2 or emb.shape[1] != self.embed_dim:
            raise ValueError(f"{type(self).__name__}: embeddings must have shape (N, "
                             f"{self.embed_dim}), got {emb.shape}")
        if len(emb) == 0:
            return np.zeros(0, dtype=np.float32)
        with self._torch.inference_mode():
            out = self._model(self._torch.from_numpy(emb).to(self.device))
        return out.reshape(-1).float().cpu().numpy().astype(np.float32)


class AestheticScorer(MLPScorer):
    """The LAION-style aesthetic predictor (higher is more aesthetic)."""


class NSFWScorer(MLPScorer):
    """An NSFW probability predictor of the same shape (saved with ``sigmoid: true``)."""


def save_mlp_model(model: Any, path: str, embed_dim: int, hidden: list[int] | None = None,
                   sigmoid: bool = False) -> str:
    """Save an MLP built by :func:`build_mlp` so :class:`MLPScorer` can load it."""
    from safetensors.torch import save_file

    os.makedirs(path, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              os.path.join(path, WEIGHTS_NAME))
    with open(os.path.join(path, CONFIG_NAME), "w") as fh:
        json.dump({"embed_dim": embed_dim, "hidden": hidden, "sigmoid": sigmoid}, fh)
    return path
