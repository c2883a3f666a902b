"""Energy-based voice activity detection and signal measures (pure NumPy)."""

from __future__ import annotations

import numpy as np

__all__ = ["frame_energy_db", "voiced_frames", "speech_spans", "rms_dbfs", "clipping_fraction",
           "silence_fraction", "snr_estimate", "EPS"]

EPS = 1e-10


def frame_energy_db(wave: np.ndarray, sr: int, frame_ms: float = 25.0,
                    hop_ms: float = 10.0) -> np.ndarray:
    """Mean power per frame in dBFS (0 dB: a full-scale square wave)."""
    frame, hop = max(1, int(sr * frame_ms / 1000)), max(1, int(sr * hop_ms / 1000))
    if len(wave) < frame:
        wave = np.pad(wave, (0, frame - len(wave)))
    n = 1 + (len(wave) - frame) // hop
    csum = np.concatenate([[0.0], np.cumsum(np.square(wave, dtype=np.float64))])
    starts = hop * np.arange(n)
    power = np.maximum(csum[starts + frame] - csum[starts], 0.0) / frame  # O(len) via cumsum
    return 10.0 * np.log10(power + EPS)


def voiced_frames(wave: np.ndarray, sr: int, threshold_db: float = -40.0, frame_ms: float = 25.0,
                  hop_ms: float = 10.0) -> np.ndarray:
    """A boolean per frame: its energy is above ``threshold_db`` dBFS."""
    return frame_energy_db(wave, sr, frame_ms, hop_ms) > threshold_db


def speech_spans(wave: np.ndarray, sr: int, threshold_db: float = -40.0, hop_ms: float = 10.0,
                 frame_ms: float = 25.0, min_silence_s: float = 0.3) -> list[tuple[float, float]]:
    """(start, end) seconds of voiced regions, merging gaps shorter than ``min_silence_s``."""
    voiced = voiced_frames(wave, sr, threshold_db, frame_ms, hop_ms)
    hop = hop_ms / 1000.0
    spans: list[list[float]] = []
    for i, v in enumerate(voiced):
        if not v:
            continue
        start, end = i * hop, i * hop + frame_ms / 1000.0
        if spans and start - spans[-1][1] < min_silence_s:
            spans[-1][1] = end
        else:
            spans.append([start, end])
    total = len(wave) / sr
    return [(round(s, 4), round(min(e, total), 4)) for s, e in spans]


def rms_dbfs(wave: np.ndarray) -> float:
    """Root-mean-square level in dBFS (a full-scale sine is about -3 dBFS)."""
    rms = float(np.sqrt(np.mean(np.square(wave, dtype=np.float64)))) if len(wave) else 0.0
    return 20.0 * float(np.log10(rms + EPS))


def clipping_fraction(wave: np.ndarray, threshold: float = 0.999) -> float:
    """Fraction of samples whose magnitude reaches ``threshold`` (full scale is 1.0)."""
    return float(np.mean(np.abs(wave) >= threshold)) if len(wave) else 0.0


def silence_fraction(wave: np.ndarray, sr: int, threshold_db: float = -40.0) -> float:
    """Fraction of frames the energy VAD calls silent."""
    return float(1.0 - np.mean(voiced_frames(wave, sr, threshold_db)))


def snr_estimate(wave: np.ndarray, sr: int, noise_percentile: float = 10.0,
                 speech_percentile: float = 90.0) -> float:
    """Signal-to-noise estimate (dB) from the frame-energy distribution: the power of the loud
    frames (above ``speech_percentile``) over that of the quiet ones (below
    ``noise_percentile``). A steady signal scores near 0 dB; speech in pauses of silence high."""
    power = 10.0 ** (frame_energy_db(wave, sr) / 10.0)
    noise = power[power <= np.percentile(power, noise_percentile)].mean()
    signal = power[power >= np.percentile(power, speech_percentile)].mean()
    return float(10.0 * np.log10((signal + EPS) / (noise + EPS)))
