"""CLIP's text tower (curator_image.models.clip_text) next to the image tower: same space as
CLIPModel's own text embeddings, from the published layout."""

import numpy as np
import pytest
from curator_image.models.clip import ClipImageEmbedder
from curator_image.models.clip_text import ClipTextEmbedder
from curator_image.testing import make_image
from curator_interleaved.testing import make_tiny_clip_dir


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    return make_tiny_clip_dir(str(tmp_path_factory.mktemp("clip")))


def test_text_embeddings_equal_clipmodel_text_embeds(clip_dir):
    import torch
    from transformers import AutoTokenizer, CLIPModel

    texts = ["a photo of a cat", "dog", "x" * 100]
    got = ClipTextEmbedder(clip_dir).embed(texts)
    model = CLIPModel.from_pretrained(clip_dir).eval()
    enc = AutoTokenizer.from_pretrained(clip_dir)(texts, padding=True, truncation=True,
                                                  max_length=16, return_tensors="pt")
    with torch.inference_mode():
        ref = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                    pixel_values=torch.zeros(1, 3, 32, 32)).text_embeds
    ref = (ref / ref.norm(dim=-1, keepdim=True)).numpy()
    np.testing.assert_allclose(got, ref, atol=1e-5)
    assert got.shape == (3, 16) and got.dtype == np.float32


def test_image_and_text_towers_share_the_space(clip_dir):
    images = ClipImageEmbedder(clip_dir).embed([make_image(1), make_image(2)])
    texts = ClipTextEmbedder(clip_dir).embed(["one", "two", "three"])
    scores = images @ texts.T
    assert scores.shape == (2, 3) and np.all(np.abs(scores) <= 1.0 + 1e-5)


def test_missing_model_or_tokenizer_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="config.json"):
        ClipTextEmbedder(str(tmp_path))
    from curator_image.testing import make_tiny_clip_model

    bare = make_tiny_clip_model(str(tmp_path / "bare"))  # image processor only
    with pytest.raises(FileNotFoundError, match="no CLIP tokenizer"):
        ClipTextEmbedder(bare).embed(["x"])
