"""Decoding and duration stages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curator.stages.base import StageIO

from curator_audio.decode import audio_info, record_waveform
from curator_audio.stages.base import AudioRecordStage

__all__ = ["AudioDecodeStage", "GetAudioDurationStage"]


@dataclass
class AudioDecodeStage(AudioRecordStage):
    """Decodes each record's audio once (soundfile), optionally resampled (torchaudio), into
    ``record["waveform"]`` (mono float32) and ``record["sample_rate"]``, so later stages do not
    decode again. An unreadable, empty or truncated file is rejected with its path and error.

    Args:
        target_sample_rate: resample to this rate (``None``: keep the file's).
        filepath_key: the audio path field.
    """

    target_sample_rate: int | None = None
    filepath_key: str = "audio_filepath"
    name: str = "AudioDecodeStage"
    reject_reason = "undecodable_audio"

    def outputs(self) -> StageIO:
        return ["data"], ["waveform", "sample_rate"]

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        wave, sr = record_waveform(record, self.filepath_key, self.target_sample_rate)
        return {**record, "waveform": wave, "sample_rate": sr}


@dataclass
class GetAudioDurationStage(AudioRecordStage):
    """Sets ``duration_key`` to the audio's length in seconds: from the decoded waveform when
    present, else from the file header (no full decode). Unreadable files are rejected.

    Args:
        audio_filepath_key: the audio path field.
        duration_key: where to put the duration.
    """

    audio_filepath_key: str = "audio_filepath"
    duration_key: str = "duration"
    name: str = "GetAudioDurationStage"
    reject_reason = "unreadable_audio"

    def __post_init__(self) -> None:
        self.filepath_key = self.audio_filepath_key

    def outputs(self) -> StageIO:
        return ["data"], [self.duration_key]

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        if record.get("waveform") is not None:
            duration = len(record["waveform"]) / float(record["sample_rate"])
        elif "offset" in record and record.get(self.duration_key) is not None:
            duration = float(record[self.duration_key])   # a segment: its span is the duration
        else:
            duration = audio_info(str(record[self.audio_filepath_key]))["duration"]
        return {**record, self.duration_key: float(duration)}
