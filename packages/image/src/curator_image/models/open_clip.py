"""OpenCLIP ViT checkpoints mapped onto transformers' ``CLIPVisionModelWithProjection``.

An OpenCLIP checkpoint (``open_clip_pytorch_model.bin`` or ``open_clip_model.safetensors``, e.g.
``laion/CLIP-ViT-L-14-laion2B-s32B-b82K``) is a ``state_dict`` whose image tower sits under
``visual.``: ``conv1``, ``class_embedding``, ``positional_embedding``, ``ln_pre``,
``transformer.resblocks.{i}.{ln_1, attn.in_proj_*, attn.out_proj, ln_2, mlp.c_fc, mlp.c_proj}``,
``ln_post`` and ``proj``. The architecture (width, depth, patch and image size, MLP width,
embedding size) is read from the tensor shapes; heads are ``width / 64`` as in every OpenCLIP ViT.
The text tower is not loaded (only image embeddings are computed).

We map the keys instead of depending on ``open_clip``: one inference path (transformers) for both
formats, and no extra dependency tree (timm, ftfy) on the workers.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["OPEN_CLIP_FILES", "find_open_clip_checkpoint", "load_open_clip_state",
           "open_clip_to_hf", "open_clip_vision_config"]

OPEN_CLIP_FILES = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")


def find_open_clip_checkpoint(model_dir: str) -> str | None:
    """The checkpoint file for ``model_dir`` (the file itself, or one of :data:`OPEN_CLIP_FILES`
    inside it), else None."""
    if os.path.isfile(model_dir):
        return model_dir
    for name in OPEN_CLIP_FILES:
        if os.path.isfile(os.path.join(model_dir, name)):
            return os.path.join(model_dir, name)
    return None


def load_open_clip_state(path: str) -> dict[str, Any]:
    """The checkpoint's ``state_dict`` (unwrapping ``{"state_dict": ...}`` and ``module.``)."""
    if path.endswith(".safetensors"):
        from safetensors.torch import load_file

        state = load_file(path)
    else:
        import torch

        state = torch.load(path, map_location="cpu", weights_only=True)
    if "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    state = {k.removeprefix("module."): v for k, v in state.items()}
    if "visual.conv1.weight" not in state:
        raise ValueError(f"{path}: not an OpenCLIP ViT checkpoint (no visual.conv1.weight; "
                         f"ResNet and timm towers are not supported)")
    return state


def open_clip_vision_config(state: dict[str, Any], quick_gelu: bool = False) -> dict[str, Any]:
    """``CLIPVisionConfig`` arguments read from the tensor shapes of an OpenCLIP ViT."""
    width, _, patch, _ = state["visual.conv1.weight"].shape
    n_pos = state["visual.positional_embedding"].shape[0]
    grid = int(round((n_pos - 1) ** 0.5))
    layers = 1 + max(int(k.split(".")[3]) for k in state
                     if k.startswith("visual.transformer.resblocks."))
    return {"hidden_size": int(width), "patch_size": int(patch), "image_size": int(grid * patch),
            "num_hidden_layers": layers, "num_attention_heads": max(1, int(width) // 64),
            "intermediate_size": int(state["visual.transformer.resblocks.0.mlp.c_fc.weight"].shape[0]),
            "projection_dim": int(state["visual.proj"].shape[1]), "layer_norm_eps": 1e-5,
            "hidden_act": "quick_gelu" if quick_gelu else "gelu"}


def open_clip_to_hf(state: dict[str, Any]) -> dict[str, Any]:
    """The image tower of an OpenCLIP ``state_dict`` renamed to
    ``CLIPVisionModelWithProjection`` keys (attention ``in_proj`` split into q, k, v)."""
    out: dict[str, Any] = {
        "vision_model.embeddings.class_embedding": state["visual.class_embedding"],
        "vision_model.embeddings.position_embedding.weight": state["visual.positional_embedding"],
        "vision_model.embeddings.patch_embedding.weight": state["visual.conv1.weight"],
        "visual_projection.weight": state["visual.proj"].t().contiguous(),
    }
    for ours, theirs in (("pre_layrnorm", "ln_pre"), ("post_layernorm", "ln_post")):
        for p in ("weight", "bias"):
            out[f"vision_model.{ours}.{p}"] = state[f"visual.{theirs}.{p}"]
    prefix = "visual.transformer.resblocks."
    blocks = sorted({int(k[len(prefix):].split(".")[0]) for k in state if k.startswith(prefix)})
    names = {"ln_1": "layer_norm1", "ln_2": "layer_norm2", "attn.out_proj": "self_attn.out_proj",
             "mlp.c_fc": "mlp.fc1", "mlp.c_proj": "mlp.fc2"}
    for i in blocks:
        src, dst = f"{prefix}{i}.", f"vision_model.encoder.layers.{i}."
        for theirs, ours in names.items():
            for p in ("weight", "bias"):
                out[f"{dst}{ours}.{p}"] = state[f"{src}{theirs}.{p}"]
        for p in ("weight", "bias"):
            q, k, v = state[f"{src}attn.in_proj_{p}"].chunk(3, dim=0)
            out[f"{dst}self_attn.q_proj.{p}"] = q.contiguous()
            out[f"{dst}self_attn.k_proj.{p}"] = k.contiguous()
            out[f"{dst}self_attn.v_proj.{p}"] = v.contiguous()
    return out
