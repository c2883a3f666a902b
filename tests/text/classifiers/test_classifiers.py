"""Classifier stages on tiny random checkpoints in the published layouts: the composite's
decomposition, agreement with a one-document-at-a-time reference (so sorting, dynamic padding,
token-budget batching and order restoration change nothing), filter_by with split, and each
named classifier's columns."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from curator import Pipeline, Resources
from curator_text.tasks import DocumentBatch

from tests.text.classifiers.tiny_models import read_json

TEXTS = ["the cat sat on the mat", "math lesson teaches algebra students learn", "buy now cheap",
         "a big red house near a green tree under the blue sky and the dog ran far away",
         "click here", "", "students learn math", "the dog ran", None,
         "cheap deal buy now click here the cat"]


def _batch(texts=TEXTS) -> DocumentBatch:
    return DocumentBatch(task_id="b0", dataset_name="t",
                         data=pa.table({"id": list(range(len(texts))), "text": texts}))


def _reference_probs(model_dir: str) -> np.ndarray:
    """Each document alone through the checkpoint (no padding, no batching)."""
    import torch
    from curator_text.classifiers.layouts import DebertaHeadModel
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = DebertaHeadModel.from_pretrained(model_dir).eval()
    out = []
    for t in TEXTS:
        ids = torch.tensor([tok(t or "", truncation=True, max_length=1024)["input_ids"]])
        with torch.no_grad():
            out.append(model(ids, torch.ones_like(ids))[0].numpy())
    return np.stack(out)


def test_quality_classifier_matches_single_document_reference(deberta_quality_dir) -> None:
    from curator_text import QualityClassifier
    from curator_text.models import TokenizerStage

    clf = QualityClassifier(model_dir=deberta_quality_dir, score_field="quality_prob",
                            model_inference_batch_size=3, max_tokens_per_batch=20,
                            resources=Resources(cpus=1, gpus=0))
    parts = clf.decompose()
    assert isinstance(parts[0], TokenizerStage) and parts[0].resources.gpus == 0
    assert [type(p).__name__ for p in parts] == ["TokenizerStage", "ClassifierModelStage"]
    assert parts[0].name.endswith("_tokenizer") and parts[1].name.endswith("_model")
    assert clf.kind == "classifier" and clf.outputs()[1] == ["quality_pred", "quality_prob"]

    out = Pipeline("q", stages=[clf]).run(initial_tasks=[_batch()], summary=False)
    table = out[0].to_pyarrow()
    assert table.column_names == ["id", "text", "quality_pred", "quality_prob"]
    assert table["id"].to_pylist() == list(range(len(TEXTS)))  # original order restored
    ref = _reference_probs(deberta_quality_dir)
    probs = np.array(table["quality_prob"].to_pylist())
    # the fixture's head is scaled x1000, which magnifies float32 rounding: batched and padded
    # rows differ from one-by-one ones by up to ~2e-5 with 16 CPU threads (seen on a 16-core
    # host); a padding or order bug moves them by 1e-1
    assert np.allclose(probs, ref, atol=1e-4)
    labels = [["High", "Medium", "Low"][i] for i in ref.argmax(1)]
    assert table["quality_pred"].to_pylist() == labels
    assert len(set(labels)) >= 2  # the fixture's head separates the texts


def test_gpu_resources_and_nemo_column_aliases(deberta_quality_dir) -> None:
    from curator_text import DistributedDataClassifier

    clf = DistributedDataClassifier(deberta_quality_dir, pred_column="label",
                                    prob_column="probs", resources=Resources(gpus=1))
    model_stage = clf.decompose()[1]
    assert model_stage.resources.gpus == 1 and clf.decompose()[0].resources.gpus == 0
    assert clf.outputs()[1] == ["label", "probs"]


def test_sort_and_max_chars(deberta_quality_dir) -> None:
    from curator_text.models import SEQ_ORDER_FIELD, TokenizerStage

    stage = TokenizerStage(deberta_quality_dir, max_chars=7)
    stage.setup()
    out = stage.process(_batch(["the cat sat on the mat", "dog", "a big red house"])).to_pyarrow()
    assert out[SEQ_ORDER_FIELD].to_pylist() == [1, 0, 2]  # shortest first
    # cut to 7 chars: "dog" (3 tokens with [CLS]/[SEP]), "the cat" (4), "a big r" (5)
    assert [len(x) for x in out["input_ids"].to_pylist()] == [3, 4, 5]
    unsorted = TokenizerStage(deberta_quality_dir, sort_by_length=False, max_seq_length=3)
    unsorted.setup()
    t = unsorted.process(_batch(["the cat sat on the mat"])).to_pyarrow()
    assert SEQ_ORDER_FIELD not in t.column_names and len(t["input_ids"][0]) == 3


def test_forward_batches_respect_doc_and_token_budgets() -> None:
    from curator_text.models.model import forward_batches

    lengths = np.array([2, 2, 3, 5, 5, 9, 30])
    batches = forward_batches(lengths, max_docs=3, max_tokens=12)
    assert batches[0] == (0, 3) and batches[-1] == (6, 7)  # an over-long row stands alone
    for a, b in batches:
        assert b - a <= 3 and ((b - a) * lengths[a:b].max() <= 12 or b - a == 1)
    assert sum(b - a for a, b in batches) == len(lengths)


def test_filter_by_split_sends_other_labels_to_rejected_sink(deberta_quality_dir) -> None:
    from curator_text import QualityClassifier

    ref = _reference_probs(deberta_quality_dir)
    labels = [["High", "Medium", "Low"][i] for i in ref.argmax(1)]
    keep = labels[0]
    clf = QualityClassifier(model_dir=deberta_quality_dir, filter_by=[keep], split=True)
    result = Pipeline("q", stages=[clf]).run(initial_tasks=[_batch()], summary=False)
    kept = result[0].to_pyarrow()["id"].to_pylist()
    assert kept == [i for i, x in enumerate(labels) if x == keep]
    rejected = [r for r in result.rejected.records if r.kind == "filtered"]
    assert sorted(r.record["id"] for r in rejected) == [i for i, x in enumerate(labels)
                                                          if x != keep]
    assert all(r.record["score"] != keep for r in rejected)
    dropped = QualityClassifier(model_dir=deberta_quality_dir, filter_by=[keep])
    assert Pipeline("q", stages=[dropped]).run(initial_tasks=[_batch()], summary=False)[0] \
        .to_pyarrow()["id"].to_pylist() == kept


def test_named_deberta_classifiers_defaults(deberta_quality_dir) -> None:
    from curator_text import ContentTypeClassifier, DomainClassifier, MultilingualDomainClassifier

    for cls, col, chars, seq in ((DomainClassifier, "domain_pred", 2000, 512),
                                 (MultilingualDomainClassifier, "multilingual_domain_pred",
                                  2000, 512),
                                 (ContentTypeClassifier, "content_pred", 5000, 1024)):
        clf = cls(model_dir=deberta_quality_dir)
        tok = clf.decompose()[0]
        assert clf.outputs()[1] == [col] and tok.max_chars == chars
        assert tok.max_seq_length == seq
    out = Pipeline("d", stages=[DomainClassifier(deberta_quality_dir)]).run(
        initial_tasks=[_batch()], summary=False)
    assert set(out[0].to_pyarrow()["domain_pred"].to_pylist()) <= {"High", "Medium", "Low"}


def test_published_backbone_config_is_known_without_hub() -> None:
    from curator_text.classifiers.layouts import backbone_config

    cfg = backbone_config("microsoft/deberta-v3-base", "/nonexistent")
    assert (cfg.model_type, cfg.hidden_size, cfg.vocab_size) == ("deberta-v2", 768, 128100)


def test_checkpoint_layout_keys(deberta_quality_dir, prompt_complexity_dir) -> None:
    from safetensors import safe_open

    with safe_open(f"{deberta_quality_dir}/model.safetensors", "pt") as f:
        keys = set(f.keys())
    assert {"fc.weight", "fc.bias", "model.embeddings.word_embeddings.weight"} <= keys
    assert read_json(f"{deberta_quality_dir}/config.json")["base_model"] == "backbone"
    with safe_open(f"{prompt_complexity_dir}/model.safetensors", "pt") as f:
        keys = set(f.keys())
    assert {"head_0.fc.weight", "head_7.fc.bias",
            "backbone.embeddings.word_embeddings.weight"} <= keys


def test_prompt_task_complexity(prompt_complexity_dir) -> None:
    from curator_text import PromptTaskComplexityClassifier
    from curator_text.classifiers.prompt_task_complexity import OUTPUT_FIELDS

    with pytest.raises(NotImplementedError, match="filter_by"):
        PromptTaskComplexityClassifier(prompt_complexity_dir, filter_by=["x"])
    clf = PromptTaskComplexityClassifier(prompt_complexity_dir, model_inference_batch_size=4)
    table = Pipeline("p", stages=[clf]).run(initial_tasks=[_batch()], summary=False)[0].to_pyarrow()
    assert table.column_names == ["id", "text", *OUTPUT_FIELDS]
    cfg = read_json(f"{prompt_complexity_dir}/config.json")
    tasks = set(cfg["task_type_map"].values())
    rows = table.to_pylist()
    for row in rows:
        assert row["task_type_1"] in tasks and row["task_type_2"] in tasks | {"NA"}
        assert 0.0 <= row["task_type_prob"] <= 1.0
        assert row["no_label_reason"] == 0.0  # one class with weight 0
        expected = (0.35 * row["creativity_scope"] + 0.25 * row["reasoning"]
                    + 0.15 * row["constraint_ct"] + 0.15 * row["domain_knowledge"]
                    + 0.05 * row["contextual_knowledge"] + 0.05 * row["number_of_few_shots"])
        assert row["prompt_complexity_score"] == pytest.approx(expected, abs=1e-4)
    assert len({r["reasoning"] for r in rows}) > 1  # depends on the text


def test_fineweb_edu_regression_head(fineweb_edu_dir) -> None:
    import torch
    from curator_text import FineWebEduClassifier, FineWebNemotronEduClassifier
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    clf = FineWebEduClassifier(model_dir=fineweb_edu_dir, model_inference_batch_size=4)
    table = Pipeline("f", stages=[clf]).run(initial_tasks=[_batch()], summary=False)[0].to_pyarrow()
    assert table.column_names[2:] == ["fineweb-edu-score-float", "fineweb-edu-score-int",
                                      "fineweb-edu-score-label"]  # NeMo Curator's order
    tok = AutoTokenizer.from_pretrained(fineweb_edu_dir)
    model = AutoModelForSequenceClassification.from_pretrained(fineweb_edu_dir).eval()
    raw = []
    for t in TEXTS:
        enc = tok(t or "", return_tensors="pt")
        with torch.no_grad():
            raw.append(model(**enc).logits[0, 0].item())
    raw = np.array(raw)
    floats = np.array(table["fineweb-edu-score-float"].to_pylist())
    assert np.allclose(floats, raw.clip(0, 5), atol=1e-4)
    assert table["fineweb-edu-score-int"].to_pylist() == [int(round(x)) for x in raw.clip(0, 5)]
    assert table["fineweb-edu-score-label"].to_pylist() == [
        "high_quality" if x >= 2.5 else "low_quality" for x in raw]
    assert len(set(table["fineweb-edu-score-label"].to_pylist())) == 2
    nemotron = FineWebNemotronEduClassifier(fineweb_edu_dir, filter_by=["high_quality"])
    kept = Pipeline("n", stages=[nemotron]).run(initial_tasks=[_batch()],
                                                summary=False)[0].to_pyarrow()
    assert kept["id"].to_pylist() == [i for i, x in enumerate(raw) if x >= 2.5]
    assert nemotron.model_inference_batch_size == 1024


def test_hf_classifier_generic_directory(hf_sentiment_dir, fineweb_edu_dir) -> None:
    from curator_text import HFClassifier

    clf = HFClassifier(model_dir=hf_sentiment_dir, score_field="probs")
    table = Pipeline("h", stages=[clf]).run(initial_tasks=[_batch()], summary=False)[0].to_pyarrow()
    probs = np.array(table["probs"].to_pylist())
    assert np.allclose(probs.sum(1), 1.0, atol=1e-5)
    assert table["preds"].to_pylist() == [["negative", "positive"][i] for i in probs.argmax(1)]
    reg = HFClassifier(fineweb_edu_dir, label_field="score")
    t2 = Pipeline("r", stages=[reg]).run(initial_tasks=[_batch()], summary=False)[0].to_pyarrow()
    assert pa.types.is_floating(t2["score"].type)


def test_config_errors(tmp_path, hf_sentiment_dir, deberta_quality_dir) -> None:
    from curator_text import FineWebEduClassifier, HFClassifier, QualityClassifier

    with pytest.raises(ValueError, match="model_dir"):
        QualityClassifier()
    with pytest.raises(ValueError, match="not a local directory"):
        HFClassifier(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="NVIDIA's DeBERTa classifier layout"):
        QualityClassifier(model_dir=hf_sentiment_dir)
    with pytest.raises(ValueError, match="filter_by has labels"):
        QualityClassifier(model_dir=deberta_quality_dir, filter_by=["Excellent"])
    with pytest.raises(ValueError, match="high_quality"):
        FineWebEduClassifier(hf_sentiment_dir, filter_by=["good"])


def test_registered_as_classifiers_and_cheap_to_import() -> None:
    import subprocess
    import sys

    from curator.plugins import get_registry

    reg = get_registry()
    for name in ("QualityClassifier", "DomainClassifier", "MultilingualDomainClassifier",
                 "ContentTypeClassifier", "PromptTaskComplexityClassifier",
                 "FineWebEduClassifier", "FineWebMixtralEduClassifier",
                 "FineWebNemotronEduClassifier", "HFClassifier", "DistributedDataClassifier"):
        assert reg.get(name).kind == "classifier", name
    assert reg.get("TokenizerStage") is not None
    code = ("import sys, curator_text.classifiers, curator_text.models; "
            "bad = [m for m in ('torch', 'transformers') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_two_classifiers_chain_in_one_pipeline(tmp_path, deberta_quality_dir,
                                              fineweb_edu_dir) -> None:
    import json

    from curator_text import FineWebEduClassifier, JsonlReader, QualityClassifier

    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    pipe = Pipeline("both", stages=[JsonlReader(str(src)), QualityClassifier(deberta_quality_dir),
                                    FineWebEduClassifier(fineweb_edu_dir)])
    table = pipe.run(summary=False)[0].to_pyarrow()
    assert table.column_names[-4:] == ["quality_pred", "fineweb-edu-score-float",
                                       "fineweb-edu-score-int", "fineweb-edu-score-label"]
    assert table["id"].to_pylist() == list(range(len(TEXTS)))
