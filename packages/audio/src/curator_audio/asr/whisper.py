"""Whisper ASR from a Hugging Face ``WhisperForConditionalGeneration`` directory.

``model_dir`` is a local directory as ``save_pretrained`` / a hub download leaves it:
``config.json``, ``generation_config.json``, ``model.safetensors`` (or ``pytorch_model.bin``),
the tokenizer files (``vocab.json``, ``merges.txt``, ``tokenizer.json`` ...) and
``preprocessor_config.json``. Nothing is fetched from the hub (``local_files_only``).

Audio longer than ``chunk_length_s`` (Whisper's 30 s window by default) is cut into consecutive
chunks that are transcribed in the same batch and joined with spaces (long-form chunking).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from curator.errors import ConfigError

from curator_audio.asr.base import ASRModel

__all__ = ["WhisperModel"]


class WhisperModel(ASRModel):
    """``WhisperForConditionalGeneration`` + ``WhisperProcessor``, greedy ``generate``.

    Options (``ASRStage(model_kwargs={...})``):
        language: e.g. ``"en"`` or ``"english"``; ``None`` lets the model detect it.
        task: ``"transcribe"`` or ``"translate"`` (to English).
        chunk_length_s: seconds per chunk for long audio (at most 30, Whisper's window).
        max_new_tokens: tokens generated per chunk (capped at the decoder's
            ``max_target_positions`` less the 4 prompt tokens).
        num_beams: beam width (1: greedy).
        fp16: half precision on CUDA.
    """

    sample_rate = 16000

    def __init__(self, model: Any, processor: Any, device: str, *, language: str | None,
                 task: str, chunk_length_s: float, max_new_tokens: int, num_beams: int) -> None:
        self.model, self.processor, self.device = model, processor, device
        self.language, self.task, self.num_beams = language, task, num_beams
        self.chunk_samples = int(chunk_length_s * self.sample_rate)
        self.max_new_tokens = min(max_new_tokens, model.config.max_target_positions - 4)

    @classmethod
    def load(cls, model_dir: str, device: str = "cpu", *, language: str | None = None,
             task: str = "transcribe", chunk_length_s: float = 30.0, max_new_tokens: int = 128,
             num_beams: int = 1, fp16: bool = True) -> WhisperModel:
        import torch
        from transformers import WhisperForConditionalGeneration, WhisperProcessor

        if "://" in model_dir:
            raise ConfigError(f"whisper: model_dir must be a local directory (transformers loads "
                              f"local files only), got {model_dir!r}; copy the model to each node")
        if task not in ("transcribe", "translate"):
            raise ConfigError(f"whisper: task must be 'transcribe' or 'translate', got {task!r}")
        if not 0 < chunk_length_s <= 30:
            raise ConfigError(f"whisper: chunk_length_s must be in (0, 30], got {chunk_length_s}")
        processor = WhisperProcessor.from_pretrained(model_dir, local_files_only=True)
        dtype = torch.float16 if (fp16 and device.startswith("cuda")) else torch.float32
        model = WhisperForConditionalGeneration.from_pretrained(
            model_dir, local_files_only=True, dtype=dtype).eval().to(device)
        return cls(model, processor, device, language=language, task=task,
                   chunk_length_s=chunk_length_s, max_new_tokens=max_new_tokens,
                   num_beams=num_beams)

    def chunks(self, wave: np.ndarray) -> list[np.ndarray]:
        """``wave`` cut into consecutive pieces of at most ``chunk_length_s`` (at least one)."""
        n = self.chunk_samples
        return [wave[i:i + n] for i in range(0, max(len(wave), 1), n)] or [wave]

    def transcribe(self, waveforms: list[np.ndarray]) -> list[str]:
        import torch

        if not waveforms:
            return []
        pieces, owner = [], []
        for k, w in enumerate(waveforms):
            for c in self.chunks(np.asarray(w, dtype=np.float32)):
                pieces.append(c)
                owner.append(k)
        feats = self.processor.feature_extractor(pieces, sampling_rate=self.sample_rate,
                                                 return_tensors="pt", return_attention_mask=True)
        inputs = feats.input_features.to(self.device, dtype=self.model.dtype)
        with torch.inference_mode():
            ids = self.model.generate(inputs, attention_mask=feats.attention_mask.to(self.device),
                                      language=self.language, task=self.task,
                                      max_new_tokens=self.max_new_tokens,
                                      num_beams=self.num_beams, do_sample=False)
        texts = self.processor.tokenizer.batch_decode(ids, skip_special_tokens=True)
        out: list[list[str]] = [[] for _ in waveforms]
        for k, t in zip(owner, texts, strict=True):
            if t.strip():
                out[k].append(t.strip())
        return [" ".join(parts) for parts in out]
