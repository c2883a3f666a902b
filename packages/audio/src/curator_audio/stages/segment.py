"""AudioSegmentationStage: cut long recordings into utterances at silences (energy VAD)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio import vad
from curator_audio.decode import record_waveform
from curator_audio.stages.base import AudioRecordStage, public_record
from curator_audio.tasks import AudioBatch

__all__ = ["AudioSegmentationStage", "split_spans"]


def split_spans(spans: list[tuple[float, float]], min_s: float, max_s: float
                ) -> list[tuple[float, float]]:
    """Cut spans longer than ``max_s`` into equal pieces; drop those shorter than ``min_s``."""
    out: list[tuple[float, float]] = []
    for start, end in spans:
        n = max(1, int(-(-(end - start) // max_s)))
        step = (end - start) / n
        out += [(round(start + i * step, 4), round(start + (i + 1) * step, 4)) for i in range(n)]
    return [(s, e) for s, e in out if e - s >= min_s]


@dataclass
class AudioSegmentationStage(AudioRecordStage):
    """Splits each recording into utterances at silences found by an energy VAD.

    Each segment becomes a new record: the source record's fields plus ``offset`` and
    ``duration`` (seconds into the same file), ``segment_id`` (``{source id}_{i}``, deterministic)
    and ``source_duration``; ``text`` is cleared unless ``keep_text``. Voiced spans closer than
    ``min_silence_s`` are merged, spans longer than ``max_duration`` are cut into equal pieces
    and pieces shorter than ``min_duration`` are dropped.

    Args:
        threshold_db: frame energy (dBFS) above which a frame is voiced.
        min_silence_s: shortest pause that separates two utterances.
        min_duration, max_duration: utterance length bounds in seconds.
        padding_s: silence kept on each side of an utterance.
        keep_text: copy the source's ``text`` into each segment.
    """

    threshold_db: float = -40.0
    min_silence_s: float = 0.3
    min_duration: float = 0.5
    max_duration: float = 20.0
    padding_s: float = 0.1
    keep_text: bool = False
    filepath_key: str = "audio_filepath"
    name: str = "AudioSegmentationStage"
    reject_reason = "undecodable_audio"

    def __post_init__(self) -> None:
        if not 0 < self.min_duration <= self.max_duration:
            raise ConfigError(f"{self.name}: need 0 < min_duration <= max_duration, got "
                              f"{self.min_duration} and {self.max_duration}")

    def outputs(self) -> StageIO:
        return ["data"], ["offset", "duration", "segment_id"]

    def process(self, task: AudioBatch) -> AudioBatch:
        out: list[dict[str, Any]] = []
        for n, record in enumerate(task.data):
            try:
                out.extend(self._segments(record, record.get("id", f"{task.task_id}_{n}")))
            except Exception as exc:
                self.reject(task, self.reject_reason, record=public_record(record), error=exc,
                            source=str(record.get(self.filepath_key, "")))
        return task.derive(out)

    def _segments(self, record: dict[str, Any], source_id: str) -> list[dict[str, Any]]:
        wave, sr = record_waveform(record, self.filepath_key)
        base_offset = float(record.get("offset") or 0.0)
        total = len(wave) / sr
        spans = vad.speech_spans(wave, sr, self.threshold_db, min_silence_s=self.min_silence_s)
        spans = [(max(0.0, s - self.padding_s), min(total, e + self.padding_s)) for s, e in spans]
        base = {k: v for k, v in public_record(record).items() if k not in ("offset", "duration")}
        if not self.keep_text and "text" in base:
            base["text"] = ""
        return [{**base, "offset": round(base_offset + s, 4), "duration": round(e - s, 4),
                 "segment_id": f"{source_id}_{i}", "source_duration": round(total, 4)}
                for i, (s, e) in enumerate(split_spans(spans, self.min_duration,
                                                       self.max_duration))]
