"""Decoding audio files with soundfile (wav, flac, ogg, mp3) and resampling with torchaudio."""

from __future__ import annotations

import io
from typing import Any

import numpy as np

__all__ = ["AudioDecodeError", "load_audio", "audio_info", "resample", "to_mono", "record_waveform"]

SUPPORTED_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3")


class AudioDecodeError(ValueError):
    """A file that cannot be decoded: unreadable, empty or truncated."""


def _open_bytes(path: str) -> io.BytesIO:
    import fsspec

    with fsspec.open(path, "rb") as fh:
        data = fh.read()
    if not data:
        raise AudioDecodeError(f"{path}: empty file (0 bytes)")
    return io.BytesIO(data)


def _check_wav_complete(path: str, raw: bytes) -> None:
    """libsndfile silently reads a cut-off WAV; compare its ``data`` chunk size with the bytes."""
    if len(raw) < 12 or raw[:4] != b"RIFF" or raw[8:12] != b"WAVE":
        return
    pos = 12
    while pos + 8 <= len(raw):
        cid, size = raw[pos:pos + 4], int.from_bytes(raw[pos + 4:pos + 8], "little")
        if cid == b"data":
            have = len(raw) - pos - 8
            if size != 0xFFFFFFFF and have < size:
                raise AudioDecodeError(f"{path}: truncated WAV: data chunk declares {size} bytes, "
                                       f"file holds {have}")
            return
        pos += 8 + size + (size & 1)


def audio_info(path: str) -> dict[str, Any]:
    """Sample rate, frames, channels and duration (seconds) of ``path`` from its header."""
    import soundfile as sf

    buf = _open_bytes(path)
    _check_wav_complete(path, buf.getvalue())
    try:
        info = sf.info(buf)
    except AudioDecodeError:
        raise
    except Exception as exc:
        raise AudioDecodeError(f"{path}: {type(exc).__name__}: {exc}") from exc
    return {"sample_rate": info.samplerate, "frames": info.frames, "channels": info.channels,
            "duration": info.frames / info.samplerate if info.samplerate else 0.0,
            "format": info.format}


def to_mono(audio: np.ndarray) -> np.ndarray:
    """Average the channels of a ``(frames, channels)`` array."""
    return audio.mean(axis=1) if audio.ndim == 2 else audio


def resample(audio: np.ndarray, orig_sr: int, target_sr: int) -> np.ndarray:
    """Resample a mono float array with ``torchaudio.functional.resample``."""
    if orig_sr == target_sr:
        return audio
    import torch
    import torchaudio.functional as AF

    out = AF.resample(torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32)),
                      int(orig_sr), int(target_sr))
    return out.numpy()


def load_audio(path: str, *, offset: float = 0.0, duration: float | None = None,
               target_sr: int | None = None, mono: bool = True) -> tuple[np.ndarray, int]:
    """Decode ``path`` (any fsspec path) to float32 samples and its sample rate.

    Args:
        offset, duration: the span to read, in seconds (NeMo manifest ``offset``/``duration``).
        target_sr: resample to this rate (``None``: keep the file's rate).
        mono: average channels to one.

    Raises :class:`AudioDecodeError` for an unreadable, empty or truncated file, or a span that
    holds no samples.
    """
    import soundfile as sf

    buf = _open_bytes(path)
    _check_wav_complete(path, buf.getvalue())
    try:
        with sf.SoundFile(buf) as f:
            sr = f.samplerate
            expected = f.frames
            start = int(round(offset * sr))
            stop = expected if duration is None else min(expected, start + int(round(duration * sr)))
            if start:
                f.seek(min(start, expected))
            audio = f.read(frames=max(stop - start, 0), dtype="float32", always_2d=True)
    except Exception as exc:
        raise AudioDecodeError(f"{path}: {type(exc).__name__}: {exc}") from exc
    if audio.shape[0] == 0:
        raise AudioDecodeError(f"{path}: no audio samples (offset={offset}, duration={duration})")
    if audio.shape[0] < stop - start:
        raise AudioDecodeError(f"{path}: truncated: header promises {stop - start} frames, "
                               f"read {audio.shape[0]}")
    if not np.all(np.isfinite(audio)):
        raise AudioDecodeError(f"{path}: non-finite samples")
    out = to_mono(audio) if mono else audio
    if target_sr and target_sr != sr:
        if not mono:
            raise ValueError("load_audio: resampling needs mono=True")
        out, sr = resample(out, sr, target_sr), target_sr
    return np.ascontiguousarray(out, dtype=np.float32), sr


def record_waveform(record: dict[str, Any], filepath_key: str = "audio_filepath",
                    target_sr: int | None = None) -> tuple[np.ndarray, int]:
    """The record's decoded mono waveform: ``record["waveform"]`` when a decode stage put it
    there, else decoded from the file (honouring ``offset``/``duration`` of segment records)."""
    wave = record.get("waveform")
    if wave is not None:
        sr = int(record["sample_rate"])
        if target_sr and sr != target_sr:
            return resample(wave, sr, target_sr), target_sr
        return wave, sr
    offset = float(record.get("offset") or 0.0)
    duration = record.get("duration") if "offset" in record else None
    return load_audio(str(record[filepath_key]), offset=offset,
                      duration=float(duration) if duration is not None else None,
                      target_sr=target_sr)
