"""Helpers for tests and examples: tiny random-weight models and generated WebDataset shards.

torch, transformers and PIL are imported inside the functions.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from typing import Any

import numpy as np

__all__ = ["make_tiny_clip_model", "make_tiny_open_clip_checkpoint", "open_clip_vision_reference", "make_tiny_aesthetic_model", "make_tiny_nsfw_model",
           "make_tiny_model_dir", "make_image", "encode_image", "make_webdataset_shards",
           "TINY_CLIP_EMBED_DIM"]

TINY_CLIP_EMBED_DIM = 16


def make_tiny_clip_model(path: str, *, image_size: int = 32, projection_dim: int = 16,
                         seed: int = 0, patch_size: int = 8) -> str:
    """Build a tiny random-weight ``CLIPModel`` + ``CLIPImageProcessor`` and ``save_pretrained``
    them to ``path`` (idempotent: an existing model there is reused). The config keys and
    state-dict keys are those of ``openai/clip-vit-large-patch14`` (ViT, QuickGELU, pre- and
    post-LayerNorm, projection); pass ``patch_size=14`` for its patch size. Returns ``path``."""
    if os.path.isfile(os.path.join(path, "config.json")):
        return path
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    torch.manual_seed(seed)
    config = CLIPConfig(
        text_config=dict(hidden_size=32, intermediate_size=37, num_hidden_layers=1,
                         num_attention_heads=2, vocab_size=99, max_position_embeddings=16,
                         bos_token_id=0, eos_token_id=1, pad_token_id=1),
        vision_config=dict(hidden_size=32, intermediate_size=37, num_hidden_layers=1,
                           num_attention_heads=2, image_size=image_size,
                           patch_size=patch_size),
        projection_dim=projection_dim)
    CLIPModel(config).eval().save_pretrained(path)
    CLIPImageProcessor(size={"shortest_edge": image_size},
                       crop_size={"height": image_size, "width": image_size}).save_pretrained(path)
    return path


def open_clip_vision_reference(width: int = 32, layers: int = 2, patch: int = 14,
                            image_size: int = 28, mlp: int = 64, embed_dim: int = 16) -> Any:
    """An independent re-statement of OpenCLIP's ViT image tower (``open_clip.transformer.
    VisionTransformer``: ``conv1``, ``class_embedding``, ``positional_embedding``, ``ln_pre``,
    residual blocks of ``nn.MultiheadAttention`` + ``mlp.c_fc``/GELU/``mlp.c_proj``, ``ln_post``
    on the class token, ``@ proj``), with the same parameter names. Its ``state_dict()`` under
    ``visual.`` is an OpenCLIP checkpoint's image tower; its output is the oracle for the key
    mapping. Heads: ``width // 64`` (at least 1), as OpenCLIP."""
    import torch
    import torch.nn as nn

    heads = max(1, width // 64)

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(width)
            self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
            self.ln_2 = nn.LayerNorm(width)
            self.mlp = nn.Sequential()
            self.mlp.add_module("c_fc", nn.Linear(width, mlp))
            self.mlp.add_module("gelu", nn.GELU())
            self.mlp.add_module("c_proj", nn.Linear(mlp, width))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.ln_1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(self.ln_2(x))

    class Tower(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            n = (image_size // patch) ** 2
            self.conv1 = nn.Conv2d(3, width, patch, patch, bias=False)
            self.class_embedding = nn.Parameter(torch.randn(width) * width ** -0.5)
            self.positional_embedding = nn.Parameter(torch.randn(n + 1, width) * width ** -0.5)
            self.ln_pre = nn.LayerNorm(width)
            self.transformer = nn.Module()
            self.transformer.resblocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_post = nn.LayerNorm(width)
            self.proj = nn.Parameter(torch.randn(width, embed_dim) * width ** -0.5)

        def forward(self, pixels: torch.Tensor) -> torch.Tensor:
            x = self.conv1(pixels).flatten(2).transpose(1, 2)
            cls = self.class_embedding.expand(x.shape[0], 1, -1)
            x = self.ln_pre(torch.cat([cls, x], dim=1) + self.positional_embedding)
            for block in self.transformer.resblocks:
                x = block(x)
            return self.ln_post(x[:, 0]) @ self.proj

    return Tower()


def make_tiny_open_clip_checkpoint(path: str, seed: int = 0, **arch: int) -> str:
    """Save a tiny random OpenCLIP-layout checkpoint at ``path`` (a file such as
    ``.../open_clip_pytorch_model.bin``; ``.safetensors`` suffix: safetensors): the
    :func:`open_clip_vision_reference` tower under ``visual.`` plus a token embedding standing in
    for the (unused) text tower. ``arch``: the reference's size arguments. Returns ``path``."""
    import torch

    torch.manual_seed(seed)
    tower = open_clip_vision_reference(**arch)
    state = {f"visual.{k}": v.detach().clone() for k, v in tower.state_dict().items()}
    state["token_embedding.weight"] = torch.randn(10, 8)
    state["logit_scale"] = torch.tensor(4.6)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if path.endswith(".safetensors"):
        from safetensors.torch import save_file

        save_file({k: v.contiguous() for k, v in state.items()}, path)
    else:
        torch.save(state, path)
    return path


def make_tiny_aesthetic_model(path: str, embed_dim: int, seed: int = 1) -> str:
    """Save a random-weight LAION aesthetic predictor over ``embed_dim`` embeddings in the
    published layout (``path/model.safetensors``, keys ``layers.0`` ... ``layers.7``, hidden
    sizes 1024/128/64/16) - what ``ttj/sac-logos-ava1-l14-linearMSE`` holds for 768-d CLIP
    ViT-L/14 embeddings. Idempotent. Returns ``path``."""
    from curator_image.models.aesthetic import WEIGHTS_NAME, build_mlp, save_mlp_model

    if os.path.isfile(os.path.join(path, WEIGHTS_NAME)):
        return path
    import torch

    torch.manual_seed(seed)
    return save_mlp_model(build_mlp(embed_dim), path)


def make_tiny_nsfw_model(path: str, embed_dim: int, seed: int = 2) -> str:
    """Save a random-weight LAION NSFW detector over ``embed_dim`` embeddings in the published
    layout (``path/clip_autokeras_binary_nsfw.pth``: ``norm.mean``, ``norm.variance``,
    ``linear_1`` ... ``linear_4``), with a non-trivial input standardisation. Idempotent.
    Returns ``path``."""
    from curator_image.models.aesthetic import NSFW_WEIGHTS_NAME, build_nsfw_model

    target = os.path.join(path, NSFW_WEIGHTS_NAME)
    if os.path.isfile(target):
        return path
    import torch

    torch.manual_seed(seed)
    model = build_nsfw_model(embed_dim)
    model.norm.mean.uniform_(-0.05, 0.05)
    model.norm.variance.uniform_(0.001, 0.01)
    os.makedirs(path, exist_ok=True)
    torch.save(model.state_dict(), target)
    return path


def make_tiny_model_dir(root: str) -> str:
    """Fill ``root`` the way NeMo Curator's image ``model_dir`` is laid out, one folder per hub
    id: a tiny CLIP under ``openai/clip-vit-large-patch14``, the aesthetic predictor under
    ``ttj/sac-logos-ava1-l14-linearMSE`` and the NSFW detector under
    ``laion/clip-autokeras-binary-nsfw`` (random weights, published layouts, over the tiny
    CLIP's embeddings). Every image model stage then takes ``model_dir=root``. Idempotent.
    Returns ``root``."""
    from curator_image.models.aesthetic import AESTHETIC_MODEL_ID, NSFW_MODEL_ID
    from curator_image.models.clip import HF_CLIP_MODEL_ID

    make_tiny_clip_model(os.path.join(root, *HF_CLIP_MODEL_ID.split("/")),
                         projection_dim=TINY_CLIP_EMBED_DIM)
    make_tiny_aesthetic_model(os.path.join(root, *AESTHETIC_MODEL_ID.split("/")),
                              TINY_CLIP_EMBED_DIM)
    make_tiny_nsfw_model(os.path.join(root, *NSFW_MODEL_ID.split("/")), TINY_CLIP_EMBED_DIM)
    return root


def make_image(seed: int, size: tuple[int, int] = (48, 40)) -> np.ndarray:
    """A deterministic HxWx3 uint8 RGB image (smooth gradient plus noise) for ``seed``."""
    rng = np.random.default_rng(seed)
    h, w = size
    base = rng.integers(0, 256, size=3)
    yy, xx = np.mgrid[0:h, 0:w]
    img = (base + rng.integers(1, 6) * yy[..., None] + rng.integers(1, 6) * xx[..., None]
           + rng.integers(0, 40, size=(h, w, 3)))
    return (img % 256).astype(np.uint8)


def encode_image(array: np.ndarray, fmt: str = "JPEG") -> bytes:
    """Encode an RGB array as image bytes (JPEG or PNG)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format=fmt, quality=95) if fmt == "JPEG" else \
        Image.fromarray(array).save(buf, format=fmt)
    return buf.getvalue()


def make_webdataset_shards(out_dir: str, *, n_shards: int = 2, per_shard: int = 8,
                           duplicates: int = 0, size: tuple[int, int] = (48, 40),
                           start_seed: int = 0) -> list[str]:
    """Write ``n_shards`` WebDataset tar shards of ``per_shard`` samples (``.jpg`` + ``.txt``
    caption + ``.json`` metadata). The last ``duplicates`` samples of each shard repeat the bytes
    of its first samples (planted exact duplicates). Returns the shard paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for s in range(n_shards):
        path = os.path.join(out_dir, f"{s:05d}.tar")
        blobs: list[bytes] = []
        with tarfile.open(path, "w") as tar:
            for i in range(per_shard):
                if i >= per_shard - duplicates:
                    blob = blobs[i - (per_shard - duplicates)]
                else:
                    blob = encode_image(make_image(start_seed + s * 1000 + i, size))
                blobs.append(blob)
                key = f"{s:05d}{i:04d}"
                for ext, data in (("jpg", blob), ("txt", f"caption {key}".encode()),
                                  ("json", json.dumps({"key": key, "idx": i}).encode())):
                    info = tarfile.TarInfo(f"{key}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        paths.append(path)
    return paths
