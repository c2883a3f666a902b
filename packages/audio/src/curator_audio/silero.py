"""Silero VAD from the ``silero-vad`` wheel: its TorchScript model ships inside the wheel
(``silero_vad/data/silero_vad.jit``), so nothing is downloaded."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SILERO_SUPPORTED_RATES", "SILERO_TARGET_RATE", "load_silero", "speech_timestamps"]

SILERO_SUPPORTED_RATES = frozenset({8000, 16000, 32000, 48000, 64000, 96000})
SILERO_TARGET_RATE = 16000


def load_silero(device: str = "cpu") -> Any:
    """The Silero VAD TorchScript model shipped in the ``silero-vad`` wheel, on ``device``."""
    import warnings

    from silero_vad import load_silero_vad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_silero_vad()
    return model.to(device) if device != "cpu" else model


def speech_timestamps(model: Any, wave: np.ndarray, sr: int, *, threshold: float = 0.5,
                      min_speech_duration_ms: float = 250, max_speech_duration_s: float = 60.0,
                      min_silence_duration_ms: float = 100, speech_pad_ms: float = 30
                      ) -> list[tuple[float, float]]:
    """Speech spans ``(start, end)`` in seconds of a mono waveform, by
    ``silero_vad.get_speech_timestamps`` on the audio as given when Silero takes its rate (8 kHz
    or a multiple of 16 kHz, which Silero decimates itself), else resampled to 16 kHz first."""
    import warnings

    import torch
    from silero_vad import get_speech_timestamps

    from curator_audio.decode import resample

    vad_sr = int(sr)
    if vad_sr not in SILERO_SUPPORTED_RATES:
        wave, vad_sr = resample(wave, vad_sr, SILERO_TARGET_RATE), SILERO_TARGET_RATE
    audio = torch.from_numpy(np.ascontiguousarray(wave, dtype=np.float32))
    device = next(iter(model.parameters()), None)
    if device is not None and device.device.type != "cpu":
        audio = audio.to(device.device)
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.filterwarnings("ignore", message="Sampling rate is a multipl")
        spans = get_speech_timestamps(
            audio, model, sampling_rate=vad_sr, threshold=threshold,
            min_speech_duration_ms=min_speech_duration_ms,
            max_speech_duration_s=max_speech_duration_s,
            min_silence_duration_ms=min_silence_duration_ms, speech_pad_ms=speech_pad_ms)
    return [(s["start"] / vad_sr, s["end"] / vad_sr) for s in spans]
