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
