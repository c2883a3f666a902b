"""EmbeddingCreatorStage: mean-pooled, L2-normalised sentence embeddings from a local model."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
from curator.errors import ConfigError
from curator.resources import Resources
from curator.stages.base import ProcessingStage, StageIO
from curator.stages.lifecycle import ensure_setup

from curator_text.tasks import DocumentBatch

__all__ = ["EmbeddingCreatorStage"]


class EmbeddingCreatorStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Embed each document's text with a Hugging Face ``transformers`` encoder.

    The model is loaded from a local directory (``AutoModel`` + ``AutoTokenizer``, no download);
    token embeddings are mean-pooled over the attention mask and L2-normalised, and written as a
    ``list<float32>`` column. Runs on CUDA when the stage has GPU resources and a GPU is present,
    otherwise on CPU.

    Parameters:
        model_identifier: the local model directory (``model_dir`` is an alias).
        text_field: the text column; embedding_field: the column written.
        max_seq_length: tokens per document (longer texts are truncated).
        model_inference_batch_size: documents per forward pass.
        embedding_pooling: ``"mean_pooling"`` or ``"cls_token"``.
        resources: e.g. ``Resources(gpus=1)`` to run on a GPU.
    """

    name = "EmbeddingCreator"
    modality = "text"
    kind = "embedder"

    def __init__(self, model_identifier: str | None = None, *, model_dir: str | None = None,
                 text_field: str = "text", embedding_field: str = "embeddings",
                 max_seq_length: int = 512, model_inference_batch_size: int = 64,
                 embedding_pooling: str = "mean_pooling",
                 resources: Resources | None = None) -> None:
        path = model_identifier or model_dir
        if not path:
            raise ConfigError("EmbeddingCreatorStage: model_identifier (a local model directory) "
                              "is required")
        if not os.path.isdir(path):
            raise ConfigError(f"EmbeddingCreatorStage: model_identifier={path!r} is not a local "
                              f"directory; save the model there with save_pretrained()")
        if embedding_pooling not in ("mean_pooling", "cls_token"):
            raise ConfigError(f"EmbeddingCreatorStage: embedding_pooling must be 'mean_pooling' "
                              f"or 'cls_token', got {embedding_pooling!r}")
        if model_inference_batch_size < 1 or max_seq_length < 1:
            raise ConfigError("EmbeddingCreatorStage: model_inference_batch_size and "
                              "max_seq_length must be >= 1")
        self.model_identifier = path
        self.text_field, self.embedding_field = text_field, embedding_field
        self.max_seq_length = max_seq_length
        self.model_inference_batch_size = model_inference_batch_size
        self.embedding_pooling = embedding_pooling
        if resources is not None:
            self.resources = resources
        self._model: Any = None
        self._tokenizer: Any = None
        self._device = "cpu"

    def inputs(self) -> StageIO:
        return ["data"], [self.text_field]

    def outputs(self) -> StageIO:
        return ["data"], [self.embedding_field]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        from transformers import AutoModel, AutoTokenizer

        self._device = self.resources.torch_device()
        self._tokenizer = AutoTokenizer.from_pretrained(self.model_identifier,
                                                        local_files_only=True)
        self._model = AutoModel.from_pretrained(self.model_identifier, local_files_only=True)
        self._model.to(self._device).eval()

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Embeddings of ``texts`` (unit-norm lists of floats)."""
        import torch

        ensure_setup(self)  # also called on its own, outside a pipeline
        out: list[list[float]] = []
        for s in range(0, len(texts), self.model_inference_batch_size):
            batch = self._tokenizer(texts[s:s + self.model_inference_batch_size], padding=True,
                                    truncation=True, max_length=self.max_seq_length,
                                    return_tensors="pt").to(self._device)
            with torch.inference_mode():
                hidden = self._model(**batch).last_hidden_state
            if self.embedding_pooling == "cls_token":
                emb = hidden[:, 0]
            else:
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                emb = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            emb = torch.nn.functional.normalize(emb.float(), dim=-1)
            out.extend(emb.cpu().numpy().tolist())
        return out

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.data
        if self.text_field not in table.column_names:
            raise KeyError(f"{self.name}: no column {self.text_field!r} in task {task.task_id} "
                           f"(columns: {table.column_names})")
        texts = [t if isinstance(t, str) else "" for t in table.column(self.text_field).to_pylist()]
        col = pa.array(self.embed(texts), type=pa.list_(pa.float32()))
        if self.embedding_field in table.column_names:
            table = table.drop_columns([self.embedding_field])
        return task.derive(table.append_column(self.embedding_field, col))
