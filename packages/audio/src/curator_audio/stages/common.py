"""What NeMo Curator's newer audio stages share: a record's waveform (decoded once, as given or
from its file), rejection reasons, and stages that work on a record or on each of its nested
``segments`` (``VADSegmentationStage(nested=True)``)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from curator.stages.filter import reject_filtered

from curator_audio.decode import AudioDecodeError, LazyAudio, load_audio
from curator_audio.stages.base import AudioRecordStage, public_record
from curator_audio.tasks import AudioBatch

__all__ = ["AudioInputError", "item_waveform", "SegmentAwareStage", "SEGMENTS"]

SEGMENTS = "segments"


class AudioInputError(ValueError):
    """A record whose audio cannot be used; ``reason`` names why in the rejected sink
    (``undecodable_audio``, ``missing_sample_rate``, ``too_short``, ``silent_audio``,
    ``sample_rate_mismatch``, ``no_speech``, ...)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def item_waveform(item: dict[str, Any], filepath_key: str = "audio_filepath",
                  waveform_key: str = "waveform", sample_rate_key: str = "sample_rate"
                  ) -> tuple[np.ndarray, int]:
    """The item's mono float32 waveform and rate: ``item[waveform_key]`` (NumPy or torch, 1-D or
    ``(channels, samples)``, channels averaged; a :class:`~curator_audio.decode.LazyAudio`
    decoded now) when present, else decoded from the file (honouring a segment's
    ``offset``/``duration``)."""
    wave = item.get(waveform_key)
    if isinstance(wave, LazyAudio):
        try:
            return wave.load(), wave.sample_rate
        except AudioDecodeError as exc:
            raise AudioInputError("undecodable_audio", str(exc)) from exc
        except FileNotFoundError as exc:
            raise AudioInputError("undecodable_audio", f"file not found: {exc}") from exc
    if wave is not None:
        sr = item.get(sample_rate_key)
        if sr is None or int(sr) <= 0:
            raise AudioInputError("missing_sample_rate",
                                  f"waveform present but {sample_rate_key!r} is {sr!r}")
        if hasattr(wave, "detach"):
            wave = wave.detach().cpu().numpy()
        wave = np.asarray(wave, dtype=np.float32)
        if wave.ndim == 2:
            wave = wave.mean(axis=0) if wave.shape[0] < wave.shape[1] else wave.mean(axis=1)
        return np.ascontiguousarray(wave, dtype=np.float32), int(sr)
    path = item.get(filepath_key)
    if not path:
        raise AudioInputError("missing_audio", f"no {waveform_key!r} and no {filepath_key!r}")
    offset = float(item.get("offset") or 0.0)
    duration = item.get("duration") if "offset" in item else None
    try:
        return load_audio(str(path), offset=offset,
                          duration=float(duration) if duration is not None else None)
    except AudioDecodeError as exc:
        raise AudioInputError("undecodable_audio", str(exc)) from exc
    except FileNotFoundError as exc:
        raise AudioInputError("undecodable_audio", f"{path}: file not found") from exc


class SegmentAwareStage(AudioRecordStage):
    """Base of the scoring / filtering stages that, like NeMo's, accept either a record or a
    record holding nested ``segments``: :meth:`score_one` sets fields on one item and returns
    whether it is kept. An item that is removed goes to the rejected sink (kind ``filtered``)
    when ``split`` is true (else it is dropped, as by every Curator filter); an item whose audio
    is unusable always goes there with its reason.
    A record left with no segments is removed as NeMo removes it."""

    split: bool = False
    filter_label: ClassVar[str] = ""

    def score_one(self, item: dict[str, Any]) -> tuple[bool, Any]:
        """Score one item in place; returns (kept, score shown in the sink)."""
        raise NotImplementedError

    def _one(self, task: AudioBatch, item: dict[str, Any], parent: dict[str, Any] | None
             ) -> bool:
        source = str((parent or item).get(self.filepath_key, item.get("original_file", "")))
        try:
            kept, score = self.score_one(item)
        except AudioInputError as exc:
            self.reject(task, exc.reason, record=public_record(item), error=str(exc),
                        source=source)
            return False
        except Exception as exc:  # a bad item never fails the batch
            self.reject(task, self.reject_reason, record=public_record(item), error=exc,
                        source=source)
            return False
        if not kept and self.split:
            rec = public_record(item)
            rec.pop(SEGMENTS, None)
            reject_filtered(self, task, rec, self.filter_label or self.name, score)
        return kept

    def process(self, task: AudioBatch) -> AudioBatch:
        out: list[dict[str, Any]] = []
        for record in task.data:
            if isinstance(record.get(SEGMENTS), list):
                kept = [s for s in record[SEGMENTS] if self._one(task, s, record)]
                if kept:
                    out.append({**record, SEGMENTS: kept})
            elif self._one(task, record, None):
                out.append(record)
        return task.derive(out)
