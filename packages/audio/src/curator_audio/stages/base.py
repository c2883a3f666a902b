"""AudioRecordStage: the per-record bookkeeping shared by audio stages."""

from __future__ import annotations

from typing import Any, ClassVar

from curator import ProcessingStage
from curator.stages.base import StageIO

from curator_audio.tasks import WAVEFORM, AudioBatch

__all__ = ["AudioRecordStage", "public_record"]


def public_record(record: dict[str, Any]) -> dict[str, Any]:
    """The record without its decoded waveform (what goes to manifests and the rejected sink)."""
    return {k: v for k, v in record.items() if k != WAVEFORM}


class AudioRecordStage(ProcessingStage[AudioBatch, AudioBatch]):
    """Base for stages that handle one record at a time.

    Leaf classes implement :meth:`process_record`, returning the (updated) record or ``None`` to
    drop it. An exception raised for a record sends that record to the rejected sink with its path
    and error; the rest of the batch goes on.
    """

    modality: ClassVar[str] = "audio"
    filepath_key: str = "audio_filepath"
    reject_reason: ClassVar[str] = "audio_error"

    def inputs(self) -> StageIO:
        return ["data"], [self.filepath_key]

    def process_record(self, record: dict[str, Any]) -> dict[str, Any] | None:
        raise NotImplementedError

    def process(self, task: AudioBatch) -> AudioBatch:
        out: list[dict[str, Any]] = []
        for record in task.data:
            try:
                result = self.process_record(record)
            except Exception as exc:  # a bad record never fails the batch
                self.reject(task, self.reject_reason, record=public_record(record), error=exc,
                            source=str(record.get(self.filepath_key, "")))
                continue
            if result is not None:
                out.append(result)
        return task.derive(out)
