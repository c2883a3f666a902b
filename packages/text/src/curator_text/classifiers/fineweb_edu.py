"""FineWeb-Edu style educational-value classifiers: ``AutoModelForSequenceClassification``
regression heads (one logit, 0-5 scale) with NeMo Curator's three output columns."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from curator.errors import ConfigError
from curator.resources import Resources
from curator.stages.base import StageIO

from curator_text.classifiers.base import HFModelStage, _ClassifierBase
from curator_text.models import ModelStage

__all__ = ["FineWebEduClassifier", "FineWebMixtralEduClassifier", "FineWebNemotronEduClassifier",
           "FineWebModelStage", "FINEWEB_HIGH_QUALITY_THRESHOLD"]

FINEWEB_HIGH_QUALITY_THRESHOLD = 2.5
"""Raw score at or above which the label is ``"high_quality"`` (NeMo Curator's cut)."""


class FineWebModelStage(HFModelStage):
    """A one-logit regression head: ``float_score_column`` (clipped to 0..5),
    ``int_score_column`` (rounded clipped score) and ``label_field`` (``high_quality`` when the
    raw score >= :data:`FINEWEB_HIGH_QUALITY_THRESHOLD`, else ``low_quality``)."""

    def __init__(self, model_identifier: str, *, label_field: str = "preds",
                 float_score_column: str = "float_score", int_score_column: str = "int_score",
                 **kwargs: Any) -> None:
        super().__init__(model_identifier, label_field=label_field, **kwargs)
        self.float_score_column, self.int_score_column = float_score_column, int_score_column

    def outputs(self) -> StageIO:
        return ["data"], [self.label_field, self.float_score_column, self.int_score_column]

    def output_types(self) -> dict[str, pa.DataType]:
        return {self.label_field: pa.string(), self.float_score_column: pa.float64(),
                self.int_score_column: pa.int64()}

    def load_model(self, device: str) -> Any:
        model = super().load_model(device)
        if model.config.num_labels != 1:
            raise ValueError(f"{self.name}: {self.model_identifier} has "
                             f"{model.config.num_labels} outputs; FineWeb-Edu classifiers are "
                             f"regression heads with num_labels=1")
        return model

    def process_model_output(self, outputs: Any) -> dict[str, list]:
        raw = self.logits(outputs)[:, 0].astype(float)
        clipped = raw.clip(0.0, 5.0)
        return {self.float_score_column: clipped.tolist(),
                self.int_score_column: [int(round(x)) for x in clipped.tolist()],
                self.label_field: ["high_quality" if x >= FINEWEB_HIGH_QUALITY_THRESHOLD
                                   else "low_quality" for x in raw.tolist()]}


class _FineWebBaseClassifier(_ClassifierBase):
    _hub_id: str
    _prefix: str
    _default_batch_size = 256  # documents per forward pass unless model_inference_batch_size

    def __init__(self, model_dir: str | None = None, *, cache_dir: str | None = None,
                 label_field: str | None = None, float_score_column: str | None = None,
                 int_score_column: str | None = None, text_field: str = "text",
                 filter_by: list[str] | None = None, split: bool = False,
                 max_chars: int | None = None, sort_by_length: bool = True,
                 model_inference_batch_size: int | None = None,
                 max_tokens_per_batch: int | None = None, autocast: bool = True,
                 resources: Resources | None = None) -> None:
        model_inference_batch_size = model_inference_batch_size or self._default_batch_size
        self.label_field = label_field or f"{self._prefix}-score-label"
        self.float_score_column = float_score_column or f"{self._prefix}-score-float"
        self.int_score_column = int_score_column or f"{self._prefix}-score-int"
        self._init_hub(model_dir, cache_dir, text_field=text_field, filter_by=filter_by,
                       split=split, max_chars=max_chars, sort_by_length=sort_by_length,
                       model_inference_batch_size=model_inference_batch_size,
                       max_tokens_per_batch=max_tokens_per_batch, autocast=autocast,
                       resources=resources)
        bad = [x for x in filter_by or [] if x not in ("high_quality", "low_quality")]
        if bad:
            raise ConfigError(f"{type(self).__name__}: filter_by labels must be 'high_quality' "
                              f"or 'low_quality', got {bad}")

    def model_stage(self) -> ModelStage:
        return FineWebModelStage(self.model_identifier, label_field=self.label_field,
                                 float_score_column=self.float_score_column,
                                 int_score_column=self.int_score_column, **self._model_kwargs)


class FineWebEduClassifier(_FineWebBaseClassifier):
    """HuggingFaceFW/fineweb-edu-classifier from ``model_dir``: columns
    ``fineweb-edu-score-{label,float,int}``. Parameters as :class:`DistributedDataClassifier`
    (``label_field``, ``float_score_column``, ``int_score_column`` rename the columns)."""

    _hub_id, _prefix = "HuggingFaceFW/fineweb-edu-classifier", "fineweb-edu"


class FineWebMixtralEduClassifier(_FineWebBaseClassifier):
    """nvidia/nemocurator-fineweb-mixtral-edu-classifier: columns
    ``fineweb-mixtral-edu-score-{label,float,int}``; forward batches of 1024 by default."""

    _hub_id = "nvidia/nemocurator-fineweb-mixtral-edu-classifier"
    _prefix = "fineweb-mixtral-edu"
    _default_batch_size = 1024


class FineWebNemotronEduClassifier(_FineWebBaseClassifier):
    """nvidia/nemocurator-fineweb-nemotron-4-edu-classifier: columns
    ``fineweb-nemotron-edu-score-{label,float,int}``; forward batches of 1024 by default."""

    _hub_id = "nvidia/nemocurator-fineweb-nemotron-4-edu-classifier"
    _prefix = "fineweb-nemotron-edu"
    _default_batch_size = 1024
