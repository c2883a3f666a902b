"""The classifier base: a composite of a CPU :class:`TokenizerStage` and a model stage, plus an
optional label filter (drop or split to the rejected sink). ``DistributedDataClassifier`` runs
NVIDIA's DeBERTa-head checkpoints; ``HFClassifier`` any ``AutoModelForSequenceClassification``
directory."""

from __future__ import annotations

import os
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from curator.resources import Resources
from curator.stages.base import CompositeStage, ProcessingStage, StageIO

from curator_text.filters.base import Filter
from curator_text.models import ModelStage, TokenizerStage
from curator_text.models.tokenizer import check_local_dir
from curator_text.tasks import DocumentBatch

__all__ = ["DistributedDataClassifier", "HFClassifier", "ClassifierModelStage",
           "HFModelStage", "LabelIn", "resolve_model_dir"]

DEBERTA_TOKENIZER_PADDING_SIDE = "right"
DEBERTA_MAX_SEQ_LENGTH = 512


def resolve_model_dir(stage: str, model_dir: str | None, hub_id: str | None = None) -> str:
    """A local model directory: ``model_dir``, else ``hub_id``'s snapshot when it is already in
    the Hugging Face cache (never downloaded), else a ValueError saying what to pass."""
    if model_dir:
        return check_local_dir(model_dir, stage, "model_dir")
    if hub_id:
        try:
            from huggingface_hub import snapshot_download

            return snapshot_download(hub_id, local_files_only=True)
        except Exception:
            pass
    what = f" holding {hub_id}'s files" if hub_id else ""
    raise ValueError(f"{stage}: pass model_dir= a local directory{what} (config.json, weights, "
                     f"tokenizer files); nothing is downloaded")


class LabelIn:
    """A picklable ``value -> bool``: is the predicted label one of ``labels``."""

    def __init__(self, labels: list[str]) -> None:
        self.labels = list(labels)
        self.__name__ = f"filter_by{self.labels}"

    def __call__(self, value: Any) -> bool:
        return value in self.labels


class _LabelModelStage(ModelStage):
    """A model stage that writes a predicted label to ``label_field`` and, if ``score_field`` is
    given, the class probabilities there; named after the model directory."""

    def __init__(self, model_identifier: str, *, label_field: str = "preds",
                 score_field: str | None = None, **kwargs: Any) -> None:
        super().__init__(model_identifier, **kwargs)
        self.label_field, self.score_field = label_field, score_field
        self.name = f"{os.path.basename(self.model_identifier.rstrip('/'))}_model"
        self.labels: list[str] = []

    def outputs(self) -> StageIO:
        return ["data"], [self.label_field] + ([self.score_field] if self.score_field else [])


class ClassifierModelStage(_LabelModelStage):
    """Runs an NVIDIA DeBERTa-head checkpoint (``config.json`` with ``base_model`` and labels,
    ``model.safetensors`` with ``model.*`` + ``fc.*``): the predicted label goes to
    ``label_field``, the class probabilities (``list<float32>``) to ``score_field`` if given."""

    def output_types(self) -> dict[str, pa.DataType]:
        return {self.label_field: pa.string(),
                **({self.score_field: pa.list_(pa.float32())} if self.score_field else {})}

    def load_model(self, device: str) -> Any:
        from curator_text.classifiers.layouts import DebertaHeadModel, read_config

        self.labels = _labels(read_config(self.model_identifier), self.model_identifier)
        return DebertaHeadModel.from_pretrained(self.model_identifier)

    def forward(self, input_ids: Any, attention_mask: Any) -> Any:
        return self.model(input_ids, attention_mask)

    def process_model_output(self, outputs: Any) -> dict[str, list]:
        probs = outputs.float().cpu().numpy()
        out: dict[str, list] = {self.label_field: [self.labels[i] for i in probs.argmax(1)]}
        if self.score_field:
            out[self.score_field] = list(probs)
        return out


def _labels(config: dict[str, Any], where: str) -> list[str]:
    if config.get("label2id"):
        return sorted(config["label2id"], key=lambda k: int(config["label2id"][k]))
    if config.get("id2label"):
        return [config["id2label"][k] for k in sorted(config["id2label"], key=int)]
    raise ValueError(f"{where}: config.json has neither label2id nor id2label")


class HFModelStage(_LabelModelStage):
    """Runs an ``AutoModelForSequenceClassification`` directory. With several labels: the
    argmax label (``config.id2label``) to ``label_field`` and the softmax probabilities to
    ``score_field`` if given; with one output (a regression head): the float score to
    ``label_field``."""

    def load_model(self, device: str) -> Any:
        from transformers import AutoModelForSequenceClassification

        model = AutoModelForSequenceClassification.from_pretrained(self.model_identifier,
                                                                   local_files_only=True)
        n = model.config.num_labels
        self.labels = [] if n == 1 else [model.config.id2label[i] for i in range(n)]
        return model

    def logits(self, outputs: Any) -> np.ndarray:
        return outputs.logits.float().cpu().numpy()

    def process_model_output(self, outputs: Any) -> dict[str, list]:
        logits = self.logits(outputs)
        if not self.labels:
            return {self.label_field: logits[:, 0].tolist()}
        z = logits - logits.max(1, keepdims=True)
        probs = np.exp(z) / np.exp(z).sum(1, keepdims=True)
        out: dict[str, list] = {self.label_field: [self.labels[i] for i in probs.argmax(1)]}
        if self.score_field:
            out[self.score_field] = list(probs.astype(np.float32))
        return out


class _ClassifierBase(CompositeStage[DocumentBatch, DocumentBatch]):
    """Bookkeeping shared by every classifier: tokenizer stage, model stage, optional filter."""

    modality = "text"
    kind = "classifier"
    _hub_id: str | None = None

    def _init_hub(self, model_dir: str | None, cache_dir: str | None, **common: Any) -> None:
        """:meth:`_init_common` for a published DeBERTa checkpoint (``_hub_id``): ``model_dir``
        (else the cached snapshot), at most 512 tokens, right padding; ``cache_dir`` is kept
        for NeMo Curator compatibility (unused)."""
        path = resolve_model_dir(type(self).__name__, model_dir, self._hub_id)
        self.cache_dir = cache_dir
        self._init_common(path, max_seq_length=DEBERTA_MAX_SEQ_LENGTH,
                          padding_side=DEBERTA_TOKENIZER_PADDING_SIDE, **common)

    def _init_common(self, model_dir: str, *, text_field: str, filter_by: list[str] | None,
                     split: bool, max_chars: int | None, max_seq_length: int | None,
                     padding_side: Literal["left", "right"], sort_by_length: bool,
                     model_inference_batch_size: int, max_tokens_per_batch: int | None,
                     autocast: bool, resources: Resources | None) -> None:
        self.model_identifier = model_dir
        self.text_field, self.split = text_field, split
        self.filter_by = list(filter_by) if filter_by else None
        self.max_chars, self.max_seq_length = max_chars, max_seq_length
        self.padding_side, self.sort_by_length = padding_side, sort_by_length
        self.model_inference_batch_size = model_inference_batch_size
        self.max_tokens_per_batch, self.autocast = max_tokens_per_batch, autocast
        if resources is not None:
            self.resources = resources
        self._model_kwargs = {"model_inference_batch_size": model_inference_batch_size,
                              "max_tokens_per_batch": max_tokens_per_batch,
                              "has_seq_order": sort_by_length, "padding_side": padding_side,
                              "autocast": autocast, "resources": resources}

    def tokenizer_stage(self) -> TokenizerStage:
        return TokenizerStage(self.model_identifier, text_field=self.text_field,
                              max_chars=self.max_chars, max_seq_length=self.max_seq_length,
                              padding_side=self.padding_side, sort_by_length=self.sort_by_length)

    def model_stage(self) -> ModelStage:
        raise NotImplementedError(f"{type(self).__name__} must implement model_stage")

    def filter_field(self) -> str:
        return self.label_field  # type: ignore[attr-defined]

    def decompose(self) -> list[ProcessingStage]:
        stages: list[ProcessingStage] = [self.tokenizer_stage(), self.model_stage()]
        if self.filter_by:
            stages.append(Filter(filter_fn=LabelIn(self.filter_by),
                                 filter_field=self.filter_field(), split=self.split,
                                 name=f"{self.name}_filter"))
        return stages

    def inputs(self) -> StageIO:
        return ["data"], [self.text_field]

    def outputs(self) -> StageIO:
        return self.model_stage().outputs()

    def filter_by_category(self, value: str) -> bool:
        """NeMo Curator's predicate: is ``value`` one of ``filter_by``."""
        return value in (self.filter_by or [])


class DistributedDataClassifier(_ClassifierBase):
    """A DeBERTa-head classifier from a local checkpoint in NVIDIA's layout (``config.json`` with
    ``base_model``, ``id2label``/``label2id``, ``fc_dropout``; ``model.safetensors``; tokenizer
    files). Decomposes into a CPU :class:`TokenizerStage` and a :class:`ClassifierModelStage`
    (``resources``: e.g. ``Resources(gpus=1)``), then, with ``filter_by``, a filter on the label.

    Parameters:
        model_identifier: local checkpoint directory (``model_dir``: alias).
        label_field, score_field: predicted label column; class-probabilities column (None:
            not kept). ``pred_column`` / ``prob_column``: older NeMo Curator names for them.
        text_field: the text column.
        filter_by: keep only documents whose label is in this list.
        split: with ``filter_by``, send the others to the rejected sink instead of dropping.
        max_chars: cut texts to this many characters before tokenizing.
        max_seq_length: most tokens per document.
        padding_side, sort_by_length: see :class:`TokenizerStage`.
        model_inference_batch_size: most documents per forward pass.
        max_tokens_per_batch: most padded tokens per forward pass (None: unbounded).
        autocast: mixed precision on CUDA.
        resources: the model stage's resources (``Resources(gpus=1)`` for a GPU).
        cache_dir: accepted for NeMo Curator compatibility; unused.
    """

    def __init__(self, model_identifier: str | None = None, *, model_dir: str | None = None,
                 cache_dir: str | None = None, label_field: str = "preds",
                 score_field: str | None = None, pred_column: str | None = None,
                 prob_column: str | None = None, text_field: str = "text",
                 filter_by: list[str] | None = None, split: bool = False,
                 max_chars: int | None = None, max_seq_length: int | None = None,
                 padding_side: Literal["left", "right"] = "right", sort_by_length: bool = True,
                 model_inference_batch_size: int = 256, max_tokens_per_batch: int | None = None,
                 autocast: bool = True, resources: Resources | None = None) -> None:
        path = resolve_model_dir(type(self).__name__, model_identifier or model_dir, self._hub_id)
        self.cache_dir = cache_dir
        self.label_field = pred_column or label_field
        self.score_field = prob_column or score_field
        self._init_common(path, text_field=text_field, filter_by=filter_by, split=split,
                          max_chars=max_chars, max_seq_length=max_seq_length,
                          padding_side=padding_side, sort_by_length=sort_by_length,
                          model_inference_batch_size=model_inference_batch_size,
                          max_tokens_per_batch=max_tokens_per_batch, autocast=autocast,
                          resources=resources)
        self._check_layout()

    def _check_layout(self) -> None:
        from curator_text.classifiers.layouts import WEIGHTS_NAME, read_config

        cfg = read_config(self.model_identifier)
        if "base_model" not in cfg or not os.path.isfile(
                os.path.join(self.model_identifier, WEIGHTS_NAME)):
            raise ValueError(f"{type(self).__name__}: model_dir={self.model_identifier!r} is not "
                             f"in NVIDIA's DeBERTa classifier layout (config.json with "
                             f"base_model + {WEIGHTS_NAME}); use HFClassifier for "
                             f"AutoModelForSequenceClassification directories")
        labels = _labels(cfg, self.model_identifier)
        unknown = [x for x in self.filter_by or [] if x not in labels]
        if unknown:
            raise ValueError(f"{type(self).__name__}: filter_by has labels {unknown} the model "
                             f"does not predict (labels: {labels})")

    def model_stage(self) -> ModelStage:
        return ClassifierModelStage(self.model_identifier, label_field=self.label_field,
                                    score_field=self.score_field, **self._model_kwargs)


class HFClassifier(_ClassifierBase):
    """Any local ``AutoModelForSequenceClassification`` directory (weights, config and
    tokenizer saved with ``save_pretrained``). Classification heads write the argmax label
    (``config.id2label``) to ``label_field`` and, with ``score_field``, the probabilities;
    regression heads (one output) write the float score to ``label_field``. Parameters as
    :class:`DistributedDataClassifier`; ``filter_by`` needs a classification head."""

    def __init__(self, model_dir: str | None = None, *, model_identifier: str | None = None,
                 label_field: str = "preds", score_field: str | None = None,
                 pred_column: str | None = None, prob_column: str | None = None,
                 text_field: str = "text", filter_by: list[str] | None = None,
                 split: bool = False, max_chars: int | None = None,
                 max_seq_length: int | None = None,
                 padding_side: Literal["left", "right"] = "right", sort_by_length: bool = True,
                 model_inference_batch_size: int = 256, max_tokens_per_batch: int | None = None,
                 autocast: bool = True, resources: Resources | None = None) -> None:
        path = resolve_model_dir(type(self).__name__, model_dir or model_identifier)
        self.label_field = pred_column or label_field
        self.score_field = prob_column or score_field
        self._init_common(path, text_field=text_field, filter_by=filter_by, split=split,
                          max_chars=max_chars, max_seq_length=max_seq_length,
                          padding_side=padding_side, sort_by_length=sort_by_length,
                          model_inference_batch_size=model_inference_batch_size,
                          max_tokens_per_batch=max_tokens_per_batch, autocast=autocast,
                          resources=resources)
        self.name = f"HFClassifier[{os.path.basename(path.rstrip('/'))}]"

    def model_stage(self) -> ModelStage:
        return HFModelStage(self.model_identifier, label_field=self.label_field,
                            score_field=self.score_field, **self._model_kwargs)
