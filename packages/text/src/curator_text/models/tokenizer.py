"""TokenizerStage: batched Hugging Face (fast) tokenization of a text column into token-id lists,
the CPU half of every model classifier."""

from __future__ import annotations

import os
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator.errors import ConfigError
from curator.stages.base import ProcessingStage, StageIO

from curator_text.tasks import DocumentBatch

__all__ = ["TokenizerStage", "load_tokenizer", "check_local_dir", "INPUT_ID_FIELD",
           "ATTENTION_MASK_FIELD", "SEQ_ORDER_FIELD"]

INPUT_ID_FIELD = "input_ids"
ATTENTION_MASK_FIELD = "attention_mask"
SEQ_ORDER_FIELD = "_curator_seq_order"
"""Original row position, added when rows are sorted by length and removed by the model stage."""


def check_local_dir(path: str | None, stage: str, param: str = "model_identifier") -> str:
    """``path`` when it is an existing local directory, else a ValueError naming ``stage`` and
    ``param`` (models are never downloaded)."""
    if not path:
        raise ValueError(f"{stage}: {param} (a local model directory) is required; nothing is "
                         f"downloaded")
    if not os.path.isdir(path):
        raise ValueError(f"{stage}: {param}={path!r} is not a local directory; save the model "
                         f"and its tokenizer there (save_pretrained) and pass that path")
    return os.path.abspath(path)


def load_tokenizer(path: str, **kwargs: Any) -> Any:
    """A transformers ``AutoTokenizer`` from a local directory (``local_files_only``; fast
    tokenizers preferred)."""
    try:
        from transformers import AutoTokenizer
    except ImportError as e:
        raise ImportError("model stages need transformers: install curator-text[embed]") from e
    return AutoTokenizer.from_pretrained(path, local_files_only=True, **kwargs)


class TokenizerStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Tokenizes ``text_field`` with the tokenizer saved in ``model_identifier`` (a local
    directory) and adds ``input_ids`` and ``attention_mask`` list columns (unpadded: the model
    stage pads each forward batch to its own longest row).

    Parameters:
        model_identifier: local directory holding the tokenizer files (``model_dir``: alias).
        text_field: the text column (nulls are tokenized as empty text).
        max_chars: cut each text to this many characters before tokenizing (None: no cut).
        max_seq_length: truncate to this many tokens (None: the tokenizer's
            ``model_max_length`` when it is finite).
        padding_side: ``"right"`` or ``"left"``; recorded for the model stage.
        sort_by_length: sort rows by token count (shortest first) so forward batches need
            little padding; the original order is kept in ``_curator_seq_order`` and restored
            by the model stage.
        tokenization_batch_size: texts per tokenizer call.
        cache_dir, hf_token: accepted for NeMo Curator compatibility; unused.
    """

    name = "TokenizerStage"
    modality = "text"
    kind = "stage"

    def __init__(self, model_identifier: str | None = None, *, model_dir: str | None = None,
                 cache_dir: str | None = None, hf_token: str | None = None,
                 text_field: str = "text", max_chars: int | None = None,
                 max_seq_length: int | None = None,
                 padding_side: Literal["left", "right"] = "right", sort_by_length: bool = True,
                 tokenization_batch_size: int = 4096) -> None:
        self.model_identifier = check_local_dir(model_identifier or model_dir, type(self).__name__)
        self.name = f"{os.path.basename(self.model_identifier.rstrip('/'))}_tokenizer"
        if padding_side not in ("left", "right"):
            raise ConfigError(f"TokenizerStage: padding_side must be 'left' or 'right', got "
                              f"{padding_side!r}")
        for param, value in (("max_chars", max_chars), ("max_seq_length", max_seq_length)):
            if value is not None and value < 1:
                raise ConfigError(f"TokenizerStage: {param} must be >= 1 or None, got {value!r}")
        self.cache_dir, self.hf_token = cache_dir, hf_token
        self.text_field, self.max_chars, self.max_seq_length = text_field, max_chars, max_seq_length
        self.padding_side, self.sort_by_length = padding_side, sort_by_length
        self.tokenization_batch_size = tokenization_batch_size
        self._tokenizer: Any = None

    def inputs(self) -> StageIO:
        return ["data"], [self.text_field]

    def outputs(self) -> StageIO:
        cols = [INPUT_ID_FIELD, ATTENTION_MASK_FIELD]
        return ["data"], cols + ([SEQ_ORDER_FIELD] if self.sort_by_length else [])

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        self._tokenizer = load_tokenizer(self.model_identifier)
        self._tokenizer.padding_side = self.padding_side

    def _max_length(self) -> int | None:
        if self.max_seq_length is not None:
            return self.max_seq_length
        limit = getattr(self._tokenizer, "model_max_length", None)
        return int(limit) if limit and limit < 1_000_000 else None

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Token ids of ``texts`` (special tokens added, truncated to the maximum length)."""
        max_len = self._max_length()
        out: list[list[int]] = []
        for s in range(0, len(texts), self.tokenization_batch_size):
            enc = self._tokenizer(texts[s:s + self.tokenization_batch_size], padding=False,
                                  truncation=max_len is not None, max_length=max_len,
                                  return_attention_mask=False, return_token_type_ids=False)
            out.extend(enc["input_ids"])
        return out

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        if self.text_field not in table.column_names:
            raise KeyError(f"{self.name}: text_field {self.text_field!r} not in columns "
                           f"{table.column_names}")
        col = pc.fill_null(table[self.text_field].cast(pa.string()), "")
        if self.max_chars is not None:
            col = pc.utf8_slice_codeunits(col, 0, self.max_chars)
        ids = self.tokenize(col.to_pylist())
        lengths = np.fromiter((len(x) for x in ids), np.int64, count=len(ids))
        table = table.drop_columns([c for c in (INPUT_ID_FIELD, ATTENTION_MASK_FIELD,
                                                SEQ_ORDER_FIELD) if c in table.column_names])
        offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
        flat = np.fromiter((t for row in ids for t in row), np.int32, count=int(lengths.sum()))
        table = table.append_column(INPUT_ID_FIELD, pa.ListArray.from_arrays(offsets, flat))
        table = table.append_column(ATTENTION_MASK_FIELD, pa.ListArray.from_arrays(
            offsets, np.ones(len(flat), np.int8)))
        if self.sort_by_length:
            table = table.append_column(SEQ_ORDER_FIELD, pa.array(np.arange(len(ids))))
            table = table.take(pa.array(np.argsort(lengths, kind="stable")))
        return task.derive(table)
