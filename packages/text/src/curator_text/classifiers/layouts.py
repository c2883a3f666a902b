"""The PyTorch modules of NVIDIA's published DeBERTa classifiers, in their checkpoint layout:
``config.json`` (``base_model``, heads' settings, labels) + ``model.safetensors`` whose keys are
``model.*`` + ``fc.*`` (:class:`DebertaHeadModel`, e.g. nvidia/quality-classifier-deberta) or
``backbone.*`` + ``head_<i>.fc.*`` (:class:`MultiHeadDebertaModel`,
nvidia/prompt-task-and-complexity-classifier). The backbone is built from its config only; the
weights all come from ``model.safetensors``, so nothing is downloaded. Torch is imported lazily."""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["KNOWN_BACKBONES", "backbone_config", "read_config", "WEIGHTS_NAME", "CONFIG_NAME",
           "DebertaHeadModel", "MultiHeadDebertaModel"]  # noqa: F822 - built lazily

WEIGHTS_NAME = "model.safetensors"
CONFIG_NAME = "config.json"

_DEBERTA_V3 = {"model_type": "deberta-v2", "hidden_size": 768, "num_hidden_layers": 12,
               "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu",
               "max_position_embeddings": 512, "type_vocab_size": 0, "relative_attention": True,
               "position_buckets": 256, "norm_rel_ebd": "layer_norm",
               "share_att_key": True, "pos_att_type": ["p2c", "c2p"],
               "position_biased_input": False, "layer_norm_eps": 1e-7, "max_relative_positions": -1,
               "pad_token_id": 0, "vocab_size": 128100}
KNOWN_BACKBONES: dict[str, dict[str, Any]] = {
    "microsoft/deberta-v3-base": _DEBERTA_V3,
    "microsoft/deberta-v3-large": {**_DEBERTA_V3, "hidden_size": 1024, "num_hidden_layers": 24,
                                   "num_attention_heads": 16, "intermediate_size": 4096},
    "microsoft/mdeberta-v3-base": {**_DEBERTA_V3, "vocab_size": 251000},
}
"""Backbone configs of the public checkpoints' ``base_model`` (so no hub access is needed)."""


def read_config(model_dir: str) -> dict[str, Any]:
    """The ``config.json`` of a model directory as a dict."""
    path = os.path.join(model_dir, CONFIG_NAME)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{model_dir}: no {CONFIG_NAME}; expected a directory saved with "
                                f"save_pretrained()")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def backbone_config(base_model: str, model_dir: str) -> Any:
    """The transformers config of ``base_model``: a local directory (absolute or relative to
    ``model_dir``), a name in :data:`KNOWN_BACKBONES`, or a model already in the Hugging Face
    cache."""
    from transformers import AutoConfig

    for cand in (base_model, os.path.join(model_dir, base_model)):
        if os.path.isdir(cand):
            return AutoConfig.from_pretrained(cand, local_files_only=True)
    if base_model in KNOWN_BACKBONES:
        cfg = dict(KNOWN_BACKBONES[base_model])
        return AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    try:
        return AutoConfig.from_pretrained(base_model, local_files_only=True)
    except OSError as e:
        raise ValueError(f"{model_dir}: config.json names base_model={base_model!r}, which is "
                         f"neither a local directory, nor one of {sorted(KNOWN_BACKBONES)}, nor "
                         f"in the Hugging Face cache; set base_model to a local directory "
                         f"holding the backbone's config.json") from e


def _module_base() -> type:
    import torch

    return torch.nn.Module


class _Saveable:
    """``save_pretrained`` / ``from_pretrained`` in the published layout (config dict as
    ``config.json``, weights as ``model.safetensors``, strict key match)."""

    config: dict[str, Any]

    def save_pretrained(self, path: str) -> None:
        from safetensors.torch import save_model

        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, CONFIG_NAME), "w", encoding="utf-8") as f:
            json.dump(self.config, f, indent=2)
        save_model(self, os.path.join(path, WEIGHTS_NAME))  # type: ignore[arg-type]

    @classmethod
    def from_pretrained(cls, path: str) -> Any:
        from safetensors.torch import load_model

        weights = os.path.join(path, WEIGHTS_NAME)
        if not os.path.isfile(weights):
            raise FileNotFoundError(f"{path}: no {WEIGHTS_NAME} (NVIDIA's classifier layout: "
                                    f"config.json + model.safetensors)")
        model = cls(read_config(path), model_dir=path)
        load_model(model, weights, strict=True)
        return model


def _backbone(config: dict[str, Any], model_dir: str) -> Any:
    from transformers import AutoModel

    if "base_model" not in config:
        raise ValueError(f"{model_dir}: config.json has no 'base_model' (NVIDIA's DeBERTa "
                         f"classifier layout); use HFClassifier for AutoModel checkpoints")
    return AutoModel.from_config(backbone_config(config["base_model"], model_dir))


def _make_classes() -> tuple[type, type]:
    import torch
    from torch import nn

    class _DebertaHeadModel(nn.Module, _Saveable):
        def __init__(self, config: dict[str, Any], model_dir: str = ".") -> None:
            super().__init__()
            self.config = config
            self.model = _backbone(config, model_dir)
            self.dropout = nn.Dropout(config.get("fc_dropout", 0.0))
            self.fc = nn.Linear(self.model.config.hidden_size, len(config["id2label"]))

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            return torch.softmax(self.fc(self.dropout(hidden))[:, 0, :].float(), dim=1)

    class _MultiHeadDebertaModel(nn.Module, _Saveable):
        def __init__(self, config: dict[str, Any], model_dir: str = ".") -> None:
            super().__init__()
            self.config = config
            self.backbone = _backbone(config, model_dir)
            sizes = list(config["target_sizes"].values())
            for i, n in enumerate(sizes):
                head = nn.Module()
                head.fc = nn.Linear(self.backbone.config.hidden_size, n)
                self.add_module(f"head_{i}", head)
            self.n_heads = len(sizes)

        def forward(self, input_ids: Any, attention_mask: Any) -> list[Any]:
            hidden = self.backbone(input_ids=input_ids,
                                   attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return [getattr(self, f"head_{i}").fc(pooled).float() for i in range(self.n_heads)]

    _DebertaHeadModel.__name__ = _DebertaHeadModel.__qualname__ = "DebertaHeadModel"
    _MultiHeadDebertaModel.__name__ = _MultiHeadDebertaModel.__qualname__ = "MultiHeadDebertaModel"
    return _DebertaHeadModel, _MultiHeadDebertaModel


_CLASSES: tuple[type, type] | None = None


def __getattr__(name: str) -> Any:
    """``DebertaHeadModel`` / ``MultiHeadDebertaModel`` are built on first use (torch is heavy)."""
    global _CLASSES
    if name in ("DebertaHeadModel", "MultiHeadDebertaModel"):
        if _CLASSES is None:
            _CLASSES = _make_classes()
        return _CLASSES[0 if name == "DebertaHeadModel" else 1]
    raise AttributeError(name)
