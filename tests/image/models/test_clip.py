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
