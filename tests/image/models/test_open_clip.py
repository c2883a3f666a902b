"""OpenCLIP ViT checkpoints loaded by mapping their keys onto transformers' CLIP vision model.
The oracle is an independent OpenCLIP-style tower (nn.MultiheadAttention blocks, the same
parameter names) whose state_dict is the checkpoint."""

import os

import numpy as np
import pytest
import torch
from curator_image.models.clip import ClipImageEmbedder
from curator_image.models.open_clip import load_open_clip_state, open_clip_vision_config
from curator_image.testing import (
    make_image,
    make_tiny_open_clip_checkpoint,
    open_clip_vision_reference,
)

ARCH = {"width": 32, "layers": 2, "patch": 14, "image_size": 28, "mlp": 64, "embed_dim": 16}


def _reference_embeddings(emb: ClipImageEmbedder, images, seed=0):
    torch.manual_seed(seed)
    tower = open_clip_vision_reference(**ARCH).eval()
    state = load_open_clip_state(emb.open_clip_file)
    tower.load_state_dict({k.removeprefix("visual."): v for k, v in state.items()
                           if k.startswith("visual.")})
    with torch.inference_mode():
        out = tower(emb.preprocess(images))
    return (out / out.norm(dim=-1, keepdim=True)).numpy()


@pytest.mark.parametrize("name", ["open_clip_pytorch_model.bin", "open_clip_model.safetensors"])
def test_open_clip_checkpoint_embeds_like_the_reference_tower(tmp_path, name):
    path = make_tiny_open_clip_checkpoint(str(tmp_path / "laion-vit" / name), **ARCH)
    images = [make_image(0), make_image(1, size=(60, 30)), make_image(2)]
    for where in (path, os.path.dirname(path)):          # the file, or its directory
        emb = ClipImageEmbedder(where)
        got = emb.embed(images)
        assert got.shape == (3, 16)
        np.testing.assert_allclose(got, _reference_embeddings(emb, images), atol=1e-5)
    assert not np.allclose(got[0], got[1])


def test_architecture_is_read_from_the_shapes(tmp_path):
    path = make_tiny_open_clip_checkpoint(str(tmp_path / "c.bin"), **ARCH)
    cfg = open_clip_vision_config(load_open_clip_state(path))
    assert cfg == {"hidden_size": 32, "patch_size": 14, "image_size": 28, "num_hidden_layers": 2,
                   "num_attention_heads": 1, "intermediate_size": 64, "projection_dim": 16,
                   "layer_norm_eps": 1e-5, "hidden_act": "gelu"}
    assert open_clip_vision_config(load_open_clip_state(path), quick_gelu=True)["hidden_act"] \
        == "quick_gelu"
    # a module.-prefixed, {"state_dict": ...}-wrapped checkpoint loads the same
    wrapped = str(tmp_path / "wrapped.bin")
    torch.save({"state_dict": {f"module.{k}": v for k, v in torch.load(path).items()}}, wrapped)
    np.testing.assert_allclose(ClipImageEmbedder(wrapped).embed([make_image(3)]),
                               ClipImageEmbedder(path).embed([make_image(3)]), atol=1e-6)


def test_not_a_vit_checkpoint_is_a_clear_error(tmp_path):
    bad = str(tmp_path / "open_clip_pytorch_model.bin")
    torch.save({"visual.trunk.stem.weight": torch.zeros(1)}, bad)
    with pytest.raises(ValueError, match="not an OpenCLIP ViT checkpoint"):
        ClipImageEmbedder(bad).embed([make_image(0)])
