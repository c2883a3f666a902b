"""Helpers for tests and examples: tiny random-weight models and generated WebDataset shards.

torch, transformers and PIL are imported inside the functions.
"""

from __future__ import annotations

import io
import json
import os
import tarfile

import numpy as np

__all__ = ["make_tiny_clip_model", "make_tiny_aesthetic_model", "make_tiny_nsfw_model",
           "make_image", "encode_image", "make_webdataset_shards", "TINY_CLIP_EMBED_DIM"]

TINY_CLIP_EMBED_DIM = 16


def make_tiny_clip_model(path: str, *, image_size: int = 32, projection_dim: int = 16,
                         seed: int = 0) -> str:
    """Build a tiny random-weight ``CLIPModel`` + ``CLIPImageProcessor`` and ``save_pretrained``
    them to ``path`` (idempotent: an existing model there is reused). Returns ``path``."""
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
                           num_attention_heads=2, image_size=image_size, patch_size=8),
        projection_dim=projection_dim)
    CLIPModel(config).eval().save_pretrained(path)
    CLIPImageProcessor(size={"shortest_edge": image_size},
                       crop_size={"height": image_size, "width": image_size}).save_pretrained(path)
    return path


def _make_mlp(path: str, embed_dim: int, sigmoid: bool, seed: int) -> str:
    if os.path.isfile(os.path.join(path, "config.json")):
        return path
    import torch

    from curator_image.models.aesthetic import build_mlp, save_mlp_model

    hidden = [32, 16]
    torch.manual_seed(seed)
    return save_mlp_model(build_mlp(embed_dim, hidden, sigmoid), path, embed_dim, hidden, sigmoid)


def make_tiny_aesthetic_model(path: str, embed_dim: int) -> str:
    """Build and save a small random aesthetic MLP over ``embed_dim`` embeddings; returns ``path``."""
    return _make_mlp(path, embed_dim, sigmoid=False, seed=1)


def make_tiny_nsfw_model(path: str, embed_dim: int) -> str:
    """Build and save a small random NSFW MLP (sigmoid output in [0, 1]); returns ``path``."""
    return _make_mlp(path, embed_dim, sigmoid=True, seed=2)


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
