"""NVIDIA's DeBERTa-head classifiers under NeMo Curator's names and defaults. Each loads a local
copy of its published checkpoint (``model_dir``) or finds it in the Hugging Face cache; nothing
is downloaded."""

from __future__ import annotations

from curator.resources import Resources

from curator_text.classifiers.base import DEBERTA_TOKENIZER_PADDING_SIDE, DistributedDataClassifier

__all__ = ["QualityClassifier", "DomainClassifier", "MultilingualDomainClassifier",
           "ContentTypeClassifier"]


class _Named(DistributedDataClassifier):
    _hub_id: str
    _max_seq_length: int

    def __init__(self, model_dir: str | None = None, *, cache_dir: str | None = None,
                 label_field: str, score_field: str | None = None,
                 pred_column: str | None = None, prob_column: str | None = None,
                 text_field: str = "text", filter_by: list[str] | None = None,
                 split: bool = False, max_chars: int | None = None, sort_by_length: bool = True,
                 model_inference_batch_size: int = 256, max_tokens_per_batch: int | None = None,
                 autocast: bool = True, resources: Resources | None = None) -> None:
        super().__init__(model_dir=model_dir, cache_dir=cache_dir, label_field=label_field,
                         score_field=score_field, pred_column=pred_column,
                         prob_column=prob_column, text_field=text_field, filter_by=filter_by,
                         split=split, max_chars=max_chars, max_seq_length=self._max_seq_length,
                         padding_side=DEBERTA_TOKENIZER_PADDING_SIDE,
                         sort_by_length=sort_by_length,
                         model_inference_batch_size=model_inference_batch_size,
                         max_tokens_per_batch=max_tokens_per_batch, autocast=autocast,
                         resources=resources)


class QualityClassifier(_Named):
    """nvidia/quality-classifier-deberta (labels High / Medium / Low) from ``model_dir``.
    Defaults: ``label_field="quality_pred"``, ``max_chars=6000``, 1024 tokens. Other parameters
    as :class:`DistributedDataClassifier`."""

    _hub_id, _max_seq_length = "nvidia/quality-classifier-deberta", 1024

    def __init__(self, model_dir: str | None = None, *, label_field: str = "quality_pred",
                 max_chars: int | None = 6000, **kwargs) -> None:
        super().__init__(model_dir, label_field=label_field, max_chars=max_chars, **kwargs)


class DomainClassifier(_Named):
    """nvidia/domain-classifier (26 English domains) from ``model_dir``. Defaults:
    ``label_field="domain_pred"``, ``max_chars=2000``, 512 tokens."""

    _hub_id, _max_seq_length = "nvidia/domain-classifier", 512

    def __init__(self, model_dir: str | None = None, *, label_field: str = "domain_pred",
                 max_chars: int | None = 2000, **kwargs) -> None:
        super().__init__(model_dir, label_field=label_field, max_chars=max_chars, **kwargs)


class MultilingualDomainClassifier(_Named):
    """nvidia/multilingual-domain-classifier (mDeBERTa-v3, 52 languages) from ``model_dir``.
    Defaults: ``label_field="multilingual_domain_pred"``, ``max_chars=2000``, 512 tokens."""

    _hub_id, _max_seq_length = "nvidia/multilingual-domain-classifier", 512

    def __init__(self, model_dir: str | None = None, *,
                 label_field: str = "multilingual_domain_pred", max_chars: int | None = 2000,
                 **kwargs) -> None:
        super().__init__(model_dir, label_field=label_field, max_chars=max_chars, **kwargs)


class ContentTypeClassifier(_Named):
    """nvidia/content-type-classifier-deberta (11 speech/content types) from ``model_dir``.
    Defaults: ``label_field="content_pred"``, ``max_chars=5000``, 1024 tokens."""

    _hub_id, _max_seq_length = "nvidia/content-type-classifier-deberta", 1024

    def __init__(self, model_dir: str | None = None, *, label_field: str = "content_pred",
                 max_chars: int | None = 5000, **kwargs) -> None:
        super().__init__(model_dir, label_field=label_field, max_chars=max_chars, **kwargs)
