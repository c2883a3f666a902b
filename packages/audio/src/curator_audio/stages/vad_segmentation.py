"""VADSegmentationStage: speech segments found by Silero VAD (weights from the ``silero-vad``
wheel)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from curator import Resources
from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.decode import (
    STREAM_ABOVE_SEC,
    STREAM_BLOCK_SEC,
    AudioDecodeError,
    LazyAudio,
    lazy_waveform,
)
from curator_audio.stages.base import AudioRecordStage, public_record
from curator_audio.stages.common import SEGMENTS, AudioInputError, item_waveform
from curator_audio.tasks import AudioBatch

__all__ = ["VADSegmentationStage"]

_SEGMENT_FIELDS = ("waveform", "sample_rate", "start_ms", "end_ms", "segment_num", "duration",
                   "num_samples")


@dataclass
class VADSegmentationStage(AudioRecordStage):
    """Cuts each record's audio into speech segments with Silero VAD
    (``silero_vad.get_speech_timestamps`` on the model shipped in the ``silero-vad`` wheel).

    Each segment becomes a record (``nested=False``, NeMo's fan-out) holding the source's fields
    plus ``waveform`` (its samples, mono float32), ``sample_rate``, ``start_ms`` / ``end_ms``
    (milliseconds into the source audio), ``segment_num``, ``duration`` (seconds) and
    ``original_file``. With ``nested=True`` the record stays one record whose ``segments`` list
    holds them (its own waveform dropped), as the composite ``AudioDataFilterStage`` uses it.

    Audio at 8 kHz or a multiple of 16 kHz is given to Silero as is (Silero decimates multiples
    itself); other rates are resampled to 16 kHz for the detection only.

    Long recordings stream: a ``waveform`` that is a :class:`~curator_audio.decode.LazyAudio`
    (``MonoConversionStage`` leaves one for audio longer than its ``stream_above_sec``,
    ``SegmentConcatenationStage`` joins such segments into one), or a
    file without a waveform longer than ``stream_above_sec``, is read ``stream_block_sec`` at a
    time and fed to Silero window by window with its state carried, keeping only one probability
    per 32 ms window; the spans are those of ``get_speech_timestamps`` on the whole audio. Its
    segments' ``waveform`` are then ``LazyAudio`` spans of it (decoded by the stage that
    needs their samples), so no stage holds the whole recording. Rejected with a reason:
    undecodable audio (``undecodable_audio``), a waveform without a rate
    (``missing_sample_rate``), audio shorter than ``min_duration_sec`` (``too_short``), digital
    silence (``silent_audio``) and audio with no speech found (``no_speech``).

    Args:
        min_interval_ms: shortest silence that separates two segments (ms).
        min_duration_sec: shortest segment kept (s).
        max_duration_sec: longest segment; longer speech is split (s).
        threshold: Silero's speech probability threshold.
        speech_pad_ms: padding added on each side of a segment (ms).
        waveform_key, sample_rate_key: where a decoded waveform is read from.
        nested: keep segments inside their record instead of one record each.
        stream_above_sec: a file (read here from ``filepath_key``) longer than this is streamed
            instead of decoded whole (``None``: never).
        stream_block_sec: seconds read at a time when streaming.
    """

    min_interval_ms: int = 500
    min_duration_sec: float = 2.0
    max_duration_sec: float = 60.0
    threshold: float = 0.5
    speech_pad_ms: int = 300
    waveform_key: str = "waveform"
    sample_rate_key: str = "sample_rate"
    nested: bool = False
    stream_above_sec: float | None = STREAM_ABOVE_SEC
    stream_block_sec: float = STREAM_BLOCK_SEC
    filepath_key: str = "audio_filepath"
    name: str = "VADSegmentation"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))
    reject_reason = "undecodable_audio"

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold < 1.0:
            raise ConfigError(f"{self.name}: threshold must be in (0, 1), got {self.threshold}")
        if not 0 < self.min_duration_sec < self.max_duration_sec:
            raise ConfigError(f"{self.name}: need 0 < min_duration_sec < max_duration_sec, got "
                              f"{self.min_duration_sec} and {self.max_duration_sec}")
        if self.stream_block_sec <= 0:
            raise ConfigError(f"{self.name}: stream_block_sec must be > 0, got "
                              f"{self.stream_block_sec}")
        self._model: Any = None

    def inputs(self) -> StageIO:
        return ["data"], []

    def outputs(self) -> StageIO:
        if self.nested:
            return ["data"], [SEGMENTS]
        return ["data"], ["waveform", "sample_rate", "start_ms", "end_ms", "segment_num",
                          "duration"]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        from curator_audio.silero import load_silero

        if self._model is None:
            self._model = load_silero(self.resources.torch_device())

    def teardown(self) -> None:
        self._model = None

    def spans(self, wave: np.ndarray | Iterable[np.ndarray], sr: int
              ) -> list[tuple[float, float]]:
        """Speech spans (seconds) of one mono waveform (an array, or consecutive blocks of it)
        with this stage's settings."""
        from curator_audio.silero import speech_timestamps

        if self._model is None:
            self.setup()
        return speech_timestamps(
            self._model, wave, sr, threshold=self.threshold,
            min_speech_duration_ms=self.min_duration_sec * 1000,
            max_speech_duration_s=self.max_duration_sec,
            min_silence_duration_ms=self.min_interval_ms, speech_pad_ms=self.speech_pad_ms)

    def _audio(self, record: dict[str, Any]) -> tuple[np.ndarray | LazyAudio, int]:
        """The record's audio: its waveform (decoded, or a LazyAudio as given), else its
        file decoded whole, or referenced when longer than ``stream_above_sec``."""
        wave = record.get(self.waveform_key)
        if isinstance(wave, LazyAudio):
            return wave, wave.sample_rate
        path = record.get(self.filepath_key)
        if wave is None and path and "offset" not in record \
                and self.stream_above_sec is not None:
            try:
                lazy = lazy_waveform(str(path))
            except AudioDecodeError as exc:
                raise AudioInputError("undecodable_audio", str(exc)) from exc
            except FileNotFoundError as exc:
                raise AudioInputError("undecodable_audio", f"{path}: file not found") from exc
            if lazy.duration > self.stream_above_sec:
                return lazy, lazy.sample_rate
            try:
                return lazy.load(), lazy.sample_rate
            except AudioDecodeError as exc:
                raise AudioInputError("undecodable_audio", str(exc)) from exc
        return item_waveform(record, self.filepath_key, self.waveform_key,
                             self.sample_rate_key)

    def _streamed_spans(self, wave: LazyAudio) -> list[tuple[float, float]]:
        heard = False

        def blocks() -> Iterable[np.ndarray]:
            nonlocal heard
            for block in wave.blocks(self.stream_block_sec):
                heard = heard or bool(np.any(block))
                yield block

        try:
            spans = self.spans(blocks(), wave.sample_rate)
        except AudioDecodeError as exc:
            raise AudioInputError("undecodable_audio", str(exc)) from exc
        if not heard:
            raise AudioInputError("silent_audio", "every sample is zero")
        return spans

    def segments(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The segment records of one source record (raises :class:`AudioInputError`)."""
        wave, sr = self._audio(record)
        if len(wave) < self.min_duration_sec * sr:
            raise AudioInputError("too_short", f"{len(wave) / sr:.3f} s of audio is shorter "
                                  f"than min_duration_sec={self.min_duration_sec}")
        if isinstance(wave, LazyAudio):
            spans = self._streamed_spans(wave)
        else:
            if not np.any(wave):
                raise AudioInputError("silent_audio", "every sample is zero")
            spans = self.spans(wave, sr)
        if not spans:
            raise AudioInputError("no_speech", f"Silero VAD found no speech of at least "
                                  f"{self.min_duration_sec} s (threshold={self.threshold})")
        base = {k: v for k, v in public_record(record).items()
                if k not in (*_SEGMENT_FIELDS, self.waveform_key, self.sample_rate_key, SEGMENTS)}
        original = record.get("original_file", record.get(self.filepath_key, "unknown"))
        out = []
        for i, (start, end) in enumerate(spans):
            start_ms, end_ms = int(start * 1000), int(end * 1000)
            first, last = int(start * sr), int(end * sr)
            piece = wave.span(first, last) if isinstance(wave, LazyAudio) \
                else np.array(wave[first:last], dtype=np.float32)  # a copy
            out.append({**base, "waveform": piece, "sample_rate": sr, "start_ms": start_ms,
                        "end_ms": end_ms, "segment_num": i,
                        "duration": (end_ms - start_ms) / 1000.0, "original_file": original})
        return out

    def process(self, task: AudioBatch) -> AudioBatch:
        out: list[dict[str, Any]] = []
        for record in task.data:
            source = str(record.get(self.filepath_key, record.get("original_file", "")))
            try:
                segs = self.segments(record)
            except AudioInputError as exc:
                self.reject(task, exc.reason, record=public_record(record), error=str(exc),
                            source=source)
                continue
            except Exception as exc:
                self.reject(task, self.reject_reason, record=public_record(record), error=exc,
                            source=source)
                continue
            if self.nested:
                rest = {k: v for k, v in record.items() if k != self.waveform_key}
                out.append({**rest, SEGMENTS: segs})
            else:
                out.extend(segs)
        return task.derive(out)
