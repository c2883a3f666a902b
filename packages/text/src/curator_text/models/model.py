"""ModelStage: the GPU (or CPU) half of a model classifier. It batches the token lists the
:class:`~curator_text.models.TokenizerStage` wrote, pads each forward batch to its own longest row
(dynamic padding), runs the model (autocast on CUDA) and writes the subclass's output columns."""

from __future__ import annotations

import logging
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from curator.errors import ConfigError
from curator.resources import Resources
from curator.stages.base import ProcessingStage, StageIO

from curator_text.models.tokenizer import (
    ATTENTION_MASK_FIELD,
    INPUT_ID_FIELD,
    SEQ_ORDER_FIELD,
    check_local_dir,
)
from curator_text.tasks import DocumentBatch

__all__ = ["ModelStage", "forward_batches"]

log = logging.getLogger(__name__)


def forward_batches(lengths: np.ndarray, max_docs: int, max_tokens: int | None
                    ) -> list[tuple[int, int]]:
    """``(start, stop)`` row ranges in order: at most ``max_docs`` rows each and, when
    ``max_tokens`` is given, at most ``max_tokens`` padded tokens (rows x longest row; a single
    row longer than that is a batch of its own)."""
    out: list[tuple[int, int]] = []
    start, longest = 0, 0
    for i, n in enumerate(lengths.tolist()):
        new_longest = max(longest, n)
        rows = i - start + 1
        if i > start and (rows > max_docs or (max_tokens is not None
                                             and rows * new_longest > max_tokens)):
            out.append((start, i))
            start, new_longest = i, n
        longest = new_longest
    if len(lengths):
        out.append((start, len(lengths)))
    return out


class ModelStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Base of model inference stages. Subclasses implement :meth:`load_model` (return the
    model), :meth:`forward` (padded tensors -> model output) and :meth:`process_model_output`
    (output -> ``{column: values}``), and list their columns in :meth:`outputs`.

    Parameters:
        model_identifier: local model directory.
        model_inference_batch_size: most documents per forward pass.
        max_tokens_per_batch: most padded tokens per forward pass (None: no limit); with rows
            sorted by length this packs many short documents or a few long ones.
        has_seq_order: restore the original row order (rows were sorted by the tokenizer).
        padding_side: ``"right"`` or ``"left"``.
        autocast: run the forward pass under ``torch.autocast`` on CUDA (fp16/bf16).
        resources: ``Resources(gpus=1)`` to run on a GPU (CPU when none is present, logged).
    """

    modality = "text"
    kind = "stage"

    def __init__(self, model_identifier: str, *, model_inference_batch_size: int = 256,
                 max_tokens_per_batch: int | None = None, has_seq_order: bool = True,
                 padding_side: Literal["left", "right"] = "right", autocast: bool = True,
                 resources: Resources | None = None) -> None:
        self.model_identifier = check_local_dir(model_identifier, type(self).__name__)
        if model_inference_batch_size < 1:
            raise ConfigError(f"{type(self).__name__}: model_inference_batch_size must be >= 1, "
                              f"got {model_inference_batch_size!r}")
        if max_tokens_per_batch is not None and max_tokens_per_batch < 1:
            raise ConfigError(f"{type(self).__name__}: max_tokens_per_batch must be >= 1 or "
                              f"None, got {max_tokens_per_batch!r}")
        self.model_inference_batch_size = model_inference_batch_size
        self.max_tokens_per_batch = max_tokens_per_batch
        self.has_seq_order, self.padding_side, self.autocast = has_seq_order, padding_side, autocast
        if resources is not None:
            self.resources = resources
        self.model: Any = None
        self.device = "cpu"
        self._pad_id = 0

    # ---- what subclasses provide ---------------------------------------------------------------
    def load_model(self, device: str) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement load_model")

    def forward(self, input_ids: Any, attention_mask: Any) -> Any:
        return self.model(input_ids=input_ids, attention_mask=attention_mask)

    def process_model_output(self, outputs: Any) -> dict[str, list]:
        raise NotImplementedError(f"{type(self).__name__} must implement process_model_output")

    def output_types(self) -> dict[str, pa.DataType]:
        """Arrow types of output columns (others are inferred)."""
        return {}

    # ---- bookkeeping ---------------------------------------------------------------------------
    def inputs(self) -> StageIO:
        return ["data"], [INPUT_ID_FIELD, ATTENTION_MASK_FIELD] + (
            [SEQ_ORDER_FIELD] if self.has_seq_order else [])

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        want_gpu = self.resources.requires_gpu
        self.device = self.resources.torch_device()
        if want_gpu and self.device == "cpu":
            log.warning("%s: GPU requested but CUDA is not available; running on CPU", self.name)
        self.model = self.load_model(self.device)
        self.model.to(self.device).eval()
        pad = getattr(getattr(self.model, "config", None), "pad_token_id", None)
        self._pad_id = int(pad) if isinstance(pad, int) else 0

    def teardown(self) -> None:
        self.model = None
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:
            pass

    def _pad(self, rows: list[list[int]], value: int) -> np.ndarray:
        longest = max((len(r) for r in rows), default=0)
        out = np.full((len(rows), max(longest, 1)), value, dtype=np.int64)
        for i, r in enumerate(rows):
            if r:
                if self.padding_side == "right":
                    out[i, :len(r)] = r
                else:
                    out[i, longest - len(r):] = r
        return out

    def run_model(self, ids: list[list[int]]) -> dict[str, list]:
        """Model outputs for token-id lists, by column (rows in the given order)."""
        import torch

        lengths = np.fromiter((len(r) for r in ids), np.int64, count=len(ids))
        collected: dict[str, list] = {}
        use_autocast = self.autocast and self.device == "cuda"
        for start, stop in forward_batches(lengths, self.model_inference_batch_size,
                                           self.max_tokens_per_batch):
            rows = ids[start:stop]
            input_ids = torch.from_numpy(self._pad(rows, self._pad_id)).to(self.device)
            mask = torch.from_numpy(self._pad([[1] * len(r) for r in rows], 0)).to(self.device)
            with torch.inference_mode(), torch.autocast(device_type="cuda",
                                                        enabled=use_autocast):
                outputs = self.forward(input_ids, mask)
            for col, values in self.process_model_output(outputs).items():
                collected.setdefault(col, []).extend(values)
        return collected

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        for col in self.inputs()[1]:
            if col not in table.column_names:
                raise KeyError(f"{self.name}: column {col!r} missing; put a TokenizerStage "
                               f"for {self.model_identifier} before this stage")
        ids = table[INPUT_ID_FIELD].to_pylist()
        results = self.run_model(ids) if ids else {c: [] for c in self.outputs()[1]}
        table = table.drop_columns([INPUT_ID_FIELD, ATTENTION_MASK_FIELD])
        types = self.output_types()
        for col, values in results.items():
            arr = pa.array(values, type=types.get(col))
            if col in table.column_names:
                table = table.set_column(table.column_names.index(col), col, arr)
            else:
                table = table.append_column(col, arr)
        if self.has_seq_order and SEQ_ORDER_FIELD in table.column_names:
            order = np.argsort(table[SEQ_ORDER_FIELD].to_numpy(), kind="stable")
            table = table.take(pa.array(order)).drop_columns([SEQ_ORDER_FIELD])
        return task.derive(table)
