import numpy as np
import pytest
from curator_image.models.aesthetic import AestheticScorer, NSFWScorer
from curator_image.testing import make_tiny_aesthetic_model


def test_scores_are_deterministic_per_embedding(aesthetic_dir):
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(5, 16)).astype(np.float32)
    scores = AestheticScorer(aesthetic_dir).score(emb)
    assert scores.shape == (5,) and scores.dtype == np.float32
    np.testing.assert_allclose(scores, AestheticScorer(aesthetic_dir).score(emb), rtol=1e-6)
    assert len(set(np.round(scores, 6))) > 1


def test_saved_weights_are_what_is_loaded(tmp_path):
    a = make_tiny_aesthetic_model(str(tmp_path / "a"), 8)
    b = make_tiny_aesthetic_model(str(tmp_path / "b"), 8)
    emb = np.ones((2, 8), dtype=np.float32)
    np.testing.assert_allclose(AestheticScorer(a).score(emb), AestheticScorer(b).score(emb))


def test_nsfw_scores_are_probabilities(nsfw_dir):
    s = NSFWScorer(nsfw_dir).score(np.random.default_rng(1).normal(size=(4, 16)))
    assert ((s >= 0) & (s <= 1)).all()


def test_wrong_embedding_size_is_a_clear_error(aesthetic_dir):
    with pytest.raises(ValueError, match=r"shape \(N, 16\)"):
        AestheticScorer(aesthetic_dir).score(np.zeros((2, 3)))


def test_missing_weights(tmp_path):
    with pytest.raises(FileNotFoundError, match="make_tiny_aesthetic_model"):
        AestheticScorer(str(tmp_path))


def test_aesthetic_published_layout_and_nemo_root(tmp_path):
    """model.safetensors with the keys of ttj/sac-logos-ava1-l14-linearMSE, found directly or
    under NeMo Curator's <model_dir>/ttj/sac-logos-ava1-l14-linearMSE/."""
    import os

    import torch
    from safetensors.torch import load_file

    nested = make_tiny_aesthetic_model(str(tmp_path / "ttj" / "sac-logos-ava1-l14-linearMSE"), 8)
    state = load_file(os.path.join(nested, "model.safetensors"))
    assert {k: tuple(v.shape) for k, v in state.items()} == {
        "layers.0.weight": (1024, 8), "layers.0.bias": (1024,),
        "layers.2.weight": (128, 1024), "layers.2.bias": (128,),
        "layers.4.weight": (64, 128), "layers.4.bias": (64,),
        "layers.6.weight": (16, 64), "layers.6.bias": (16,),
        "layers.7.weight": (1, 16), "layers.7.bias": (1,)}
    emb = np.random.default_rng(3).normal(size=(3, 8)).astype(np.float32)
    x = torch.from_numpy(emb)
    for i in (0, 2, 4, 6, 7):   # the predictor is purely linear (no activations)
        x = x @ state[f"layers.{i}.weight"].T + state[f"layers.{i}.bias"]
    for where in (str(tmp_path), nested, os.path.join(nested, "model.safetensors")):
        np.testing.assert_allclose(AestheticScorer(where).score(emb), x[:, 0].numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_nsfw_published_layout_standardises_then_sigmoid(tmp_path):
    """clip_autokeras_binary_nsfw.pth with LAION's module names, under NeMo's
    <model_dir>/laion/clip-autokeras-binary-nsfw/."""
    import os

    import torch
    from curator_image.testing import make_tiny_nsfw_model

    nested = make_tiny_nsfw_model(str(tmp_path / "laion" / "clip-autokeras-binary-nsfw"), 8)
    state = torch.load(os.path.join(nested, "clip_autokeras_binary_nsfw.pth"))
    assert {k: tuple(v.shape) for k, v in state.items()} == {
        "norm.mean": (8,), "norm.variance": (8,),
        "linear_1.weight": (64, 8), "linear_1.bias": (64,),
        "linear_2.weight": (512, 64), "linear_2.bias": (512,),
        "linear_3.weight": (256, 512), "linear_3.bias": (256,),
        "linear_4.weight": (1, 256), "linear_4.bias": (1,)}
    emb = np.random.default_rng(4).normal(size=(5, 8)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    x = (torch.from_numpy(emb) - state["norm.mean"]) / state["norm.variance"].sqrt()
    for i in (1, 2, 3):
        x = torch.relu(x @ state[f"linear_{i}.weight"].T + state[f"linear_{i}.bias"])
    expected = torch.sigmoid(x @ state["linear_4.weight"].T + state["linear_4.bias"])[:, 0]
    got = NSFWScorer(str(tmp_path)).score(emb)
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-4, atol=1e-6)
    assert got.std() > 0
    with pytest.raises(FileNotFoundError, match="clip-autokeras-binary-nsfw"):
        NSFWScorer(str(tmp_path / "nowhere"))
