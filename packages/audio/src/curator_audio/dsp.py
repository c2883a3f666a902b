"""Spectra in NumPy/SciPy with librosa's conventions (centred, zero-padded frames; periodic
windows; ``power_to_db``), so NeMo's spectral features are computed without librosa."""

from __future__ import annotations

import numpy as np

__all__ = ["frames", "stft", "power_to_db"]


def frames(y: np.ndarray, frame_length: int, hop_length: int) -> np.ndarray:
    """``(n_frames, frame_length)`` views of ``y`` every ``hop_length`` samples (no copy)."""
    if len(y) < frame_length:
        y = np.pad(y, (0, frame_length - len(y)))
    n = 1 + (len(y) - frame_length) // hop_length
    return np.lib.stride_tricks.as_strided(
        y, shape=(n, frame_length), strides=(y.strides[0] * hop_length, y.strides[0]),
        writeable=False)


def stft(y: np.ndarray, n_fft: int = 2048, hop_length: int | None = None,
         window: str = "hann", center: bool = True, max_frames: int = 4096) -> np.ndarray:
    """``librosa.stft`` (``pad_mode="constant"``): complex ``(1 + n_fft // 2, n_frames)``.
    Frames are transformed ``max_frames`` at a time so long audio never holds every frame's
    windowed copy at once."""
    import scipy.fft
    import scipy.signal

    hop = hop_length or n_fft // 4
    y = np.asarray(y, dtype=np.float32)
    if center:
        y = np.pad(y, (n_fft // 2, n_fft // 2))
    win = scipy.signal.get_window(window, n_fft, fftbins=True).astype(np.float32)
    view = frames(y, n_fft, hop)
    out = np.empty((1 + n_fft // 2, len(view)), dtype=np.complex64)
    for i in range(0, len(view), max_frames):
        out[:, i:i + max_frames] = scipy.fft.rfft(view[i:i + max_frames] * win, axis=1).T
    return out


def power_to_db(s: np.ndarray | float, ref: float = 1.0, amin: float = 1e-10,
                top_db: float | None = 80.0) -> np.ndarray:
    """``librosa.power_to_db``: ``10 log10(max(amin, S) / max(amin, ref))``, floored at
    ``top_db`` below the maximum."""
    s = np.asarray(s, dtype=np.float64)
    db = 10.0 * np.log10(np.maximum(amin, s)) - 10.0 * np.log10(max(amin, abs(ref)))
    if top_db is not None:
        db = np.maximum(db, db.max() - top_db)
    return db
