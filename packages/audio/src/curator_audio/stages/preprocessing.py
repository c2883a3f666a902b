"""NeMo Curator's audio preprocessing: mono conversion with a sample-rate check, resampling to
files, and concatenating nested VAD segments."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from curator import Resources
from curator.errors import ConfigError
from curator.io import atomic_write, join_path
from curator.stages.base import StageIO

from curator_audio.decode import (
    STREAM_ABOVE_SEC,
    STREAM_BLOCK_SEC,
    AudioDecodeError,
    LazyAudio,
    LazyConcatenation,
    LazyResampled,
    LazyWaveform,
    as_waveform,
    audio_info,
    lazy_waveform,
    load_audio,
    resample,
)
from curator_audio.stages.base import AudioRecordStage, public_record
from curator_audio.stages.common import SEGMENTS, AudioInputError, item_waveform
from curator_audio.tasks import AudioBatch

__all__ = ["MonoConversionStage", "ResampleAudioStage", "SegmentConcatenationStage",
           "SOUNDFILE_FORMATS"]

SOUNDFILE_FORMATS = {"wav": "PCM_16", "flac": "PCM_16", "ogg": "VORBIS"}


class _RejectingStage(AudioRecordStage):
    """An :class:`AudioRecordStage` whose :class:`AudioInputError` carries the sink reason."""

    def process(self, task: AudioBatch) -> AudioBatch:
        out: list[dict[str, Any]] = []
        for record in task.data:
            try:
                result = self.process_record(record)
            except AudioInputError as exc:
                self.reject(task, exc.reason, record=public_record(record), error=str(exc),
                            source=str(record.get(self.filepath_key, "")))
                continue
            except Exception as exc:
                self.reject(task, self.reject_reason, record=public_record(record), error=exc,
                            source=str(record.get(self.filepath_key, "")))
                continue
            if result is not None:
                out.append(result)
        return task.derive(out)


@dataclass
class MonoConversionStage(_RejectingStage):
    """Decodes each record's file (soundfile), averages its channels to mono and checks its
    rate: sets ``waveform`` (mono float32), ``sample_rate``, ``is_mono``, ``duration`` and
    ``num_samples``.

    With ``strict_sample_rate`` (NeMo's default) a file not at ``output_sample_rate`` is rejected
    (``sample_rate_mismatch``); without it the audio keeps its own rate (as in NeMo: nothing is
    resampled here; use :class:`ResampleAudioStage` or ``AudioDecodeStage(target_sample_rate=)``).
    Missing or undecodable files are rejected (``undecodable_audio``).

    Audio longer than ``stream_above_sec`` is not decoded here: its ``waveform`` is a
    :class:`~curator_audio.decode.LazyAudio` (the file's mono samples, read when needed), which
    ``VADSegmentationStage`` streams block by block, so an hour-long recording is never held
    whole; stages that need all its samples decode it themselves.

    Args:
        output_sample_rate: the rate expected (Hz).
        audio_filepath_key: the audio path field.
        strict_sample_rate: reject audio at another rate.
        stream_above_sec: audio longer than this (s) is left as a ``LazyAudio``
            (``None``: always decoded whole).
    """

    output_sample_rate: int = 48000
    audio_filepath_key: str = "audio_filepath"
    strict_sample_rate: bool = True
    stream_above_sec: float | None = STREAM_ABOVE_SEC
    name: str = "MonoConversion"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))
    reject_reason = "undecodable_audio"

    def __post_init__(self) -> None:
        self.filepath_key = self.audio_filepath_key
        if int(self.output_sample_rate) <= 0:
            raise ConfigError(f"{self.name}: output_sample_rate must be > 0")

    def outputs(self) -> StageIO:
        return ["data"], ["waveform", "sample_rate", "is_mono", "duration", "num_samples"]

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        path = record.get(self.audio_filepath_key)
        if not path:
            raise AudioInputError("missing_audio", f"no {self.audio_filepath_key!r}")
        try:
            lazy = lazy_waveform(str(path))
            sr = lazy.sample_rate
            if self.strict_sample_rate and sr != self.output_sample_rate:
                raise AudioInputError("sample_rate_mismatch", f"{path}: {sr} Hz, expected "
                                      f"{self.output_sample_rate} Hz (strict_sample_rate=True)")
            long = self.stream_above_sec is not None and lazy.duration > self.stream_above_sec
            wave = lazy if long else lazy.load()
        except FileNotFoundError as exc:
            raise AudioInputError("undecodable_audio", f"{path}: file not found") from exc
        except AudioDecodeError as exc:
            raise AudioInputError("undecodable_audio", str(exc)) from exc
        return {**record, "waveform": wave, "sample_rate": sr, "is_mono": True,
                "duration": len(wave) / sr, "num_samples": len(wave)}


@dataclass
class ResampleAudioStage(_RejectingStage):
    """Writes each record's audio resampled to ``target_sample_rate`` with
    ``target_nchannels`` channels as ``{resampled_audio_dir}/{audio_item_id}.{target_format}``
    (atomically; an existing file is kept, so a re-run does no work twice) and records its path in
    ``resampled_audio_filepath_key`` and its length in ``duration_key``. ``audio_item_id`` is the
    record's, or ``{file stem}_{8 hex digits of the path's SHA-256}`` as in NeMo. Decoding is
    soundfile and resampling torchaudio (NeMo runs ffmpeg). Undecodable audio is rejected.

    Audio longer than ``stream_above_sec`` streams: its file is read ``stream_block_sec`` at a
    time as a :class:`~curator_audio.decode.LazyResampled` (each block resampled with the
    neighbouring samples the filter reaches, as ``VADSegmentationStage`` resamples) and
    written block by block, so an hour-long recording is never held whole; the samples equal
    those of resampling the whole file (to float rounding, ~1e-6, before PCM quantisation).
    A stereo file written with ``target_nchannels=2`` streams each channel so.

    Args:
        resampled_audio_dir: output directory.
        input_format: the source files' format (informational, as in NeMo).
        target_sample_rate, target_format, target_nchannels: what is written.
        audio_filepath_key, resampled_audio_filepath_key, duration_key, audio_item_id_key:
            field names.
        stream_above_sec: audio longer than this (s) is streamed (``None``: always decoded
            whole).
        stream_block_sec: seconds read at a time when streaming.
    """

    resampled_audio_dir: str = ""
    input_format: str = "wav"
    target_sample_rate: int = 16000
    target_format: str = "wav"
    target_nchannels: int = 1
    audio_filepath_key: str = "audio_filepath"
    resampled_audio_filepath_key: str = "resampled_audio_filepath"
    duration_key: str = "duration"
    audio_item_id_key: str = "audio_item_id"
    stream_above_sec: float | None = STREAM_ABOVE_SEC
    stream_block_sec: float = STREAM_BLOCK_SEC
    name: str = "ResampleAudio"
    reject_reason = "undecodable_audio"

    def __post_init__(self) -> None:
        self.filepath_key = self.audio_filepath_key
        if not self.resampled_audio_dir:
            raise ConfigError(f"{self.name}: resampled_audio_dir is required")
        if self.target_format not in SOUNDFILE_FORMATS:
            raise ConfigError(f"{self.name}: target_format must be one of "
                              f"{sorted(SOUNDFILE_FORMATS)}, got {self.target_format!r}")
        if self.target_nchannels < 1:
            raise ConfigError(f"{self.name}: target_nchannels must be >= 1")
        if self.stream_block_sec <= 0:
            raise ConfigError(f"{self.name}: stream_block_sec must be > 0, got "
                              f"{self.stream_block_sec}")

    def outputs(self) -> StageIO:
        return ["data"], [self.audio_item_id_key, self.resampled_audio_filepath_key,
                          self.duration_key]

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        import soundfile as sf
        from curator.io import get_fs

        path = str(record.get(self.audio_filepath_key) or "")
        if not path:
            raise AudioInputError("missing_audio", f"no {self.audio_filepath_key!r}")
        item_id = record.get(self.audio_item_id_key)
        if not item_id:
            stem = os.path.splitext(os.path.basename(path))[0]
            item_id = f"{stem}_{hashlib.sha256(path.encode()).hexdigest()[:8]}"
        target = join_path(self.resampled_audio_dir, f"{item_id}.{self.target_format}")
        fs, local = get_fs(target)
        if fs.exists(local):
            with fs.open(local, "rb") as fh:
                info = sf.info(fh)
            duration = info.frames / info.samplerate
        else:
            try:
                info = audio_info(path)
                long = self.stream_above_sec is not None \
                    and info["duration"] > self.stream_above_sec
                out = self._streamed(path, info) if long else self._whole(path)
                fs.makedirs(local.rsplit("/", 1)[0], exist_ok=True)
                with atomic_write(target, "wb") as fh, sf.SoundFile(
                        fh, "w", self.target_sample_rate, self.target_nchannels,
                        subtype=SOUNDFILE_FORMATS[self.target_format],
                        format=self.target_format.upper()) as snd:
                    written = 0
                    for block in out:
                        snd.write(block)
                        written += len(block)
            except (AudioDecodeError, FileNotFoundError) as exc:
                raise AudioInputError("undecodable_audio", str(exc)) from exc
            duration = written / self.target_sample_rate
        return {**record, self.audio_item_id_key: item_id,
                self.resampled_audio_filepath_key: target, self.duration_key: duration}

    def _channels(self, mono: np.ndarray) -> np.ndarray:
        """Mono samples as ``target_nchannels`` equal channels (ffmpeg's ``-ac`` upmix)."""
        if self.target_nchannels == 1:
            return mono
        return np.repeat(mono[:, None], self.target_nchannels, axis=1)

    def _whole(self, path: str) -> Iterator[np.ndarray]:
        """The file decoded and resampled whole, as one block."""
        wave, sr = load_audio(path, mono=False)
        if self.target_nchannels > 1 and wave.shape[1] == self.target_nchannels:
            yield np.stack([resample(np.ascontiguousarray(wave[:, c]), sr,
                                     self.target_sample_rate)
                            for c in range(wave.shape[1])], axis=1)
        else:
            yield self._channels(resample(wave.mean(axis=1), sr, self.target_sample_rate))

    def _streamed(self, path: str, info: dict[str, Any]) -> Iterator[np.ndarray]:
        """The file resampled block by block: each channel kept when the file has
        ``target_nchannels`` of them (the channels' blocks are the same lengths), else mono."""
        sr, frames, nch = int(info["sample_rate"]), int(info["frames"]), int(info["channels"])
        per_channel = range(nch) if 1 < self.target_nchannels == nch else [None]
        sources = [LazyResampled(LazyWaveform(path, sr, frames, channel=c),
                                 self.target_sample_rate) for c in per_channel]
        for pieces in zip(*(src.blocks(self.stream_block_sec) for src in sources), strict=True):
            yield np.stack(pieces, axis=1) if len(pieces) > 1 else self._channels(pieces[0])


@dataclass
class SegmentConcatenationStage(_RejectingStage):
    """Joins a record's nested ``segments`` (from ``VADSegmentationStage(nested=True)`` and the
    filters after it) into one waveform, in ``segment_num`` order with ``silence_duration_sec``
    of silence between them, and keeps where each piece came from in ``segment_mappings``
    (``original_file``, ``original_start_ms``/``original_end_ms``, ``concat_start_ms``/
    ``concat_end_ms``, ``segment_index``) for :class:`TimestampMapperStage`. NeMo keeps the
    mappings in the task's metadata; a Curator batch holds many files, so they live on the record.

    Sets ``waveform``, ``sample_rate``, ``original_file``, ``num_segments``,
    ``total_duration_sec``. Segments at another rate than the first are left out (as in NeMo);
    a record without ``segments`` is rejected (``missing_segments``), one whose segments are all
    unusable too (``no_segments``). Segments of a streamed recording (``LazyAudio`` spans) are
    joined without decoding them: the ``waveform`` is a
    :class:`~curator_audio.decode.LazyConcatenation` that the next VAD streams.

    Args:
        silence_duration_sec: silence between consecutive segments (s).
    """

    silence_duration_sec: float = 0.5
    name: str = "SegmentConcatenation"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))
    reject_reason = "concatenation_error"

    def inputs(self) -> StageIO:
        return ["data"], [SEGMENTS]

    def outputs(self) -> StageIO:
        return ["data"], ["waveform", "sample_rate", "num_segments", "total_duration_sec",
                          "original_file", "segment_mappings"]

    @staticmethod
    def _order(seg: dict[str, Any]) -> tuple[int, int]:
        return int(seg.get("segment_num") or 0), int(seg.get("start_ms") or 0)

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        segments = record.get(SEGMENTS)
        if segments is None:
            raise AudioInputError("missing_segments", "SegmentConcatenationStage needs nested "
                                  "'segments' (VADSegmentationStage(nested=True))")
        parts: list[np.ndarray | LazyAudio | int] = []   # an int: that many frames of silence
        mappings: list[dict[str, Any]] = []
        sr: int | None = None
        pos_ms = 0
        gap_ms = int(self.silence_duration_sec * 1000)
        original = record.get("original_file", record.get(self.filepath_key, "unknown"))
        for seg in sorted(segments, key=self._order):
            wave = seg.get("waveform")
            if wave is None:
                continue
            if isinstance(wave, LazyAudio):
                seg_sr = wave.sample_rate
            else:
                try:
                    wave, seg_sr = item_waveform(seg)
                except AudioInputError:
                    continue
            if sr is not None and seg_sr != sr:
                continue
            sr = seg_sr
            dur_ms = int(1000 * len(wave) / sr)
            start = int(seg.get("start_ms") or 0)
            end = int(seg.get("end_ms") or 0)
            if end <= start:
                end = start + dur_ms
            if parts:
                parts.append(int(gap_ms * sr / 1000))
                pos_ms += gap_ms
            mappings.append({"original_file": seg.get("original_file", original),
                             "original_start_ms": start, "original_end_ms": end,
                             "concat_start_ms": pos_ms, "concat_end_ms": pos_ms + dur_ms,
                             "segment_index": seg.get("segment_num", len(mappings))})
            parts.append(wave)
            pos_ms += dur_ms
        if not parts or sr is None:
            raise AudioInputError("no_segments", "no segment with a usable waveform")
        rest = {k: v for k, v in record.items() if k != SEGMENTS}
        return {**rest, "waveform": _join(parts, sr), "sample_rate": sr,
                "original_file": original, "num_segments": len(mappings),
                "total_duration_sec": pos_ms / 1000.0, "segment_mappings": mappings}


def _join(parts: list[np.ndarray | LazyAudio | int], sr: int) -> np.ndarray | LazyAudio:
    """The parts one after another (an int: that many frames of silence): still lazy when every
    audio part is, else decoded."""
    if all(isinstance(p, int | LazyAudio) for p in parts):
        flat: list[Any] = []
        for p in parts:
            flat.extend(p.parts if isinstance(p, LazyConcatenation) else [p])
        return LazyConcatenation(tuple(flat), sr)
    return np.concatenate([np.zeros(p, dtype=np.float32) if isinstance(p, int)
                           else np.asarray(as_waveform(p), dtype=np.float32) for p in parts])
