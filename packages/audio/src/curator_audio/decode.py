"""Decoding audio files with soundfile (wav, flac, ogg, mp3) and resampling with torchaudio."""

from __future__ import annotations

import contextlib
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["AudioDecodeError", "load_audio", "audio_info", "resample", "to_mono", "record_waveform",
           "open_audio", "LazyAudio", "LazyWaveform", "LazyConcatenation", "LazyResampled",
           "lazy_waveform", "resample_blocks", "resampled_length", "as_waveform",
           "STREAM_ABOVE_SEC", "STREAM_BLOCK_SEC"]

SUPPORTED_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3")

STREAM_ABOVE_SEC = 300.0
"""Audio longer than this (seconds) is not decoded whole by the stages that stream
(:class:`~curator_audio.stages.preprocessing.MonoConversionStage`,
:class:`~curator_audio.stages.vad_segmentation.VADSegmentationStage`): its ``waveform`` is a
:class:`LazyWaveform`, read block by block."""

STREAM_BLOCK_SEC = 30.0
"""Seconds of audio read at a time from a :class:`LazyWaveform`."""


class AudioDecodeError(ValueError):
    """A file that cannot be decoded: unreadable, empty or truncated."""


def _check_wav_complete(path: str, fh: Any) -> None:
    """libsndfile silently reads a cut-off WAV; compare its ``data`` chunk size with the bytes
    (walking the chunk headers of the open, seekable file ``fh``; it is left at its start)."""
    size_total = fh.seek(0, 2)
    fh.seek(0)
    head = fh.read(12)
    try:
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return
        pos = 12
        while pos + 8 <= size_total:
            fh.seek(pos)
            chunk = fh.read(8)
            if len(chunk) < 8:
                return
            cid, size = chunk[:4], int.from_bytes(chunk[4:8], "little")
            if cid == b"data":
                have = size_total - pos - 8
                if size != 0xFFFFFFFF and have < size:
                    raise AudioDecodeError(f"{path}: truncated WAV: data chunk declares {size} "
                                           f"bytes, file holds {have}")
                return
            pos += 8 + size + (size & 1)
    finally:
        fh.seek(0)


@contextlib.contextmanager
def open_audio(path: str) -> Iterator[Any]:
    """``path`` (any fsspec path) opened for seeking as a ``soundfile.SoundFile`` over its byte
    stream, so only the frames read are held in memory. Raises :class:`AudioDecodeError` for an
    empty, truncated or undecodable file (``FileNotFoundError`` when it is missing)."""
    import fsspec
    import soundfile as sf

    with fsspec.open(path, "rb") as fh:
        if fh.seek(0, 2) == 0:
            raise AudioDecodeError(f"{path}: empty file (0 bytes)")
        _check_wav_complete(path, fh)
        try:
            snd = sf.SoundFile(fh)
        except Exception as exc:
            raise AudioDecodeError(f"{path}: {type(exc).__name__}: {exc}") from exc
        with snd:
            yield snd


def audio_info(path: str) -> dict[str, Any]:
    """Sample rate, frames, channels and duration (seconds) of ``path`` from its header."""
    with open_audio(path) as f:
        sr, frames, channels, fmt = f.samplerate, f.frames, f.channels, f.format
    return {"sample_rate": sr, "frames": frames, "channels": channels,
            "duration": frames / sr if sr else 0.0, "format": fmt}


def to_mono(audio: np.ndarray) -> np.ndarray:
    """Average the channels of a ``(frames, channels)`` array (one channel: a view of it)."""
    if audio.ndim != 2:
        return audio
    return audio[:, 0] if audio.shape[1] == 1 else audio.mean(axis=1)


def resample(audio: np.ndarray, orig_sr: int, target_sr: int) -> np.ndarray:
    """Resample a mono float array with ``torchaudio.functional.resample``."""
    if orig_sr == target_sr:
        return audio
    import torch
    import torchaudio.functional as AF

    out = AF.resample(torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32)),
                      int(orig_sr), int(target_sr))
    return out.numpy()


def _resample_context(orig_sr: int, target_sr: int) -> tuple[int, int, int]:
    """(orig, new) reduced by their gcd, and how many input samples of context on each side
    make a piece resampled alone equal the same samples resampled whole: torchaudio's sinc
    kernel reaches ``ceil(6 * orig / (0.99 * min(orig, new)))`` samples (its default
    ``lowpass_filter_width=6``, ``rolloff=0.99``), rounded up to a whole number of ``orig``."""
    g = math.gcd(int(orig_sr), int(target_sr))
    o, n = int(orig_sr) // g, int(target_sr) // g
    reach = math.ceil(6 * o / (0.99 * min(o, n)))
    return o, n, o * (reach // o + 2)


def resampled_length(frames: int, orig_sr: int, target_sr: int) -> int:
    """How many samples :func:`resample` makes of ``frames`` samples."""
    if orig_sr == target_sr:
        return int(frames)
    o, n, _ = _resample_context(orig_sr, target_sr)
    return math.ceil(n * int(frames) / o)


def resample_blocks(blocks: Iterable[np.ndarray], orig_sr: int, target_sr: int
                    ) -> Iterator[np.ndarray]:
    """:func:`resample` over consecutive mono blocks, yielding pieces whose concatenation equals
    ``resample(whole, orig_sr, target_sr)`` (to float rounding) while holding only a block plus
    the filter's context: each piece is resampled with real neighbouring samples on both sides
    and cut at input positions that are whole multiples of the rate ratio."""
    if orig_sr == target_sr:
        yield from blocks
        return
    o, n, ctx = _resample_context(orig_sr, target_sr)
    buf = np.zeros(0, dtype=np.float32)
    buf_start = done = 0          # absolute input index of buf[0]; input resampled so far
    for block in blocks:
        buf = np.concatenate([buf, np.asarray(block, dtype=np.float32)])
        safe = ((buf_start + len(buf) - ctx) // o) * o
        if safe <= done:
            continue
        lo = max(done - ctx, 0)
        out = resample(buf[lo - buf_start:safe + ctx - buf_start], orig_sr, target_sr)
        skip = (done - lo) * n // o
        yield out[skip:skip + (safe - done) * n // o]
        done = safe
        drop = max(done - ctx, 0) - buf_start
        buf, buf_start = buf[drop:], buf_start + drop
    total = buf_start + len(buf)
    if total > done:
        lo = max(done - ctx, 0)
        out = resample(buf[lo - buf_start:], orig_sr, target_sr)
        skip = (done - lo) * n // o
        yield out[skip:skip + math.ceil(n * total / o) - done * n // o]


class LazyAudio(ABC):
    """Mono audio not yet decoded, standing in ``record["waveform"]`` for audio too long to hold
    whole (longer than :data:`STREAM_ABOVE_SEC`): streaming stages read it :meth:`blocks` at a
    time; any other stage gets the samples with ``np.asarray(wave)`` / :meth:`load` (as
    :func:`record_waveform` and ``item_waveform`` do), decoding only the span it covers. Stored
    tasks keep it as a reference (:meth:`to_state`), not as samples. Two kinds:
    :class:`LazyWaveform` (a span of one file) and :class:`LazyConcatenation` (spans and
    silences one after another, as ``SegmentConcatenationStage`` joins segments)."""

    sample_rate: int
    dtype = np.dtype(np.float32)
    ndim = 1

    @abstractmethod
    def __len__(self) -> int:
        ...

    @property
    def shape(self) -> tuple[int]:
        return (len(self),)

    @property
    def duration(self) -> float:
        return len(self) / self.sample_rate

    @abstractmethod
    def blocks(self, block_sec: float = STREAM_BLOCK_SEC) -> Iterator[np.ndarray]:
        """Consecutive mono float32 blocks of at most ``block_sec`` seconds; raises
        :class:`AudioDecodeError` when a file holds fewer frames than promised or non-finite
        samples."""

    @abstractmethod
    def span(self, first: int, last: int) -> LazyAudio:
        """Frames ``[first, last)``, still not decoded."""

    @abstractmethod
    def to_state(self) -> dict[str, Any]:
        """A JSON description that :meth:`from_state` rebuilds."""

    @staticmethod
    def from_state(state: dict[str, Any]) -> LazyAudio:
        if "resampled" in state:
            return LazyResampled(LazyAudio.from_state(state["resampled"]),
                                 int(state["sample_rate"]), int(state["start"]),
                                 int(state["frames"]))
        if "parts" in state:
            return LazyConcatenation(
                tuple(p if isinstance(p, int) else LazyAudio.from_state(p)
                      for p in state["parts"]),
                int(state["sample_rate"]))
        return LazyWaveform(**state)

    def load(self) -> np.ndarray:
        """The samples, decoded (mono float32)."""
        out = np.empty(len(self), dtype=np.float32)
        pos = 0
        for block in self.blocks():
            out[pos:pos + len(block)] = block
            pos += len(block)
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        wave = self.load()
        return wave if dtype is None else wave.astype(dtype, copy=False)


@dataclass(frozen=True)
class LazyWaveform(LazyAudio):
    """``frames`` frames of the file ``path`` from frame ``start``, at the file's
    ``sample_rate``, channels averaged, or only channel ``channel`` (see :class:`LazyAudio`)."""

    path: str
    sample_rate: int
    frames: int
    start: int = 0
    channel: int | None = None

    def __len__(self) -> int:
        return self.frames

    def span(self, first: int, last: int) -> LazyWaveform:
        first, last = max(0, int(first)), min(self.frames, int(last))
        return LazyWaveform(self.path, self.sample_rate, max(0, last - first), self.start + first,
                            self.channel)

    def blocks(self, block_sec: float = STREAM_BLOCK_SEC) -> Iterator[np.ndarray]:
        step = max(1, int(block_sec * self.sample_rate))
        with open_audio(self.path) as f:
            if f.samplerate != self.sample_rate:
                raise AudioDecodeError(f"{self.path}: now {f.samplerate} Hz, was "
                                       f"{self.sample_rate} Hz when referenced")
            if self.start:
                f.seek(self.start)
            left = self.frames
            while left > 0:
                try:
                    audio = f.read(frames=min(step, left), dtype="float32", always_2d=True)
                except Exception as exc:
                    raise AudioDecodeError(f"{self.path}: {type(exc).__name__}: {exc}") from exc
                if audio.shape[0] == 0:
                    raise AudioDecodeError(f"{self.path}: truncated: {left} of {self.frames} "
                                           f"frames from frame {self.start} not readable")
                if not np.all(np.isfinite(audio)):
                    raise AudioDecodeError(f"{self.path}: non-finite samples")
                left -= audio.shape[0]
                mono = to_mono(audio) if self.channel is None else audio[:, self.channel]
                yield np.ascontiguousarray(mono, dtype=np.float32)

    def to_state(self) -> dict[str, Any]:
        state = {"path": self.path, "sample_rate": self.sample_rate, "frames": self.frames,
                 "start": self.start}
        return state if self.channel is None else {**state, "channel": self.channel}


@dataclass(frozen=True)
class LazyConcatenation(LazyAudio):
    """``parts`` one after another at ``sample_rate``: each a :class:`LazyAudio` (a
    :class:`LazyWaveform`, or a :class:`LazyResampled` span) or a number of frames of silence
    (see :class:`LazyAudio`)."""

    parts: tuple[LazyAudio | int, ...]
    sample_rate: int

    def __len__(self) -> int:
        return sum(p if isinstance(p, int) else len(p) for p in self.parts)

    def span(self, first: int, last: int) -> LazyAudio:
        first, last = max(0, int(first)), int(last)
        out: list[LazyAudio | int] = []
        pos = 0
        for part in self.parts:
            size = part if isinstance(part, int) else len(part)
            lo, hi = max(first, pos) - pos, min(last, pos + size) - pos
            if hi > lo:
                out.append(hi - lo if isinstance(part, int) else part.span(lo, hi))
            pos += size
        if len(out) == 1 and isinstance(out[0], LazyAudio):
            return out[0]
        return LazyConcatenation(tuple(out), self.sample_rate)

    def blocks(self, block_sec: float = STREAM_BLOCK_SEC) -> Iterator[np.ndarray]:
        step = max(1, int(block_sec * self.sample_rate))
        for part in self.parts:
            if isinstance(part, int):
                for i in range(0, part, step):
                    yield np.zeros(min(step, part - i), dtype=np.float32)
            else:
                yield from part.blocks(block_sec)

    def to_state(self) -> dict[str, Any]:
        return {"sample_rate": self.sample_rate,
                "parts": [p if isinstance(p, int) else p.to_state() for p in self.parts]}


@dataclass(frozen=True)
class LazyResampled(LazyAudio):
    """``source`` resampled to ``sample_rate``, block by block as it is read (see
    :class:`LazyAudio`): the samples ``[start, start + frames)`` of
    ``resample(np.asarray(source), source.sample_rate, sample_rate)`` (to float rounding,
    ~1e-6), each block resampled with the real neighbouring samples the filter reaches
    (:func:`resample_blocks`), so only a block and that context are held. ``frames=None``: all
    of it from ``start``. Its blocks are about ``block_sec`` long (cut where the rates align)."""

    source: LazyAudio
    sample_rate: int
    start: int = 0
    frames: int | None = None

    def __post_init__(self) -> None:
        whole = resampled_length(len(self.source), self.source.sample_rate, self.sample_rate)
        start = min(max(0, int(self.start)), whole)
        object.__setattr__(self, "start", start)
        frames = whole - start if self.frames is None else int(self.frames)
        object.__setattr__(self, "frames", max(0, min(frames, whole - start)))

    def __len__(self) -> int:
        return int(self.frames)

    def span(self, first: int, last: int) -> LazyResampled:
        first, last = max(0, int(first)), min(len(self), int(last))
        return LazyResampled(self.source, self.sample_rate, self.start + first,
                             max(0, last - first))

    def blocks(self, block_sec: float = STREAM_BLOCK_SEC) -> Iterator[np.ndarray]:
        if not self.frames:
            return
        orig = self.source.sample_rate
        if orig == self.sample_rate:
            yield from self.source.span(self.start, self.start + self.frames).blocks(block_sec)
            return
        o, n, ctx = _resample_context(orig, self.sample_rate)
        # source from a whole multiple of ``o`` at least ``ctx`` before the first sample asked
        # for (so it has its real left context), to ``ctx`` past the last one
        lo = max(0, (self.start // n) * o - ctx)
        hi = min(len(self.source), -(-(self.start + self.frames) * o // n) + ctx)
        skip, left = self.start - lo * n // o, self.frames
        for piece in resample_blocks(self.source.span(lo, hi).blocks(block_sec), orig,
                                     self.sample_rate):
            if skip >= len(piece):
                skip -= len(piece)
                continue
            piece = piece[skip:skip + left]
            skip, left = 0, left - len(piece)
            yield piece
            if not left:
                return

    def to_state(self) -> dict[str, Any]:
        return {"resampled": self.source.to_state(), "sample_rate": self.sample_rate,
                "start": self.start, "frames": self.frames}


def lazy_waveform(path: str) -> LazyWaveform:
    """A :class:`LazyWaveform` of the whole of ``path`` (read from its header only)."""
    info = audio_info(path)
    if info["frames"] <= 0:
        raise AudioDecodeError(f"{path}: no audio samples")
    return LazyWaveform(str(path), int(info["sample_rate"]), int(info["frames"]))


def as_waveform(wave: Any) -> np.ndarray:
    """``wave`` as a NumPy array: a :class:`LazyAudio` decoded, anything else as given."""
    return wave.load() if isinstance(wave, LazyAudio) else wave


def load_audio(path: str, *, offset: float = 0.0, duration: float | None = None,
               target_sr: int | None = None, mono: bool = True) -> tuple[np.ndarray, int]:
    """Decode ``path`` (any fsspec path) to float32 samples and its sample rate (reading only
    the span asked for).

    Args:
        offset, duration: the span to read, in seconds (NeMo manifest ``offset``/``duration``).
        target_sr: resample to this rate (``None``: keep the file's rate).
        mono: average channels to one.

    Raises :class:`AudioDecodeError` for an unreadable, empty or truncated file, or a span that
    holds no samples.
    """
    with open_audio(path) as f:
        sr = f.samplerate
        expected = f.frames
        start = int(round(offset * sr))
        stop = expected if duration is None else min(expected, start + int(round(duration * sr)))
        try:
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
    there (a :class:`LazyWaveform` is decoded now), else decoded from the file (honouring
    ``offset``/``duration`` of segment records)."""
    wave = record.get("waveform")
    if isinstance(wave, LazyAudio) and target_sr and wave.sample_rate != target_sr:
        return LazyResampled(wave, int(target_sr)).load(), int(target_sr)
    if wave is not None:
        wave = as_waveform(wave)
        sr = int(record["sample_rate"])
        if target_sr and sr != target_sr:
            return resample(wave, sr, target_sr), target_sr
        return wave, sr
    offset = float(record.get("offset") or 0.0)
    duration = record.get("duration") if "offset" in record else None
    return load_audio(str(record[filepath_key]), offset=offset,
                      duration=float(duration) if duration is not None else None,
                      target_sr=target_sr)
