"""Scorers over L2-normalised CLIP image embeddings, loading the published weight layouts.

- :class:`AestheticScorer`: the LAION improved aesthetic predictor as NeMo Curator ships it
  (``ttj/sac-logos-ava1-l14-linearMSE``): ``model.safetensors`` with an ``nn.Sequential`` under
  ``layers.`` - Linear(768, 1024), Dropout, Linear(1024, 128), Dropout, Linear(128, 64), Dropout,
  Linear(64, 16), Linear(16, 1) (keys ``layers.0``, ``layers.2``, ``layers.4``, ``layers.6``,
  ``layers.7``); the input width is read from the weights.
- :class:`NSFWScorer`: LAION's CLIP-based NSFW detector (``laion/clip-autokeras-binary-nsfw``,
  ``clip_autokeras_binary_nsfw.pth``): ``norm.mean``/``norm.variance`` (input standardisation),
  ``linear_1`` (D→64), ``linear_2`` (64→512), ``linear_3`` (512→256), ``linear_4`` (256→1), ReLU,
  sigmoid output.

``model_dir`` may be the directory holding the file, NeMo Curator's model root (the file under
``<model_dir>/<hub id>/``), or the weights file itself. Earlier Curator MLP directories
(``config.json`` + ``model.safetensors``) still load.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

__all__ = ["AestheticScorer", "MLPScorer", "NSFWScorer", "build_mlp", "save_mlp_model",
           "build_nsfw_model", "AESTHETIC_MODEL_ID", "NSFW_MODEL_ID", "NSFW_WEIGHTS_NAME",
           "CONFIG_NAME", "WEIGHTS_NAME"]

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
AESTHETIC_MODEL_ID = "ttj/sac-logos-ava1-l14-linearMSE"
NSFW_MODEL_ID = "laion/clip-autokeras-binary-nsfw"
NSFW_WEIGHTS_NAME = "clip_autokeras_binary_nsfw.pth"


def build_mlp(embed_dim: int, hidden: list[int] | None = None, sigmoid: bool = False) -> Any:
    """The LAION aesthetic predictor's MLP (embed_dim → 1024 → 128 → 64 → 16 → 1), with the
    module indices of the published weights (Dropout after the first three Linear layers)."""
    import torch.nn as nn

    sizes = [embed_dim, *(hidden if hidden is not None else [1024, 128, 64, 16])]
    layers: list[Any] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.Dropout(0.2 if i < 2 else 0.1))
    layers.append(nn.Linear(sizes[-1], 1))
    if sigmoid:
        layers.append(nn.Sigmoid())
    return nn.Sequential(*layers)


def _mlp_from_state(state: dict[str, Any]) -> Any:
    """An ``nn.Sequential`` whose Linear layers sit at the indices (and shapes) ``state`` names,
    Dropout in between (the published aesthetic layout, ``layers.`` prefix removed)."""
    import torch.nn as nn

    idx = sorted({int(k.split(".")[0]) for k in state if k.endswith(".weight")})
    mods: list[Any] = [nn.Dropout(0.0) for _ in range(idx[-1] + 1)]
    for i in idx:
        out_f, in_f = state[f"{i}.weight"].shape
        mods[i] = nn.Linear(in_f, out_f)
    return nn.Sequential(*mods)


def build_nsfw_model(embed_dim: int = 768) -> Any:
    """LAION's NSFW detector head with the published module names (see the module docstring)."""
    import torch
    import torch.nn as nn

    class Normalization(nn.Module):
        def __init__(self, dim: int) -> None:
            super().__init__()
            self.register_buffer("mean", torch.zeros(dim))
            self.register_buffer("variance", torch.ones(dim))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return (x - self.mean) / self.variance.sqrt()

    class NSFWModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = Normalization(embed_dim)
            self.linear_1 = nn.Linear(embed_dim, 64)
            self.linear_2 = nn.Linear(64, 512)
            self.linear_3 = nn.Linear(512, 256)
            self.linear_4 = nn.Linear(256, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = torch.relu(self.linear_1(self.norm(x)))
            x = torch.relu(self.linear_2(x))
            x = torch.relu(self.linear_3(x))
            return torch.sigmoid(self.linear_4(x))

    return NSFWModel()


class MLPScorer:
    """Base of the scorers: finds the weights in ``model_dir``, loads lazily (thread-safe), and
    scores (N, D) embeddings.

    Parameters:
        model_dir: the weights file, its directory, or NeMo Curator's model root.
        device: ``"cpu"``, ``"cuda"`` (CPU when no GPU is present) or ``"auto"``.
    """

    model_id: str = AESTHETIC_MODEL_ID
    weights_name: str = WEIGHTS_NAME
    maker: str = "make_tiny_aesthetic_model"

    def __init__(self, model_dir: str, device: str = "cpu") -> None:
        self.weights_path = self.find_weights(model_dir)
        self.model_dir = model_dir
        self.device = device
        self._model: Any = None

    def find_weights(self, model_dir: str) -> str:
        """The weights file for ``model_dir`` (see the class docstring); a clear error if none."""
        candidates = [model_dir, os.path.join(model_dir, self.weights_name),
                      os.path.join(model_dir, *self.model_id.split("/"), self.weights_name)]
        for path in candidates:
            if os.path.isfile(path):
                return path
        raise FileNotFoundError(
            f"{type(self).__name__}: no {self.weights_name} at {model_dir!r} (looked for "
            f"{candidates[1:]}); download {self.model_id} there, or build a test one with "
            f"curator_image.testing.{self.maker}")

    def load(self) -> None:
        """Load the model (idempotent, thread-safe)."""
        from curator_image.models import LOAD_LOCK

        with LOAD_LOCK:
            if self._model is None:
                import torch

                from curator_image.models.clip import resolve_device

                model, self.embed_dim = self._build()
                self.device = resolve_device(self.device)
                self._model = model.to(self.device).eval()
                self._torch = torch

    def _build(self) -> tuple[Any, int]:
        """(module with weights loaded, embedding width)."""
        from safetensors.torch import load_file

        state = load_file(self.weights_path)
        config_path = os.path.join(os.path.dirname(self.weights_path), CONFIG_NAME)
        if not any(k.startswith("layers.") for k in state) and os.path.isfile(config_path):
            with open(config_path) as fh:  # an earlier Curator MLP directory
                cfg = json.load(fh)
            model = build_mlp(int(cfg["embed_dim"]), cfg.get("hidden"), bool(cfg.get("sigmoid")))
            model.load_state_dict(state)
            return model, int(cfg["embed_dim"])
        inner = {k.removeprefix("layers."): v for k, v in state.items()}
        if len(inner) != len(state):
            raise ValueError(f"{type(self).__name__}: {self.weights_path} is not the aesthetic "
                             f"predictor layout (keys under 'layers.')")
        model = _mlp_from_state(inner)
        model.load_state_dict(inner)
        return model, int(inner["0.weight"].shape[1])

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
    """The LAION improved aesthetic predictor (higher is more aesthetic; about 1-10)."""


class NSFWScorer(MLPScorer):
    """LAION's CLIP-based NSFW detector: a probability in [0, 1] (higher is more likely NSFW)."""

    model_id = NSFW_MODEL_ID
    weights_name = NSFW_WEIGHTS_NAME
    maker = "make_tiny_nsfw_model"

    def _build(self) -> tuple[Any, int]:
        import torch

        state = torch.load(self.weights_path, map_location="cpu", weights_only=True)
        if "norm.mean" not in state:
            raise ValueError(f"NSFWScorer: {self.weights_path} is not the LAION NSFW detector "
                             f"layout (norm.mean, norm.variance, linear_1..linear_4)")
        dim = int(state["norm.mean"].shape[-1])
        model = build_nsfw_model(dim)
        model.load_state_dict({k: v.reshape(-1) if k.startswith("norm.") else v
                               for k, v in state.items()})
        return model, dim


def save_mlp_model(model: Any, path: str) -> str:
    """Save a :func:`build_mlp` model (no sigmoid) in the published aesthetic layout:
    ``path/model.safetensors`` with keys under ``layers.``. Returns ``path``."""
    from safetensors.torch import save_file

    os.makedirs(path, exist_ok=True)
    save_file({f"layers.{k}": v.contiguous() for k, v in model.state_dict().items()},
              os.path.join(path, WEIGHTS_NAME))
    return path
