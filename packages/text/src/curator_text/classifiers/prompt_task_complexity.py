"""PromptTaskComplexityClassifier: nvidia/prompt-task-and-complexity-classifier (a DeBERTa
backbone, mean pooling and eight heads) with NeMo Curator's eleven output columns."""

from __future__ import annotations

from typing import Any

import numpy as np
from curator.resources import Resources
from curator.stages.base import StageIO

from curator_text.classifiers.base import _ClassifierBase
from curator_text.models import ModelStage

__all__ = ["PromptTaskComplexityClassifier", "PromptTaskComplexityModelStage", "OUTPUT_FIELDS"]

OUTPUT_FIELDS = ["prompt_complexity_score", "task_type_1", "task_type_2", "task_type_prob",
                 "creativity_scope", "reasoning", "contextual_knowledge", "number_of_few_shots",
                 "domain_knowledge", "no_label_reason", "constraint_ct"]
_SCORED = OUTPUT_FIELDS[4:]  # heads 1..7, in the checkpoint's head order
_WEIGHTS = {"creativity_scope": 0.35, "reasoning": 0.25, "constraint_ct": 0.15,
            "domain_knowledge": 0.15, "contextual_knowledge": 0.05, "number_of_few_shots": 0.05}


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(1, keepdims=True))
    return z / z.sum(1, keepdims=True)


class PromptTaskComplexityModelStage(ModelStage):
    """Head 0: the two most likely task types (the second ``"NA"`` below probability 0.1) and
    the first's probability; heads 1-7: softmax-weighted scores (``weights_map`` /
    ``divisor_map`` from ``config.json``); ``prompt_complexity_score``: their weighted sum."""

    def outputs(self) -> StageIO:
        return ["data"], list(OUTPUT_FIELDS)

    def load_model(self, device: str) -> Any:
        from curator_text.classifiers.layouts import MultiHeadDebertaModel

        model = MultiHeadDebertaModel.from_pretrained(self.model_identifier)
        self.config = model.config
        return model

    def forward(self, input_ids: Any, attention_mask: Any) -> Any:
        return self.model(input_ids, attention_mask)

    def process_model_output(self, outputs: Any) -> dict[str, list]:
        logits = [o.float().cpu().numpy() for o in outputs]
        cfg = self.config
        probs = _softmax(logits[0])
        top2 = np.argsort(-probs, axis=1, kind="stable")[:, :2]
        top2_p = np.round(np.take_along_axis(probs, top2, 1), 3)
        names = cfg["task_type_map"]
        out: dict[str, list] = {
            "task_type_1": [names[str(i)] for i in top2[:, 0]],
            "task_type_2": [names[str(i)] if p >= 0.1 else "NA"
                            for i, p in zip(top2[:, 1], top2_p[:, 1], strict=True)],
            "task_type_prob": top2_p[:, 0].astype(float).tolist()}
        for field, head in zip(_SCORED, logits[1:], strict=True):
            score = (_softmax(head) * np.asarray(cfg["weights_map"][field])).sum(1)
            score = np.round(score / cfg["divisor_map"][field], 4)
            if field == "number_of_few_shots":
                score = np.where(score >= 0.05, score, 0.0)
            out[field] = score.astype(float).tolist()
        total = sum(w * np.asarray(out[f]) for f, w in _WEIGHTS.items())
        out["prompt_complexity_score"] = np.round(total, 5).astype(float).tolist()
        return {f: out[f] for f in OUTPUT_FIELDS}


class PromptTaskComplexityClassifier(_ClassifierBase):
    """nvidia/prompt-task-and-complexity-classifier from ``model_dir`` (``config.json`` with
    ``base_model``, ``target_sizes``, ``task_type_map``, ``weights_map``, ``divisor_map``;
    ``model.safetensors`` with ``backbone.*`` + ``head_<i>.fc.*``). Writes
    :data:`OUTPUT_FIELDS`; ``filter_by`` is not supported (as in NeMo Curator)."""

    _hub_id = "nvidia/prompt-task-and-complexity-classifier"

    def __init__(self, model_dir: str | None = None, *, cache_dir: str | None = None,
                 text_field: str = "text", filter_by: list[str] | None = None,
                 max_chars: int | None = None, sort_by_length: bool = True,
                 model_inference_batch_size: int = 256, max_tokens_per_batch: int | None = None,
                 autocast: bool = True, resources: Resources | None = None) -> None:
        if filter_by:
            raise NotImplementedError("PromptTaskComplexityClassifier: filter_by is not "
                                      "supported; filter on its output columns with Filter")
        self._init_hub(model_dir, cache_dir, text_field=text_field, filter_by=None, split=False,
                       max_chars=max_chars, sort_by_length=sort_by_length,
                       model_inference_batch_size=model_inference_batch_size,
                       max_tokens_per_batch=max_tokens_per_batch, autocast=autocast,
                       resources=resources)

    def model_stage(self) -> ModelStage:
        return PromptTaskComplexityModelStage(self.model_identifier, **self._model_kwargs)
