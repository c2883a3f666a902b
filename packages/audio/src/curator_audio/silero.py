"""Silero VAD from the ``silero-vad`` wheel: its TorchScript model ships inside the wheel
(``silero_vad/data/silero_vad.jit``), so nothing is downloaded.

Silero is a streaming model: it scores fixed windows (512 samples at 16 kHz, 256 at 8 kHz) in
order, carrying its state from one to the next, and ``silero_vad.get_speech_timestamps`` turns
the per-window probabilities into spans. :func:`speech_probabilities` does the first half over
blocks of audio as they are read (so a long recording is never held whole; only one float per
window is kept) and :func:`speech_timestamps` hands the probabilities to the wheel's own
``get_speech_timestamps_from_probs``: the spans are the ones ``get_speech_timestamps`` gives on
the whole audio."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["SILERO_SUPPORTED_RATES", "SILERO_TARGET_RATE", "load_silero", "speech_probabilities",
           "speech_timestamps"]

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


def _vad_rate(sr: int) -> tuple[int, int]:
    """(the rate Silero scores at, the decimation step Silero applies itself): 8 kHz and 16 kHz
    as they are, multiples of 16 kHz taken every ``sr // 16000``-th sample as
    ``get_speech_timestamps`` does, any other rate resampled to 16 kHz (step 1)."""
    if sr in (8000, 16000):
        return sr, 1
    if sr in SILERO_SUPPORTED_RATES:
        return SILERO_TARGET_RATE, sr // SILERO_TARGET_RATE
    return SILERO_TARGET_RATE, 1


def speech_probabilities(model: Any, blocks: Iterable[np.ndarray], sr: int
                         ) -> tuple[list[float], int]:
    """Silero's speech probability per window of a mono recording given as consecutive float32
    blocks at ``sr`` (any sizes), and the number of samples it scored (at its own rate, after
    decimation or resampling). Equal to what ``get_speech_timestamps`` computes on the whole
    audio: the same windows, the last one zero-padded, the model's state carried across."""
    import torch

    from curator_audio.decode import resample_blocks

    vad_sr, step = _vad_rate(int(sr))
    if vad_sr != sr and step == 1:
        blocks = resample_blocks(blocks, int(sr), vad_sr)
    window = 512 if vad_sr == 16000 else 256
    device = next(iter(model.parameters()), None)
    device = device.device if device is not None and device.device.type != "cpu" else None
    probs: list[float] = []
    pending = np.zeros(0, dtype=np.float32)
    phase = 0       # decimation: index (in the source) of the next sample kept, within a block
    scored = 0
    model.reset_states()
    with torch.inference_mode():
        def score(chunk: np.ndarray) -> None:
            audio = torch.from_numpy(chunk)
            if device is not None:
                audio = audio.to(device)
            probs.append(model(audio, vad_sr).item())

        for block in blocks:
            block = np.asarray(block, dtype=np.float32)
            if step > 1:
                kept = block[phase::step]
                phase = (phase - len(block)) % step
                block = kept
            scored += len(block)
            pending = np.concatenate([pending, block]) if len(pending) else block
            whole = len(pending) - len(pending) % window
            for i in range(0, whole, window):
                score(np.ascontiguousarray(pending[i:i + window]))
            pending = pending[whole:]
        if len(pending):
            score(np.pad(pending, (0, window - len(pending))))
    return probs, scored


def speech_timestamps(model: Any, wave: np.ndarray | Iterable[np.ndarray], sr: int, *,
                      threshold: float = 0.5, min_speech_duration_ms: float = 250,
                      max_speech_duration_s: float = 60.0, min_silence_duration_ms: float = 100,
                      speech_pad_ms: float = 30) -> list[tuple[float, float]]:
    """Speech spans ``(start, end)`` in seconds of a mono waveform (an array, or an iterable of
    consecutive blocks of it) as ``silero_vad.get_speech_timestamps`` finds them: on the audio
    as given when Silero takes its rate (8 kHz or a multiple of 16 kHz, which Silero decimates
    itself), else resampled to 16 kHz first."""
    from silero_vad.utils_vad import get_speech_timestamps_from_probs

    blocks = [wave] if isinstance(wave, np.ndarray) else wave
    probs, scored = speech_probabilities(model, blocks, sr)
    vad_sr, step = _vad_rate(int(sr))
    spans = get_speech_timestamps_from_probs(
        probs, sampling_rate=vad_sr, threshold=threshold,
        min_speech_duration_ms=min_speech_duration_ms,
        max_speech_duration_s=max_speech_duration_s,
        min_silence_duration_ms=min_silence_duration_ms, speech_pad_ms=speech_pad_ms,
        audio_length_samples=scored, step=step)
    rate = vad_sr * step
    return [(s["start"] / rate, s["end"] / rate) for s in spans]
