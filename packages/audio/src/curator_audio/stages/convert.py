"""AudioToDocumentStage: hand audio records (a manifest, transcripts, scores) to the text stages."""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from curator import ProcessingStage
from curator.stages.base import StageIO

from curator_audio.tasks import AudioBatch

__all__ = ["AudioToDocumentStage", "NON_SERIALIZABLE_KEYS"]

logger = logging.getLogger(__name__)

#: decoded audio and nested segment lists: left out of the documents, as in NeMo Curator (the
#: audio stays in its file; a document row is one record's metadata and text)
NON_SERIALIZABLE_KEYS = frozenset({"waveform", "audio", "audio_data", "audio_array", "segments"})


def _is_tensor(value: object) -> bool:
    kind = type(value)
    return kind.__name__ == "Tensor" and kind.__module__.startswith("torch")


class AudioToDocumentStage(ProcessingStage[AudioBatch, Any]):
    """Turn each :class:`~curator_audio.AudioBatch` into a ``curator_text.DocumentBatch`` with one
    row per record (a pandas DataFrame, as NeMo Curator builds), so text stages (filters,
    classifiers, writers) run on transcripts and audio metadata.

    Decoded audio (``waveform``, ``audio``, ``audio_data``, ``audio_array``), nested ``segments``
    and any other torch tensor are left out of the rows (a tensor is logged by key). The
    document batch keeps the audio batch's task id, dataset name, metadata and stage timings.
    NeMo Curator merges ``batch_size`` one-record tasks into one batch; an ``AudioBatch`` already
    holds many records, so each becomes one document batch (resume-safe: one output per input).
    """

    name = "AudioToDocumentStage"
    modality: ClassVar[str] = "audio"

    def inputs(self) -> StageIO:
        return ["data"], []

    def outputs(self) -> StageIO:
        return ["data"], ["*"]

    def _sanitize(self, record: dict[str, Any]) -> dict[str, Any]:
        cleaned = {}
        for key, value in record.items():
            if key in NON_SERIALIZABLE_KEYS:
                continue
            if _is_tensor(value):
                logger.warning("%s: leaving out key %r (a torch.Tensor) of a document row",
                               self.name, key)
                continue
            cleaned[key] = value
        return cleaned

    def process(self, task: AudioBatch) -> Any:
        import pandas as pd
        from curator_text.tasks import DocumentBatch

        frame = pd.DataFrame([self._sanitize(r) for r in task.data])
        return task.derive(frame, cls=DocumentBatch)
