"""EmbeddingCreatorStage with a tiny random-weight BERT saved to a local directory."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from curator import Pipeline
from curator_text.tasks import DocumentBatch

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "far", "away", "a", "big", "red"]


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from transformers import BertConfig, BertModel, BertTokenizer

    d = tmp_path_factory.mktemp("tiny_bert")
    vocab = d / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    BertTokenizer(str(vocab)).save_pretrained(str(d))
    config = BertConfig(vocab_size=5 + len(WORDS), hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    BertModel(config).save_pretrained(str(d))
    return str(d)


def test_embeds_documents_normalised_and_deterministic(tiny_bert, monkeypatch) -> None:
    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    from curator_text.embedders import EmbeddingCreatorStage

    texts = ["the cat sat on the mat", "the cat sat on the mat", "a big red dog ran far away",
             None]
    batch = DocumentBatch(task_id="b0", dataset_name="t",
                          data=pa.table({"id": [1, 2, 3, 4], "text": texts}))
    stage = EmbeddingCreatorStage(model_dir=tiny_bert, model_inference_batch_size=2)
    out = Pipeline("embed", stages=[stage]).run(initial_tasks=[batch])
    emb = np.array(out[0].to_pyarrow().column("embeddings").to_pylist())
    assert emb.shape == (4, 16)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert np.allclose(emb[0], emb[1], atol=1e-5) and not np.allclose(emb[0], emb[2], atol=1e-3)
    # padding does not change a document's embedding (mean pooling over the attention mask)
    alone = stage.embed(["the cat sat on the mat"])
    assert np.allclose(alone[0], emb[0], atol=1e-5)


def test_semantic_dedup_of_embedded_texts(tiny_bert) -> None:
    from curator.dedup.semantic import find_semantic_duplicates
    from curator_text.embedders import EmbeddingCreatorStage

    stage = EmbeddingCreatorStage(tiny_bert)
    emb = np.array(stage.embed(["the cat sat", "a big dog", "the cat sat", "red mat far away"]))
    assert find_semantic_duplicates(emb, eps=1e-4, n_clusters=2).tolist() == [False, False,
                                                                               True, False]


def test_config_errors(tmp_path) -> None:
    from curator_text.embedders import EmbeddingCreatorStage

    with pytest.raises(ValueError, match="model_identifier"):
        EmbeddingCreatorStage()
    with pytest.raises(ValueError, match="not a local directory"):
        EmbeddingCreatorStage(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="embedding_pooling"):
        EmbeddingCreatorStage(str(tmp_path), embedding_pooling="max")


def test_importing_does_not_load_torch() -> None:
    code = ("import sys, curator_text.embedders, curator_text.dedup, curator.dedup; "
            "bad = [m for m in ('torch', 'transformers', 'ray') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
