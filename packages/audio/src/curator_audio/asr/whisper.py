"""Whisper ASR from a Hugging Face ``WhisperForConditionalGeneration`` directory.

``model_dir`` is a local directory as ``save_pretrained`` / a hub download leaves it:
``config.json``, ``generation_config.json``, ``model.safetensors`` (or ``pytorch_model.bin``),
the tokenizer files (``vocab.json``, ``merges.txt``, ``tokenizer.json`` ...) and
``preprocessor_config.json``. Nothing is fetched from the hub (``local_files_only``). A CTranslate2 conversion
(``model.bin``) is run by :class:`~curator_audio.asr.ct2_whisper.CTranslate2WhisperModel` instead.

Audio longer than ``chunk_length_s`` (Whisper's 30 s window by default) is cut into consecutive
chunks that are transcribed in the same batch and joined with spaces (long-form chunking).

With timestamps (``ASRStage(return_timestamps=True)``) Whisper generates its timestamp tokens
(``<|0.00|>`` .. ``<|30.00|>``, 20 ms apart, right after ``<|notimestamps|>``) and each text
between a pair becomes a segment ``{"start", "end", "text"}`` in seconds from the start of the
audio, as transformers' ASR pipeline returns them (its ``chunks``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from curator.errors import ConfigError

from curator_audio.asr.base import ASRModel

__all__ = ["WhisperModel"]


class WhisperModel(ASRModel):
    """``WhisperForConditionalGeneration`` + ``WhisperProcessor``, greedy ``generate``;
    segment-level timestamps with :meth:`transcribe_with_timestamps`.

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
    supports_timestamps = True
    time_precision = 0.02
    """Seconds between two of Whisper's timestamp tokens."""

    def __init__(self, model: Any, processor: Any, device: str, *, language: str | None,
                 task: str, chunk_length_s: float, max_new_tokens: int, num_beams: int) -> None:
        self.model, self.processor, self.device = model, processor, device
        self.language, self.task, self.num_beams = language, task, num_beams
        self.chunk_samples = int(chunk_length_s * self.sample_rate)
        self.max_new_tokens = min(max_new_tokens, model.config.max_target_positions - 4)

    @classmethod
    def load(cls, model_dir: str, device: str = "cpu", *, language: str | None = None,
             task: str = "transcribe", chunk_length_s: float = 30.0, max_new_tokens: int = 128,
             num_beams: int = 1, fp16: bool = True, **ct2_options: Any) -> WhisperModel:
        from curator_audio.asr.ct2_whisper import CTranslate2WhisperModel, is_ct2_whisper_dir

        if is_ct2_whisper_dir(model_dir):  # a CTranslate2 conversion: the faster-whisper backend
            return CTranslate2WhisperModel.load(  # type: ignore[return-value]
                model_dir, device, language=language, task=task, num_beams=num_beams,
                fp16=fp16, max_new_tokens=max_new_tokens if max_new_tokens != 128 else None,
                chunk_length_s=chunk_length_s, **ct2_options)
        if ct2_options:
            raise ConfigError(f"whisper: options {sorted(ct2_options)} are the CTranslate2 "
                              f"backend's; {model_dir!r} is a Hugging Face directory")
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
        return [text for text, _ in self._run(waveforms, timestamps=False)]

    def transcribe_with_timestamps(self, waveforms: list[np.ndarray]
                                   ) -> list[tuple[str, list[dict[str, Any]]]]:
        """Per waveform: the transcript and its segments ``{"start", "end", "text"}`` (seconds
        from the start; ordered, within the audio). A segment left open when generation stops
        ends with its chunk; times past a chunk's end are clamped to it."""
        return self._run(waveforms, timestamps=True)

    def _run(self, waveforms: list[np.ndarray], timestamps: bool
             ) -> list[tuple[str, list[dict[str, Any]]]]:
        import torch

        if not waveforms:
            return []
        pieces, owner, offsets = [], [], []
        for k, w in enumerate(waveforms):
            for j, c in enumerate(self.chunks(np.asarray(w, dtype=np.float32))):
                pieces.append(c)
                owner.append(k)
                offsets.append(j * self.chunk_samples / self.sample_rate)
        feats = self.processor.feature_extractor(pieces, sampling_rate=self.sample_rate,
                                                 return_tensors="pt", return_attention_mask=True)
        inputs = feats.input_features.to(self.device, dtype=self.model.dtype)
        with torch.inference_mode():
            ids = self.model.generate(inputs, attention_mask=feats.attention_mask.to(self.device),
                                      language=self.language, task=self.task,
                                      return_timestamps=timestamps,
                                      max_new_tokens=self.max_new_tokens,
                                      num_beams=self.num_beams, do_sample=False)
        texts = self.processor.tokenizer.batch_decode(ids, skip_special_tokens=True)
        out: list[tuple[list[str], list[dict[str, Any]]]] = [([], []) for _ in waveforms]
        for p, (k, t) in enumerate(zip(owner, texts, strict=True)):
            if t.strip():
                out[k][0].append(t.strip())
            if timestamps:
                out[k][1].extend(self._segments(ids[p].tolist(), offsets[p],
                                                len(pieces[p]) / self.sample_rate))
        return [(" ".join(parts), segments) for parts, segments in out]

    def _segments(self, ids: list[int], offset: float, duration: float) -> list[dict[str, Any]]:
        """The ``{"start", "end", "text"}`` segments of one chunk's generated ``ids``: text
        between two timestamp tokens (text after a closing timestamp starts there; text left
        open at the end runs to the chunk's end). Times are clamped to the chunk and made
        non-decreasing; segments without text are dropped."""
        tokenizer = self.processor.tokenizer
        begin = self.model.generation_config.no_timestamps_token_id + 1
        special = set(tokenizer.all_special_ids)
        segments: list[dict[str, Any]] = []
        start: float | None = None
        last, words = 0.0, []
        for tok in [*ids, None]:
            if tok is not None and tok < begin:
                if tok not in special:
                    words.append(tok)
                continue
            time = duration if tok is None else (tok - begin) * self.time_precision
            if start is None and not words:
                start = time
                continue
            text = tokenizer.decode(words, skip_special_tokens=True).strip()
            if text:
                floor = segments[-1]["end"] - offset if segments else 0.0
                lo = max(min(last if start is None else start, duration), floor)
                segments.append({"start": round(offset + lo, 2),
                                 "end": round(offset + max(min(time, duration), lo), 2),
                                 "text": text})
            start, last, words = None, time, []
        return segments
