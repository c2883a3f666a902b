"""The CUDA path of the classifier model stages, on the tiny checkpoints of conftest.py: with
``Resources(gpus=1)`` the model sits on the GPU, memory is allocated there, and the results
(fp16 autocast by default, and fp32 with ``autocast=False``) agree with the CPU run's. Skipped
without a CUDA GPU."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from curator import Pipeline, Resources
from curator_text.tasks import DocumentBatch

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

TEXTS = ["the cat sat on the mat", "math lesson teaches algebra students learn", "buy now cheap",
         "a big red house near a green tree under the blue sky and the dog ran far away",
         "click here", "", "students learn math", "the dog ran", None,
         "cheap deal buy now click here the cat"] * 7

CPU, GPU = Resources(cpus=1, gpus=0), Resources(cpus=1, gpus=1)


def _batch() -> DocumentBatch:
    return DocumentBatch(task_id="b0", dataset_name="t",
                         data=pa.table({"id": list(range(len(TEXTS))), "text": TEXTS}))


def _run(clf) -> pa.Table:
    return Pipeline("p", stages=[clf]).run(initial_tasks=[_batch()], summary=False)[0].to_pyarrow()


def _model_stage_on(clf):
    """The classifier's tokenizer and model stages set up directly (in this process)."""
    tok, model = clf.decompose()[:2]
    tok.setup()
    model.setup()
    return tok, model


@pytest.fixture(scope="module")
def deberta_unscaled_dir(deberta_quality_dir, tmp_path_factory) -> str:
    """The quality checkpoint with its head divided by the fixture's x1000 scale again: fp16
    rounding of the hidden states (~1e-3) then moves the probabilities by ~1e-3, where the
    scaled head magnifies it to ~1e-1 (seen on an H200)."""
    import shutil

    from safetensors.torch import load_file, save_file

    d = tmp_path_factory.mktemp("quality-unscaled")
    shutil.copytree(deberta_quality_dir, d, dirs_exist_ok=True)
    state = load_file(str(d / "model.safetensors"))
    state = {k: (v / 1000.0 if k.startswith("fc.") else v).contiguous() for k, v in state.items()}
    save_file(state, str(d / "model.safetensors"), metadata={"format": "pt"})
    return str(d)


@pytest.mark.parametrize("autocast", [True, False])
def test_quality_classifier_runs_on_cuda_and_matches_cpu(deberta_quality_dir,
                                                         deberta_unscaled_dir, autocast) -> None:
    from curator_text import QualityClassifier

    # fp32 on the GPU must match the CPU closely even with the sharp (x1000) head
    model_dir = deberta_unscaled_dir if autocast else deberta_quality_dir
    kw = {"model_dir": model_dir, "score_field": "quality_prob",
          "model_inference_batch_size": 8, "max_tokens_per_batch": 64, "autocast": autocast}
    cpu = _run(QualityClassifier(**kw, resources=CPU))

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    tok, stage = _model_stage_on(QualityClassifier(**kw, resources=GPU))
    assert stage.device == "cuda"
    assert {p.device.type for p in stage.model.parameters()} == {"cuda"}
    dtypes: set = set()
    hook = stage.model.fc.register_forward_hook(lambda m, i, o: dtypes.add(o.dtype))
    out = stage.process(tok.process(_batch())).to_pyarrow()
    hook.remove()
    assert dtypes == {torch.float16 if autocast else torch.float32}  # autocast is (not) on
    assert torch.cuda.max_memory_allocated() > 0
    assert out["id"].to_pylist() == list(range(len(TEXTS)))
    assert out["quality_prob"].type == pa.list_(pa.float32())
    g, c = np.array(out["quality_prob"].to_pylist()), np.array(cpu["quality_prob"].to_pylist())
    np.testing.assert_allclose(g.sum(1), 1.0, atol=1e-3)
    np.testing.assert_allclose(g, c, atol=1e-2 if autocast else 1e-4)
    if not autocast:
        assert out["quality_pred"].to_pylist() == cpu["quality_pred"].to_pylist()
        assert len(set(cpu["quality_pred"].to_pylist())) > 1
    stage.teardown()

    # and through the pipeline (local executor, GPU stage in a worker thread)
    piped = _run(QualityClassifier(**kw, resources=GPU))
    np.testing.assert_allclose(np.array(piped["quality_prob"].to_pylist()), g, atol=1e-3)


def test_prompt_task_complexity_on_cuda_matches_cpu(prompt_complexity_dir) -> None:
    from curator_text import PromptTaskComplexityClassifier

    cpu = _run(PromptTaskComplexityClassifier(prompt_complexity_dir, resources=CPU,
                                              model_inference_batch_size=8))
    tok, stage = _model_stage_on(PromptTaskComplexityClassifier(
        prompt_complexity_dir, resources=GPU, model_inference_batch_size=8))
    assert next(stage.model.parameters()).is_cuda
    gpu = stage.process(tok.process(_batch())).to_pyarrow()
    assert gpu.column_names == cpu.column_names
    for col in ("prompt_complexity_score", "reasoning", "creativity_scope", "task_type_prob"):
        np.testing.assert_allclose(gpu[col].to_pylist(), cpu[col].to_pylist(), atol=2e-2,
                                   err_msg=col)


def test_hf_classifiers_on_cuda_match_cpu(hf_sentiment_dir, fineweb_edu_dir) -> None:
    from curator_text import FineWebEduClassifier, HFClassifier

    cpu = _run(HFClassifier(hf_sentiment_dir, score_field="probs", resources=CPU))
    tok, stage = _model_stage_on(HFClassifier(hf_sentiment_dir, score_field="probs",
                                              resources=GPU))
    assert next(stage.model.parameters()).is_cuda
    gpu = stage.process(tok.process(_batch())).to_pyarrow()
    np.testing.assert_allclose(np.array(gpu["probs"].to_pylist()),
                               np.array(cpu["probs"].to_pylist()), atol=2e-2)

    col = "fineweb-edu-score-float"
    cpu = _run(FineWebEduClassifier(fineweb_edu_dir, resources=CPU))
    gpu = _run(FineWebEduClassifier(fineweb_edu_dir, resources=GPU))
    c, g = np.array(cpu[col].to_pylist()), np.array(gpu[col].to_pylist())
    np.testing.assert_allclose(g, c, atol=5e-2)
    sure = np.abs(c - 2.5) > 0.1
    assert np.array(gpu["fineweb-edu-score-label"].to_pylist())[sure].tolist() == \
        np.array(cpu["fineweb-edu-score-label"].to_pylist())[sure].tolist()


def test_text_embedder_on_cuda_matches_cpu(tmp_path) -> None:
    from curator_text.embedders import EmbeddingCreatorStage
    from transformers import BertConfig, BertModel, BertTokenizer

    from tests.text.classifiers.tiny_models import WORDS

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    BertTokenizer(str(vocab)).save_pretrained(str(tmp_path))
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=5 + len(WORDS), hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=2, intermediate_size=64,
                         max_position_embeddings=64)).save_pretrained(str(tmp_path))
    texts = [t or "" for t in TEXTS]
    cpu = EmbeddingCreatorStage(model_dir=str(tmp_path), resources=CPU)
    gpu = EmbeddingCreatorStage(model_dir=str(tmp_path), resources=GPU)
    gpu.setup()
    assert next(gpu.model_stage.model.parameters()).is_cuda
    np.testing.assert_allclose(np.array(gpu.embed(texts)), np.array(cpu.embed(texts)),
                               atol=1e-3)
