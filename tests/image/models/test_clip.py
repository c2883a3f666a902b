import numpy as np
import pytest
from curator_image.models.clip import ClipImageEmbedder
from curator_image.testing import TINY_CLIP_EMBED_DIM, make_image


def test_embeddings_are_normalised_and_identical_images_match(clip_dir):
    emb = ClipImageEmbedder(clip_dir).embed([make_image(0), make_image(1), make_image(0)])
    assert emb.shape == (3, TINY_CLIP_EMBED_DIM) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(emb[0], emb[2], rtol=1e-5, atol=1e-6)
    assert not np.allclose(emb[0], emb[1])


def test_batching_does_not_change_embeddings(clip_dir):
    images = [make_image(i, size=(30 + i, 50)) for i in range(4)]
    whole = ClipImageEmbedder(clip_dir).embed(images)
    one_by_one = np.concatenate([ClipImageEmbedder(clip_dir).embed([im]) for im in images])
    np.testing.assert_allclose(whole, one_by_one, atol=1e-5)


def test_cuda_request_falls_back_to_cpu_without_gpu(clip_dir):
    import torch

    e = ClipImageEmbedder(clip_dir, device="cuda")
    e.load()
    assert e.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert e.embed([]).shape == (0, TINY_CLIP_EMBED_DIM)


def test_missing_model_dir_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="save_pretrained"):
        ClipImageEmbedder(str(tmp_path))


def test_vit_l14_layout_from_a_nemo_model_root(tmp_path):
    """A CLIPModel directory with ViT-L/14's config and state-dict keys (tiny widths), found
    where NeMo Curator keeps it: <model_dir>/openai/clip-vit-large-patch14."""
    import json
    import os

    from curator_image.testing import make_tiny_clip_model
    from safetensors import safe_open

    nested = make_tiny_clip_model(str(tmp_path / "openai" / "clip-vit-large-patch14"),
                                  image_size=28, patch_size=14)
    cfg = json.load(open(os.path.join(nested, "config.json")))
    assert cfg["model_type"] == "clip" and cfg["vision_config"]["patch_size"] == 14
    assert cfg["vision_config"]["hidden_act"] == "quick_gelu"
    with safe_open(os.path.join(nested, "model.safetensors"), "pt") as fh:
        keys = set(fh.keys())
    assert {"visual_projection.weight", "vision_model.pre_layrnorm.weight",
            "vision_model.embeddings.patch_embedding.weight",
            "vision_model.encoder.layers.0.self_attn.q_proj.weight"} <= keys
    root = ClipImageEmbedder(str(tmp_path))
    assert root.hf_dir == nested
    np.testing.assert_allclose(root.embed([make_image(5)]),
                               ClipImageEmbedder(nested).embed([make_image(5)]), atol=1e-6)
