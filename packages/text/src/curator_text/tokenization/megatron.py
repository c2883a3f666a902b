"""MegatronTokenizerWriter: tokenizes a text column and writes one ``.bin`` + ``.idx`` pair per
task in Megatron-LM's indexed-dataset format (``MMIDIDX``), ready for its GPT dataset.

``.idx`` layout (little endian): the 9-byte header ``MMIDIDX\\x00\\x00``; version (uint64, 1);
dtype code (uint8, :data:`DTYPE_CODES`); sequence count (uint64); document count (uint64,
sequences + 1); sequence lengths (int32 each); sequence byte offsets into ``.bin`` (int64 each);
document index (int64 each: 0, 1, ..., n - one document per sequence). ``.bin``: the tokens of all
sequences back to back in the dtype."""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator import FileGroupTask
from curator.errors import ConfigError
from curator.io import atomic_write

from curator_text.io.writers import _Writer
from curator_text.models.tokenizer import check_local_dir, load_tokenizer
from curator_text.tasks import DocumentBatch

__all__ = ["MegatronTokenizerWriter", "write_indexed_dataset", "INDEX_HEADER", "DTYPE_CODES"]

INDEX_HEADER = b"MMIDIDX\x00\x00"
DTYPE_CODES: dict[type, int] = {np.uint8: 1, np.int8: 2, np.int16: 3, np.int32: 4, np.int64: 5,
                                np.float64: 6, np.float32: 7, np.uint16: 8}
"""Megatron-LM's numeric dtype codes (``megatron/core/datasets/indexed_dataset.py``)."""


def write_indexed_dataset(prefix: str, sequences: Iterable[list[int] | np.ndarray],
                          dtype: type = np.uint16) -> tuple[int, int]:
    """Write ``sequences`` (one document each) to ``prefix.bin`` + ``prefix.idx``, each
    atomically (the ``.idx`` last, so an ``.idx`` always describes a complete ``.bin``).
    Returns ``(number of sequences, number of tokens)``."""
    if dtype not in DTYPE_CODES:
        raise ValueError(f"write_indexed_dataset: dtype must be one of "
                         f"{[d.__name__ for d in DTYPE_CODES]}, got {dtype!r}")
    lengths: list[int] = []
    with atomic_write(prefix + ".bin", "wb") as fh:
        for seq in sequences:
            arr = np.asarray(seq, dtype=dtype)
            lengths.append(len(arr))
            fh.write(arr.tobytes(order="C"))
    sizes = np.asarray(lengths, dtype=np.int32)
    pointers = np.zeros(len(sizes), dtype=np.int64)
    if len(sizes):
        pointers[1:] = np.cumsum(sizes[:-1], dtype=np.int64) * np.dtype(dtype).itemsize
    doc_index = np.arange(len(sizes) + 1, dtype=np.int64)
    with atomic_write(prefix + ".idx", "wb") as fh:
        fh.write(INDEX_HEADER)
        fh.write(struct.pack("<Q", 1))
        fh.write(struct.pack("<B", DTYPE_CODES[dtype]))
        fh.write(struct.pack("<Q", len(sizes)))
        fh.write(struct.pack("<Q", len(doc_index)))
        for arr in (sizes, pointers, doc_index):
            fh.write(arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes(order="C"))
    return len(sizes), int(sizes.sum())


@dataclass
class MegatronTokenizerWriter(_Writer):
    """Tokenizes ``text_field`` with a local tokenizer and writes ``{path}/{task_id}.bin`` and
    ``.idx`` (Megatron-LM's indexed dataset, one document per row). Tokens are ``uint16`` when
    the vocabulary fits (<= 65536 ids), else ``int32``. Rows with a null text go to the rejected
    sink. The output task lists both files with ``num_tokens``, ``token_size`` and
    ``eod_token_id`` in its metadata.

    Parameters:
        path: output directory. mode: save mode (see :class:`JsonlWriter`).
        model_identifier: local tokenizer directory (``save_pretrained`` layout).
        text_field: the text column.
        tokenization_batch_size: texts per tokenizer call.
        append_eod: add the tokenizer's ``eos_token_id`` after each document (an error when the
            tokenizer has none).
        add_special_tokens: let the tokenizer add its special tokens (default False, as
            NeMo Curator).
        cache_dir, hf_token: accepted for NeMo Curator compatibility; unused.
    """

    model_identifier: str | None = None
    cache_dir: str | None = None
    hf_token: str | None = None
    text_field: str = "text"
    tokenization_batch_size: int = 1000
    append_eod: bool = False
    add_special_tokens: bool = False
    name: str = "MegatronTokenizerWriter"
    extension: ClassVar[str] = ".bin"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.model_identifier = check_local_dir(self.model_identifier, self.name)
        if self.write_to_filename:
            raise ConfigError(f"{self.name}: write_to_filename is not supported (one .bin/.idx "
                              f"pair per task)")
        if self.tokenization_batch_size < 1:
            raise ConfigError(f"{self.name}: tokenization_batch_size must be >= 1")
        self._tokenizer: Any = None

    def inputs(self):
        return ["data"], [self.text_field]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        self._tokenizer = load_tokenizer(self.model_identifier)
        if self.append_eod and self._tokenizer.eos_token_id is None:
            raise ValueError(f"{self.name}: append_eod=True but the tokenizer in "
                             f"{self.model_identifier} has no eos_token; set one or use "
                             f"append_eod=False")

    @property
    def token_dtype(self) -> type:
        return np.uint16 if len(self._tokenizer) <= np.iinfo(np.uint16).max + 1 else np.int32

    def _token_batches(self, texts: list[str]) -> Iterable[list[int]]:
        eod = [self._tokenizer.eos_token_id] if self.append_eod else []
        for s in range(0, len(texts), self.tokenization_batch_size):
            enc = self._tokenizer(texts[s:s + self.tokenization_batch_size], padding=False,
                                  truncation=False, add_special_tokens=self.add_special_tokens,
                                  return_attention_mask=False, return_token_type_ids=False)
            for ids in enc["input_ids"]:
                yield ids + eod

    def process(self, task: DocumentBatch) -> FileGroupTask:
        table = task.to_pyarrow()
        if self.text_field not in table.column_names:
            raise KeyError(f"{self.name}: text_field {self.text_field!r} not in columns "
                           f"{table.column_names}")
        col = table[self.text_field]
        if col.null_count:
            nulls = col.is_null()
            for row in table.filter(nulls).to_pylist():
                self.reject(task, f"{self.text_field} is null: nothing to tokenize",
                            kind="filtered", record=row)
            col = col.filter(pc.invert(nulls))
        texts = col.cast(pa.string()).to_pylist()
        prefix = self.output_file(task.task_id, suffixes=(".bin", ".idx"))
        _, n_tokens = write_indexed_dataset(prefix, self._token_batches(texts), self.token_dtype)
        written = [prefix + ".bin", prefix + ".idx"]
        dtype = self.token_dtype
        return FileGroupTask(task_id=task.task_id, dataset_name=task.dataset_name, data=written,
                             metadata={**task.metadata, "format": "megatron",
                                       "file_prefix": prefix, "num_rows": len(texts),
                                       "num_tokens": n_tokens,
                                       "token_size": np.dtype(dtype).itemsize,
                                       "eod_token_id": self._tokenizer.eos_token_id
                                       if self.append_eod else None},
                             stage_perf=list(task.stage_perf))
