"""Tiny random models in the published layouts, built once per session: a real WordPiece-free
word-level tokenizer (``tokenizers``) saved in transformers' layout, NVIDIA's DeBERTa-v3 + head
checkpoints (config.json + model.safetensors, keys ``model.*``/``fc.*`` and
``backbone.*``/``head_<i>.fc.*``) and BERT sequence-classification heads."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.text.classifiers.tiny_models import WORDS, save_backbone_config, save_tokenizer


@pytest.fixture(scope="session")
def deberta_quality_dir(tmp_path_factory) -> str:
    """NVIDIA's quality-classifier layout with labels High/Medium/Low; the head is scaled up so
    that different texts get different labels."""
    import torch
    from curator_text.classifiers.layouts import DebertaHeadModel

    d = tmp_path_factory.mktemp("quality-classifier-deberta")
    n = save_tokenizer(d)
    save_backbone_config(d / "backbone", n)
    labels = ["High", "Medium", "Low"]
    torch.manual_seed(0)
    model = DebertaHeadModel({"base_model": "backbone", "fc_dropout": 0.2,
                              "id2label": {str(i): x for i, x in enumerate(labels)},
                              "label2id": {x: i for i, x in enumerate(labels)}}, model_dir=str(d))
    model.eval()
    _center_head(model.fc, lambda ids: model.model(input_ids=ids).last_hidden_state[0, 0], d)
    model.save_pretrained(str(d))
    return str(d)


def _center_head(head, features, d: Path, offset: float = 0.0) -> None:
    """Scale the linear ``head`` and centre it on the mean ``features(ids)`` of some probe
    texts (plus ``offset``), so that different texts get different outputs: random tiny
    backbones give near-identical states."""
    import torch
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(d))
    probes = [" ".join(WORDS[i:i + k]) for i in range(0, len(WORDS), 3) for k in (2, 5)]
    with torch.no_grad():
        mean = torch.stack([features(torch.tensor([tok(t)["input_ids"]])) for t in probes]
                           ).mean(0)
        head.weight.mul_(1000.0)
        head.bias.copy_(offset - (head.weight @ mean))


@pytest.fixture(scope="session")
def prompt_complexity_dir(tmp_path_factory) -> str:
    import torch
    from curator_text.classifiers.layouts import MultiHeadDebertaModel

    d = tmp_path_factory.mktemp("prompt-task-and-complexity-classifier")
    n = save_tokenizer(d)
    save_backbone_config(d / "backbone", n)
    sizes = {"task_type": 11, "creativity_scope": 3, "reasoning": 2, "contextual_knowledge": 2,
             "number_of_few_shots": 6, "domain_knowledge": 4, "no_label_reason": 1,
             "constraint_ct": 2}
    tasks = ["Open QA", "Closed QA", "Summarization", "Text Generation", "Code Generation",
             "Chatbot", "Classification", "Rewrite", "Brainstorming", "Extraction", "Other"]
    weights = {k: [i / max(v - 1, 1) for i in range(v)] for k, v in sizes.items()
               if k != "task_type"}
    torch.manual_seed(1)
    cfg = {"base_model": "backbone", "target_sizes": sizes,
           "task_type_map": {str(i): t for i, t in enumerate(tasks)},
           "weights_map": weights, "divisor_map": {k: 1.0 for k in weights}}
    MultiHeadDebertaModel(cfg, model_dir=str(d)).save_pretrained(str(d))
    return str(d)


def _bert_seq_cls(d: Path, num_labels: int, seed: int, **cfg_kwargs) -> str:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    n = save_tokenizer(d)
    config = BertConfig(vocab_size=n, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=num_labels,
                        pad_token_id=0, **cfg_kwargs)
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config).eval()
    _center_head(model.classifier, lambda ids: model.bert(input_ids=ids).pooler_output[0], d,
                 offset=2.5 if num_labels == 1 else 0.0)
    model.save_pretrained(str(d))
    return str(d)


@pytest.fixture(scope="session")
def fineweb_edu_dir(tmp_path_factory) -> str:
    """A BERT regression head (num_labels=1, problem_type regression) like
    HuggingFaceFW/fineweb-edu-classifier."""
    return _bert_seq_cls(tmp_path_factory.mktemp("fineweb-edu-classifier"), 1, 2,
                         problem_type="regression")


@pytest.fixture(scope="session")
def hf_sentiment_dir(tmp_path_factory) -> str:
    return _bert_seq_cls(tmp_path_factory.mktemp("hf-sentiment"), 2, 3,
                         id2label={0: "negative", 1: "positive"},
                         label2id={"negative": 0, "positive": 1})
